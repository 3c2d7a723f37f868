"""What do `T.parallel` and `T.vectorized` buy, and what does a parallel loop
cost to start? Times and ratios from one run:

- launch: a kernel running LAUNCHES parallel loops in a row, each with one
  trivial iteration per pool thread: time per loop, the thread pool's launch
  cost with its workers awake (aim: under 5 us); the same with one task of a
  couple of microseconds per thread, against that task alone (what a launch
  costs when every thread takes part); then single launches 5 ms apart, which
  find the workers asleep (a futex wake);
- add + relu on 16 M float32 elements, written by hand in TVMScript: serial
  loops, against a parallel outer loop with a vectorized inner one, both as a
  prim function writing into a given array (NumPy: `np.add(x, y, out=z)` then
  `np.maximum(z, 0, out=z)`) and as a graph function that allocates its output
  (NumPy: `np.maximum(x + y, 0)`). Target: <= 0.5x NumPy.

  python benchmarks/parallel.py [--rounds 15]     # TVMLITE_NUM_THREADS=k to size the pool

Every contender's output is checked against NumPy before it is timed; rounds
interleave the contenders (one call each per round), times are medians in ms.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _timing import interleaved

import tvmlite

N = 16777216
LAUNCHES = 2000
LAUNCH = """
@T.prim_func
def main(A: T.Buffer((THREADS,), "int32")):
    for r in range(LAUNCHES):
        for i in T.parallel(THREADS):
            A[i] = A[i] + 1
"""
# One task per thread of WORK dependent multiply-adds (a couple of microseconds),
# against the same work for one task on one thread: the difference is what a
# launch costs when every thread takes part.
WORK = 1000
BUSY = """
@T.prim_func
def main(A: T.Buffer((THREADS,), "float32")):
    for r in range(LAUNCHES):
        for i in KIND(THREADS):
            for k in range(WORK):
                A[i] = A[i] * T.float32(0.999) + T.float32(1)
"""
KERNEL = """
    @T.prim_func
    def add_relu(
        A: T.Buffer((16777216,), "float32"),
        B: T.Buffer((16777216,), "float32"),
        C: T.Buffer((16777216,), "float32"),
    ):
        T.func_attr({"tir.noalias": True})
        for io in OUTER(16384):
            for ii in INNER(1024):
                C[io * 1024 + ii] = T.max(A[io * 1024 + ii] + B[io * 1024 + ii], T.float32(0))
"""
GRAPH = (
    """
@I.ir_module
class Module:"""
    + KERNEL
    + """
    @R.function
    def main(
        x: R.Tensor((16777216,), "float32"), y: R.Tensor((16777216,), "float32")
    ) -> R.Tensor((16777216,), "float32"):
        cls = Module
        with R.dataflow():
            z = R.call_tir(cls.add_relu, (x, y), out_sinfo=R.Tensor((16777216,), "float32"))
            R.output(z)
        return z
"""
)


def pool_threads() -> int:
    """The pool's size as the generated code decides it (docs/threads.md)."""
    text = os.environ.get("TVMLITE_NUM_THREADS", "")
    if text.isdigit() and int(text) >= 1:
        return min(int(text), 1024)
    return len(os.sched_getaffinity(0))


def launch_cost(rounds: int) -> None:
    threads = pool_threads()
    source = LAUNCH.replace("THREADS", str(threads)).replace("LAUNCHES", str(LAUNCHES))
    fn = tvmlite.build(tvmlite.parse(source), cache=False)["main"]
    a = np.zeros(threads, "int32")
    fn(a)
    assert np.array_equal(a, np.full(threads, LAUNCHES)), "launch kernel is wrong"
    hot = interleaved({"hot": lambda: fn(a)}, rounds)["hot"] / LAUNCHES * 1e3
    single = tvmlite.build(
        tvmlite.parse(LAUNCH.replace("THREADS", str(threads)).replace("LAUNCHES", "1")),
        cache=False,
    )["main"]
    colds = []
    for _ in range(rounds):
        time.sleep(0.005)  # longer than the workers spin: they sleep on their futex
        start = time.perf_counter()
        single(a)
        colds.append((time.perf_counter() - start) * 1e6)
    busy = {}
    for kind, tasks in (("T.parallel", threads), ("range", 1)):
        text = BUSY.replace("KIND", kind).replace("THREADS", str(tasks))
        text = text.replace("LAUNCHES", str(LAUNCHES)).replace("WORK", str(WORK))
        busy[kind] = tvmlite.build(tvmlite.parse(text), cache=False)["main"]
    spread, one = np.zeros(threads, "float32"), np.zeros(1, "float32")
    busy["T.parallel"](spread)
    busy["range"](one)
    assert np.array_equal(spread, np.full(threads, one[0])), "busy kernel is wrong"
    times = interleaved(
        {"parallel": lambda: busy["T.parallel"](spread), "task": lambda: busy["range"](one)},
        rounds,
    )
    per_launch, per_task = (times[k] / LAUNCHES * 1e3 for k in ("parallel", "task"))
    print(f"pool threads: {threads}")
    print(f"launch, trivial tasks, workers awake: {hot:8.2f} us per parallel loop (aim < 5 us)")
    print(
        f"launch, one {per_task:.2f} us task per thread: {per_launch:8.2f} us per loop, "
        f"{per_launch - per_task:.2f} us over the task itself"
    )
    print(f"call with one launch, workers asleep: {float(np.median(colds)):8.1f} us")


def add_relu(rounds: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype("float32")
    y = rng.standard_normal(N).astype("float32")
    want = np.maximum(x + y, 0)
    kinds = {
        "serial loops": ("range", "range"),
        "parallel + vectorized": ("T.parallel", "T.vectorized"),
    }
    z = np.empty(N, "float32")
    contenders = {}
    for label, (outer, inner) in kinds.items():
        text = GRAPH.replace("OUTER", outer).replace("INNER", inner)
        ex = tvmlite.build(tvmlite.parse(text), cache=False)
        kernel, graph = ex["add_relu"], ex["main"]
        z.fill(np.nan)
        kernel(x, y, z)
        assert np.array_equal(z, want), label
        assert np.array_equal(graph(x, y), want), label
        contenders[f"{label}, into z"] = lambda k=kernel: k(x, y, z)
        contenders[f"{label}, allocating"] = lambda g=graph: g(x, y)

    def numpy_into() -> None:
        np.add(x, y, out=z)
        np.maximum(z, 0, out=z)

    numpy_into()
    assert np.array_equal(z, want)
    contenders["numpy, into z"] = numpy_into
    contenders["numpy, allocating"] = lambda: np.maximum(x + y, 0)
    times = interleaved(contenders, rounds)
    print(f"\nadd + relu, {N} float32 ({rounds} rounds, median ms, ratio to NumPy alike)")
    for name, ms in times.items():
        base = times["numpy, into z" if name.endswith("into z") else "numpy, allocating"]
        print(f"  {name:36s} {ms:8.2f} ms  {ms / base:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    launch_cost(args.rounds)
    add_relu(args.rounds)


if __name__ == "__main__":
    main()
