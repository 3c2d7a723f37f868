"""What does the "default" pipeline (fusion) buy over "minimal" (legalize only)?
Two workloads against NumPy, as times and ratios from one run:

- add + relu on 16 M float32 elements: memory-bound, fusion saves one pass
  over the intermediate (NumPy: `np.maximum(x + y, 0)`, two passes);
- the MLP 64x784 -> 512 -> 512 -> 10 of reference/ANCHORS.md (matmul + bias +
  relu twice, then matmul + bias): fusion folds each epilogue into its matmul;
  also shown with `-libs=blas`, which sends the matmul + bias chains to OpenBLAS.

  python benchmarks/fusion.py [--repeat 10]

Times are medians of `--repeat` calls after a warm-up, in milliseconds.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from _timing import timings

import tvmlite

HEADER = "from tvm.script import ir as I\nfrom tvm.script import relax as R\n\n"
ADD_RELU = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(
        x: R.Tensor((16777216,), dtype="float32"), y: R.Tensor((16777216,), dtype="float32")
    ) -> R.Tensor((16777216,), dtype="float32"):
        with R.dataflow():
            lv = R.add(x, y)
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv
"""
)
MLP = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(
        x: R.Tensor((64, 784), dtype="float32"),
        w1: R.Tensor((784, 512), dtype="float32"),
        b1: R.Tensor((512,), dtype="float32"),
        w2: R.Tensor((512, 512), dtype="float32"),
        b2: R.Tensor((512,), dtype="float32"),
        w3: R.Tensor((512, 10), dtype="float32"),
        b3: R.Tensor((10,), dtype="float32"),
    ) -> R.Tensor((64, 10), dtype="float32"):
        with R.dataflow():
            lv = R.matmul(x, w1)
            lv1 = R.add(lv, b1)
            lv2 = R.nn.relu(lv1)
            lv3 = R.matmul(lv2, w2)
            lv4 = R.add(lv3, b2)
            lv5 = R.nn.relu(lv4)
            lv6 = R.matmul(lv5, w3)
            gv = R.add(lv6, b3)
            R.output(gv)
        return gv
"""
)


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    return timings(fn, repeat)[0]


def mlp_numpy(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, *rest: Any) -> Any:
    b2, w3, b3 = rest
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return h @ w3 + b3


def report(title: str, numpy_fn: Callable[[], Any], variants: dict[str, Any], repeat: int) -> None:
    base = median_ms(numpy_fn, repeat)
    want = numpy_fn()
    print(title)
    print(f"  {'numpy':<28} {base:9.3f} ms  ratio  1.00")
    for name, fn in variants.items():
        np.testing.assert_allclose(fn(), want, rtol=1e-4, atol=1e-4)
        ms = median_ms(fn, repeat)
        print(f"  {name:<28} {ms:9.3f} ms  ratio {ms / base:5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    rng = np.random.default_rng(0)

    mod = tvmlite.parse(ADD_RELU)
    x, y = (rng.standard_normal(1 << 24).astype("float32") for _ in range(2))
    variants = {}
    for pipeline in ("minimal", "default"):
        f = tvmlite.build(mod, pipeline=pipeline)["main"]
        variants[f"tvmlite {pipeline}"] = lambda f=f: f(x, y)
    report("add + relu, 16 M float32", lambda: np.maximum(x + y, 0), variants, args.repeat)

    mod = tvmlite.parse(MLP)
    shapes = [(64, 784), (784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
    inputs = [(rng.standard_normal(s) * 0.05).astype("float32") for s in shapes]
    variants = {}
    configs = (("llvm", "minimal"), ("llvm", "default"), ("llvm -libs=blas", "default"))
    for target, pipeline in configs:
        f = tvmlite.build(mod, target=target, pipeline=pipeline)["main"]
        variants[f"tvmlite {pipeline} {target}"] = lambda f=f: f(*inputs)
    report("MLP 64x784 -> 512 -> 512 -> 10", lambda: mlp_numpy(*inputs), variants, args.repeat)


if __name__ == "__main__":
    main()
