"""How does build time grow with the size of a module? `tvmlite.build(mod,
cache=False)` of generated modules of n bindings in one graph function
(n = 250 ... 4000) and of n graph functions (250 ... 2000), with the "minimal"
pipeline (`build`'s default) and the "default" (fusing) one; TVM's
`tvm.compile(mod, target="llvm")` of the same text, interleaved round by round,
when a Python with apache-tvm is at hand; the exponent fitted to each (time ~
n^k: k = 1 is linear).

  python benchmarks/compile_scaling.py [--sizes 250 500 1000 2000 4000]
      [--functions 250 500 1000 2000] [--kinds mix elementwise matmul reshape functions]
      [--pipelines minimal default] [--repeat 1] [--max-seconds 60]
      [--tvm-python /tmp/tvmref/bin/python | --no-tvm]

The workloads are in `_scaling_graphs.py`. Every build's result (tvmlite's and
TVM's) is checked against NumPy before its time counts; times are in ms, the
best of `--repeat` builds. tvmlite's columns, from `Executable.timings`: the
passes (`tvmlite.lower`, TIR lowering included), kernels and host code as LLVM
IR (`codegen`), printed and parsed by LLVM, optimized, compiled to machine
code, linked into callables; the total is the whole `build` call (the parse of
the text is not timed, for either compiler), `cpu` the processor time it took
(on a shared machine the steadier figure: waiting for a core does not count)
and `code` the machine code built, in KB (the executable sections of the
build's object, emitted once more for this, untimed). TVM runs in a worker process
(`_tvm_worker.py`) of `--tvm-python` (default: this Python if it imports tvm,
else /tmp/tvmref/bin/python if it exists), timed the same two ways; it is used
for the "minimal" pipeline only, which is what its default build does
(legalize, no fusion), and `tvm/tl` is its cpu time over tvmlite's. A workload
stops growing once a build takes longer than `--max-seconds`. The exponents
are fitted to the cpu times.

With a copy of another tree first on PYTHONPATH (docs/benchmarks.md) the script
measures that tree's tvmlite: a before/after table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import numpy as np
from _scaling_graphs import WORKLOADS, Array

import tvmlite
from tvmlite.lowering.codegen import target

STAGES = {  # column: key of Executable.timings
    "codegen": "codegen",
    "parse": "LLVM parse",
    "optimize": "LLVM optimization",
    "machine": "machine code",
    "link": "link",
}
DEFAULT_TVM = Path("/tmp/tvmref/bin/python")


def build_ms(text: str, pipeline: str) -> tuple[dict[str, float], Any]:
    """ms of `build` (total, passes, the stages of code generation, cpu)."""
    mod = tvmlite.parse(text)
    start, cpu = time.perf_counter(), time.process_time()
    ex = tvmlite.build(mod, pipeline=pipeline, cache=False)
    cpu = (time.process_time() - cpu) * 1e3
    total = (time.perf_counter() - start) * 1e3
    ms = {col: ex.timings.get(key, 0.0) for col, key in STAGES.items()}
    return {"passes": total - sum(ex.timings.values()), **ms, "total": total, "cpu": cpu}, ex


def code_kb(ex: Any) -> float:
    """KB of machine code in the executable sections of `ex`'s object."""
    image = ex.image  # the JitModule: its optimized LLVM module
    obj = target.host_target_machine(image.machine).emit_object(image.module)
    sections = llvm.ObjectFileRef.from_data(obj).sections()
    return sum(s.size() for s in sections if s.is_text()) / 1024


