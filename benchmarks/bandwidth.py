"""Do elementwise kernels run at memory bandwidth? GB/s of tvmlite's default
build on elementwise workloads (the add + relu and gelu * gate workloads of
run.py, and float32 math over 16M elements) against the machine's copy
bandwidth, from one run.

  python benchmarks/bandwidth.py [--rounds 7]

The copy bandwidth is measured two ways: NumPy's `np.copyto` (one thread) and
a tvmlite copy kernel (the default schedule: parallel, vectorized), both over
64 MB. Every contender's bytes are the least its result needs: each input read
and the output written once (workloads.json's "bytes" for the two workloads),
so 100 % of the copy bandwidth means the kernel moves no more than it must, as
fast as a copy does. gelu * gate also runs fused (`pipeline="default"`, one
kernel) beside the default build (a kernel per operator, each a pass over
memory). Outputs are checked against NumPy before timing; contenders are
interleaved round by round; GB/s from the median ms. Processor time (all the
process's threads) is reported too, and GB per processor-second: on a shared,
overloaded machine wall time mostly measures waiting for a core (and a parallel
kernel waits for its slowest thread), while the work a byte costs stays put: a
kernel moving its bytes for the processor time a copy needs is memory-bound.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from _timing import autorange, interleaved_samples
from _workloads import by_name, relative_error

import tvmlite

N = 1 << 24  # 16M float32: 64 MB, beyond every cache
COPY = """
@T.prim_func
def main(A: T.Buffer((16777216,), "float32"), B: T.Buffer((16777216,), "float32")):
    for i in range(16777216):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
"""
UNARY = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4096, 4096), "float32")) -> R.Tensor((4096, 4096), "float32"):
        with R.dataflow():
            y = R.{op}(x)
            R.output(y)
        return y
"""
MATH = {
    "exp": np.exp,
    "tanh": np.tanh,
    "log": np.log,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": lambda x: np.vectorize(math.erf, otypes=[np.float32])(x),
}


@dataclass
class Contender:
    name: str
    call: Callable[[], Any]
    bytes: int
    check: Callable[[], float] | None = None  # relative error against NumPy


def timed(call: Callable[[], Any], number: int, cpu: list[float]) -> Callable[[], float]:
    """A run of `number` calls: returns its wall ms per call, appends its
    processor ms per call to `cpu`."""

    def run() -> float:
        wall, processor = time.perf_counter(), time.process_time()
        for _ in range(number):
            call()
        cpu.append((time.process_time() - processor) * 1e3 / number)
        return (time.perf_counter() - wall) * 1e3 / number

    return run


def _main(text: str, **build: Any) -> Callable[..., Any]:
    return tvmlite.build(tvmlite.parse(text), **build)["main"]


def contenders() -> list[Contender]:
    rng = np.random.default_rng(0)
    src = rng.standard_normal(N).astype(np.float32)
    dst = np.empty_like(src)
    copy = _main(COPY)
    found = [
        Contender("copy, NumPy (1 thread)", lambda: np.copyto(dst, src), 2 * src.nbytes),
        Contender("copy, tvmlite", lambda: copy(src, dst), 2 * src.nbytes),
    ]
    for name, build in (("add_relu_16M", {}), ("gelu_mul_4M", {}), ("gelu_mul_4M", None)):
        w = by_name(name)
        fused = build is None
        main = _main(w.text, **({"pipeline": "default"} if fused else {}))
        inputs = w.make_inputs()
        ref = w.reference()(*inputs)
        label = f"{name}, fused" if fused else name
        found.append(
            Contender(
                label,
                lambda main=main, inputs=inputs: main(*inputs),
                w.bytes,
                lambda main=main, inputs=inputs, ref=ref: relative_error(
                    np.asarray(main(*inputs)), ref
                ),
            )
        )
    normal = (rng.standard_normal(N) * 2).astype(np.float32).reshape(4096, 4096)
    for op, reference in MATH.items():
        main = _main(UNARY.format(op=op))
        x = np.abs(normal) if op == "log" else normal
        found.append(
            Contender(
                f"{op}, 16M",
                lambda main=main, x=x: main(x),
                2 * x.nbytes,
                # the reference on a sample: NumPy has no erf of its own
                lambda main=main, x=x, reference=reference: relative_error(
                    np.asarray(main(x))[:16], reference(x[:16]).astype(np.float32)
                ),
            )
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-ms", type=float, default=200.0, help="least ms of a timed run")
    args = parser.parse_args()
    found = contenders()
    for c in found:
        if c.check is not None and (err := c.check()) > 1e-5:
            raise SystemExit(f"{c.name}: wrong result (relative error {err:.2g})")
    cpu: dict[str, list[float]] = {c.name: [] for c in found}
    runs = {c.name: timed(c.call, autorange(c.call, args.min_ms), cpu[c.name]) for c in found}
    times = interleaved_samples(runs, args.rounds)
    cpu_ms = {name: statistics.median(values[1:]) for name, values in cpu.items()}  # no warm-up
    gbs = {c.name: c.bytes / (times[c.name].median * 1e6) for c in found}
    numpy_copy, copy = gbs[found[0].name], gbs[found[1].name]
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; {os.cpu_count()} cores")
    print(f"ms per call: median of {args.rounds} interleaved rounds\n")
    print(
        "| contender | MB moved | ms | GB/s | / NumPy copy | / tvmlite copy "
        "| processor ms | GB per processor-s | / tvmlite copy |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    copy_work = found[1].bytes / cpu_ms[found[1].name]
    for c in found:
        ms, work = times[c.name].median, c.bytes / cpu_ms[c.name]
        print(
            f"| {c.name} | {c.bytes / 1e6:.0f} | {ms:.3g} | {gbs[c.name]:.3g} "
            f"| {gbs[c.name] / numpy_copy:.0%} | {gbs[c.name] / copy:.0%} "
            f"| {cpu_ms[c.name]:.3g} | {work / 1e6:.3g} | {work / copy_work:.0%} |"
        )


if __name__ == "__main__":
    main()
