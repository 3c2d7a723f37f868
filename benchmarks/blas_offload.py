"""Does offloading R.matmul to BLAS reach NumPy's speed? One float32 matmul
(1024x1024 by default) built with `target="llvm -libs=blas"`, against NumPy's
`x @ w` and against the same module without BLAS (LLVM kernels), as ratios
from one run.

  python benchmarks/blas_offload.py [--n 1024] [--repeat 20] [--dtype float32]

Both sides call the very same OpenBLAS (the one NumPy ships), in the same
process, so thread count and core type (OPENBLAS_NUM_THREADS,
OPENBLAS_CORETYPE) are the same for both. Times are the median of `--repeat`
calls after a warm-up, in milliseconds; the best is shown too.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import timings

import tvmlite

MODULE = """from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(
        x: R.Tensor(({n}, {n}), dtype="{dtype}"), w: R.Tensor(({n}, {n}), dtype="{dtype}")
    ) -> R.Tensor(({n}, {n}), dtype="{dtype}"):
        with R.dataflow():
            gv = R.matmul(x, w)
            R.output(gv)
        return gv
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--llvm", action="store_true", help="also time the LLVM kernel (slow)")
    args = ap.parse_args()
    mod = tvmlite.parse(MODULE.format(n=args.n, dtype=args.dtype))
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal((args.n, args.n)).astype(args.dtype) for _ in range(2))
    blas = tvmlite.build(mod, target="llvm -libs=blas")["main"]
    np.testing.assert_allclose(blas(x, w), x @ w, rtol=1e-3, atol=1e-3)
    rows = [("numpy x @ w", timings(lambda: x @ w, args.repeat))]
    rows.append(("tvmlite -libs=blas", timings(lambda: blas(x, w), args.repeat)))
    if args.llvm:
        plain = tvmlite.build(mod, target="llvm", pipeline="default")["main"]
        rows.append(("tvmlite llvm", timings(lambda: plain(x, w), max(3, args.repeat // 5))))
    base = rows[0][1][0]
    print(f"{args.n}x{args.n} {args.dtype} matmul, median of {args.repeat} (ms)")
    for name, (median, best) in rows:
        print(f"  {name:<20} {median:9.3f}  best {best:9.3f}  ratio {median / base:6.2f}")


if __name__ == "__main__":
    main()
