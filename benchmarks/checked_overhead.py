"""What does a checked build (`tvmlite.build(mod, checked=True)`: every buffer
access bounds-checked) cost at run time? Reference workloads (texts copied from
reference/workloads into benchmarks/workloads/) built both ways; prints the
ratio checked / unchecked of the median call time, from one run.

  python benchmarks/checked_overhead.py [--rounds 15] [--pipeline minimal|default]

Each round calls the unchecked and the checked build once per workload
(interleaved, so load on the shared machine hits both alike); times are the
median over the rounds, in milliseconds. Both builds' outputs are compared
(they must be identical) before anything is timed. "checks" counts the bound
checks left in the workload's kernels: the pass drops those it proves cannot
fail. With none left both builds are the same machine code, and their ratio
only shows how noisy the machine is.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved
from _workloads import by_name

import tvmlite
from tvmlite.dsl import tir
from tvmlite.lowering.tir.signature import kernel_signature
from tvmlite.lowering.transform import PassContext

# a subset of the anchor workloads (benchmarks/workloads/), each quick to call
WORKLOADS = (
    "matmul_256",
    "conv2d_resnet_3x3",
    "softmax_256x4096",
    "layernorm_256x4096",
    "add_relu_16M",
    "mlp_64x784_512_512_10",
)


def asserts(mod: tvmlite.IRModule, pipeline: str, checked: bool) -> int:
    """Asserts in the kernels of a build (as `--emit tir` shows them)."""
    with PassContext(config={"tir.instrument_bound_checkers": checked}):
        lowered = tvmlite.lower(mod, "llvm", pipeline)
    return sum(
        len(kernel_signature(f, name, f.body).errors)
        for name, f in lowered.functions.items()
        if isinstance(f, tir.PrimFunc)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--pipeline", default="minimal")
    args = ap.parse_args()
    print(f"checked / unchecked, pipeline {args.pipeline}, median of {args.rounds} rounds (ms)")
    print(f"  {'workload':<24} {'unchecked':>10} {'checked':>10} {'ratio':>6} {'checks':>7}")
    ratios = []
    for name in WORKLOADS:
        workload = by_name(name)
        mod = tvmlite.parse(workload.text)
        inputs = workload.make_inputs()
        plain = tvmlite.build(mod, pipeline=args.pipeline, cache=False)["main"]
        checked = tvmlite.build(mod, pipeline=args.pipeline, checked=True, cache=False)["main"]
        np.testing.assert_array_equal(checked(*inputs), plain(*inputs))
        contenders = {"unchecked": plain, "checked": checked}
        times = interleaved(
            {key: lambda f=f, xs=inputs: f(*xs) for key, f in contenders.items()}, args.rounds
        )
        ratio = times["checked"] / times["unchecked"]
        ratios.append(ratio)
        print(
            f"  {name:<24} {times['unchecked']:10.3f} {times['checked']:10.3f} {ratio:6.2f}"
            f" {asserts(mod, args.pipeline, True) - asserts(mod, args.pipeline, False):7d}"
        )
    geomean = float(np.exp(np.mean(np.log(ratios))))
    print(f"  geometric mean of the ratios: {geomean:.2f}")


if __name__ == "__main__":
    main()