class TVM:
    """A worker process timing `tvm.compile` (see `_tvm_worker.py`)."""

    def __init__(self, python: str) -> None:
        worker = Path(__file__).with_name("_tvm_worker.py")
        self.proc = subprocess.Popen(
            [python, str(worker)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.tmp = tempfile.TemporaryDirectory(prefix="tvmlite-scaling-")

    def compile_ms(self, text: str, inputs: list[Array], want: Array) -> tuple[float, float]:
        """(ms, cpu ms) of `tvm.compile` of `text`, its result checked."""
        folder = Path(self.tmp.name)
        (folder / "mod.py").write_text(text)
        np.savez(folder / "data.npz", want=want, **{f"in{k}": a for k, a in enumerate(inputs)})
        request = {"text": str(folder / "mod.py"), "data": str(folder / "data.npz")}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline() or '{"error": "the worker died"}')
        if "error" in answer:
            raise SystemExit(f"TVM: {answer['error']}")
        return answer["ms"], answer["cpu"]


def find_tvm(args: Any) -> TVM | None:
    if args.no_tvm:
        return None
    python = args.tvm_python
    if python is None and importlib.util.find_spec("tvm") is not None:
        python = sys.executable
    if python is None and DEFAULT_TVM.exists():
        python = str(DEFAULT_TVM)
    return TVM(python) if python else None


def fit_exponent(sizes: list[int], times: list[float]) -> float | None:
    """k of the least-squares fit log t = k log n + c."""
    if len(sizes) < 2:
        return None
    xs, ys = [math.log(s) for s in sizes], [math.log(t) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den


def check(ex: Any, inputs: list[Array], want: Array, what: str) -> None:
    got = ex["main"](*inputs)
    if not np.allclose(got, want, rtol=2e-3, atol=2e-3):
        worst = float(np.max(np.abs(got - want)))
        raise SystemExit(f"{what}: wrong result (max abs error {worst:.3g})")


def run_workload(kind: str, sizes: list[int], pipeline: str, args: Any, tvm: TVM | None) -> None:
    tvm = tvm if pipeline == "minimal" else None
    ours = ["passes", *STAGES, "total", "cpu"]
    columns = [*ours, "code"] + (["tvm", "tvm cpu", "tvm/tl"] if tvm else [])
    print(f"\n{kind}, pipeline={pipeline}\n{'n':>5} " + " ".join(f"{c:>8}" for c in columns))
    done: list[int] = []
    totals: list[float] = []
    refs: list[float] = []
    for n in sizes:
        text, inputs, want = WORKLOADS[kind](n)
        best: dict[str, float] | None = None
        ref: tuple[float, float] | None = None
        for _ in range(args.repeat):
            ms, ex = build_ms(text, pipeline)
            check(ex, inputs, want, f"{kind} n={n} {pipeline}")
            best = ms if best is None or ms["cpu"] < best["cpu"] else best
            if tvm is not None:
                t = tvm.compile_ms(text, inputs, want)
                ref = t if ref is None or t[1] < ref[1] else ref
        assert best is not None
        row = f"{n:5d} " + " ".join(f"{best[c]:8.0f}" for c in ours) + f" {code_kb(ex):8.1f}"
        if ref is not None:
            row += f" {ref[0]:8.0f} {ref[1]:8.0f} {ref[1] / best['cpu']:8.2f}"
            refs.append(ref[1])
        print(row, flush=True)
        done.append(n)
        totals.append(best["cpu"])
        if best["total"] > args.max_seconds * 1e3:
            print(f"  (stopped: over {args.max_seconds} s)")
            break
    for who, times in (("tvmlite", totals), ("TVM", refs)):
        k = fit_exponent(done[: len(times)], times)
        if k is not None:
            print(f"  fitted exponent, {who}: {k:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000, 4000])
    ap.add_argument("--functions", type=int, nargs="+", default=[250, 500, 1000, 2000])
    ap.add_argument("--kinds", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--pipelines", nargs="+", default=["minimal", "default"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--tvm-python", default=None)
    ap.add_argument("--no-tvm", action="store_true")
    args = ap.parse_args()
    tvm = find_tvm(args)
    build_ms(WORKLOADS["elementwise"](2)[0], "minimal")  # warm up: LLVM, support library
    for kind in args.kinds:
        sizes = args.functions if kind == "functions" else args.sizes
        for pipeline in args.pipelines:
            run_workload(kind, sizes, pipeline, args, tvm)


if __name__ == "__main__":
    main()
