"""What do the "default" pipeline (fusion) and "fast" (build's default: fusion
after graph rewrites) buy over "minimal" (legalize only)?
Two anchor workloads (benchmarks/workloads/) against NumPy, as times and
ratios from one run:

- add + relu on 16 M float32 elements: memory-bound, fusion saves one pass
  over the intermediate (NumPy: `np.maximum(x + y, 0)`, two passes);
- the MLP 64x784 -> 512 -> 512 -> 10 (matmul + bias + relu twice, then
  matmul + bias): fusion folds each epilogue into its matmul; also shown with
  `-libs=blas`, which sends the matmul + bias chains to OpenBLAS.

  python benchmarks/fusion.py [--repeat 10]

Times are medians of `--repeat` calls after a warm-up, in milliseconds.
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
from _timing import timings
from _workloads import by_name

import tvmlite

CONFIGS = {
    "add_relu_16M": (("llvm", "minimal"), ("llvm", "default"), ("llvm", "fast")),
    "mlp_64x784_512_512_10": (
        ("llvm", "minimal"),
        ("llvm", "default"),
        ("llvm", "fast"),
        ("llvm -libs=blas", "fast"),
    ),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    for name, configs in CONFIGS.items():
        workload = by_name(name)
        mod = tvmlite.parse(workload.text)
        inputs = workload.make_inputs()
        reference = workload.reference()
        want = reference(*inputs)
        base = timings(partial(reference, *inputs), args.repeat)[0]
        print(workload.desc)
        print(f"  {'numpy':<32} {base:9.3f} ms  ratio  1.00")
        for target, pipeline in configs:
            f = tvmlite.build(mod, target=target, pipeline=pipeline)["main"]
            np.testing.assert_allclose(f(*inputs), want, rtol=1e-4, atol=1e-4)
            ms = timings(partial(f, *inputs), args.repeat)[0]
            print(f"  {f'tvmlite {pipeline} {target}':<32} {ms:9.3f} ms  ratio {ms / base:5.2f}")


if __name__ == "__main__":
    main()
