"""tvmlite's default build against NumPy and TVM 0.27's default build on the
anchor workloads (benchmarks/workloads/workloads.json), as ratios from one run.

  python benchmarks/run.py [--only NAME]... [--rounds 5] [--json out.json] [--no-tvm]
                           [--tvm-python /tmp/tvmref/bin/python] [--peak GFLOPS] [--unscheduled]

Contenders, each in a worker process of its own (benchmarks/_worker.py):
- NumPy on one BLAS thread and on every core (OPENBLAS_NUM_THREADS set before
  NumPy loads, hence the processes); NumPy's figure is the faster of the two,
  round by round. Workloads that call no BLAS run NumPy once (both would run
  the same code, and the faster of two draws would only flatter NumPy);
- tvmlite: `tvmlite.build(tvmlite.parse(text))`, the default build;
- with `--unscheduled`, "unscheduled": the same with DefaultCPUSchedule off
  (the PassContext config `tir.default_cpu_schedule`), its plain loop nests;
- TVM, when `--tvm-python` (default: this interpreter) can import tvm and
  `--no-tvm` is not given: `tvm.compile(mod, target=Target({"kind": "llvm",
  "mcpu": <host>}))` (TVM 0.27 refuses "llvm -mcpu=..." strings) run by the
  Relax VM.

Per workload: every contender compiles the text (`--compile-repeat` times,
alternating tvmlite and TVM; min and median reported), runs once and its
output is checked against NumPy on one thread (error relative to the largest
reference magnitude, at most sqrt(eps) of the dtype) before it is timed; a
wrong or failed contender is not timed and the run exits with status 1.
Timed runs are interleaved round by round (the order rotating), each run a
batch of calls lasting at least `--min-ms`; times are ms per call, median
(min) over `--rounds` rounds. GFLOP/s and % of the machine's fp32 peak on
all cores (`--peak`, else measured: cores x the FMA peak of one core that
benchmarks/_peak.py measures) where workloads.json gives flops, GB/s of the
bytes it gives otherwise. Targets are issue 11's, for tvmlite's default build.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _peak import fma_peak
from _timing import Summary, interleaved_samples
from _workloads import Workload, load, relative_error, tolerance

HERE = Path(__file__).parent
# name prefix -> (tvmlite / NumPy at most, tvmlite / TVM default build at most), issue 11
TARGETS: tuple[tuple[str, float, float | None], ...] = (
    ("matmul", 1.5, 0.05),
    ("bmm", 1.5, 0.05),
    ("conv2d", 1.0, 0.05),
    ("mlp", 1.2, 0.05),
    ("softmax", 0.7, None),
    ("layernorm", 0.7, None),
    ("add_relu", 0.5, None),
    ("add", 1.0, None),
)
COMPILE_TARGET = 2.0  # tvmlite's build time at most twice TVM's on the same module
REFERENCE = "numpy-1t"
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class WorkerError(Exception):
    """A request the worker answered with an error (a failed build, a crash)."""


class WorkerProcess:
    """A worker script (benchmarks/_worker.py unless `script` names another speaking
    its protocol) running one contender; `ask` sends a request and waits for its
    answer."""

    def __init__(
        self,
        label: str,
        kind: str,
        python: str,
        env: dict[str, str],
        script: str = "_worker.py",
    ) -> None:
        self.label = label
        self.proc = subprocess.Popen(
            [python, str(HERE / script), kind],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, **env},
            text=True,
        )
        self.info: dict[str, Any] = self._reply()

    def _reply(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(f"{self.label} worker exited (status {self.proc.wait()})")
        reply = json.loads(line)
        if not reply["ok"]:
            raise WorkerError(reply["error"])
        return reply["value"]

    def ask(self, cmd: str, **kw: Any) -> Any:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"cmd": cmd, **kw}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise WorkerError(f"{self.label} worker exited (status {self.proc.wait()})") from exc
        return self._reply()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write('{"cmd": "quit"}\n')
            self.proc.stdin.close()
            self.proc.wait()


@dataclass
class Result:
    """One workload's measurements."""

    workload: Workload
    compile_ms: dict[str, Summary] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)  # relative error vs the reference
    tolerance: float = 0.0  # the largest relative error allowed (from the output's dtype)
    failures: dict[str, str] = field(default_factory=dict)  # label -> why it was not timed
    times: dict[str, Summary] = field(default_factory=dict)

    @property
    def numpy(self) -> Summary:
        """NumPy's figure: the faster NumPy of each round."""
        runs = [s.samples for label, s in self.times.items() if label.startswith("numpy")]
        return Summary(tuple(min(r) for r in zip(*runs, strict=True)))

    def ratio(self, label: str, base: Summary | None) -> float | None:
        if label not in self.times or base is None:
            return None
        return self.times[label].median / base.median


def measure(
    w: Workload, workers: dict[str, WorkerProcess], args: argparse.Namespace, tmp: Path
) -> Result:
    """Build, check and time one workload on every contender."""
    result = Result(w)

    def each(step: str, cmd: str, **kw: Any) -> dict[str, Any]:
        """Ask every contender still in the race; one that fails drops out."""
        answers = {}
        for label, worker in workers.items():
            if label in result.failures or (label != REFERENCE and not wanted(label)):
                continue
            try:
                answers[label] = worker.ask(cmd, **{k: v(label) for k, v in kw.items()})
            except WorkerError as exc:
                result.failures[label] = f"{step} failed: {exc}"
        return answers

    def wanted(label: str) -> bool:
        # without BLAS, NumPy on more threads runs the very same code
        return w.uses_blas or not label.startswith("numpy")

    each("load", "load", name=lambda _: w.name, seed=lambda _: args.seed)
    builds: dict[str, list[float]] = {}
    for _ in range(args.compile_repeat + 1):  # the first build of each warms its process up
        for label, ms in each("build", "compile").items():
            builds.setdefault(label, []).append(ms)
    result.compile_ms = {
        label: Summary(tuple(values[1:])) for label, values in builds.items() if values[0]
    }
    each("run", "run", out=lambda label: str(tmp / f"{label}.npy"))
    if REFERENCE in result.failures:
        raise SystemExit(f"{w.name}: the NumPy reference {result.failures[REFERENCE]}")
    ref = np.load(tmp / f"{REFERENCE}.npy")
    result.tolerance = tolerance(ref.dtype)
    for label in list(workers):
        if label == REFERENCE or label in result.failures or not wanted(label):
            continue
        result.errors[label] = err = relative_error(np.load(tmp / f"{label}.npy"), ref)
        if err > result.tolerance:
            result.failures[label] = f"WRONG: relative error {err:.2g}"
    timed = each("calibration", "calibrate", min_ms=lambda _: args.min_ms)
    runs = {label: lambda label=label: workers[label].ask("time") for label in timed}
    try:  # calibrating ran every contender: no warm-up round
        result.times = interleaved_samples(runs, args.rounds, warmup=False)
    except WorkerError as exc:
        raise SystemExit(f"{w.name}: {exc}") from exc
    return result


def start_workers(args: argparse.Namespace, notes: list[str]) -> dict[str, WorkerProcess]:
    """The contenders' processes; a note for each left out."""
    threads = sorted({1, os.cpu_count() or 1})
    specs = [
        (f"numpy-{n}t", "numpy", sys.executable, {v: str(n) for v in BLAS_THREAD_VARS})
        for n in threads
    ]
    specs.append(("tvmlite", "tvmlite", sys.executable, {}))
    if args.unscheduled:
        specs.append(("unscheduled", "tvmlite-unscheduled", sys.executable, {}))
    if args.no_tvm:
        notes.append("TVM: left out (--no-tvm)")
    else:
        specs.append(("tvm", "tvm", args.tvm_python or sys.executable, {}))
    workers = {}
    for label, kind, python, env in specs:
        try:
            workers[label] = WorkerProcess(label, kind, python, env)
        except (WorkerError, OSError) as exc:
            if kind != "tvm":
                raise SystemExit(f"{label}: cannot start: {exc}") from exc
            notes.append(f"TVM: not importable by {python} ({exc})")
    return workers


def fmt(x: float | None, unit: str = "") -> str:
    if x is None:
        return "-"
    return f"{x:.3g}{unit}" if abs(x) < 1000 else f"{x:.0f}{unit}"


def time_cell(r: Result, label: str) -> str:
    if label in r.failures:
        return r.failures[label].split(":")[0]
    s = r.numpy if label == "numpy" else r.times.get(label)
    return "-" if s is None else f"{fmt(s.median)} ({fmt(s.best)})"


def target_of(w: Workload) -> tuple[float, float | None] | None:
    for prefix, vs_numpy, vs_tvm in TARGETS:
        if w.name.startswith(prefix):
            return vs_numpy, vs_tvm
    return None


def verdict(r: Result) -> tuple[str, str]:
    """(the target, 'pass' or 'miss') for tvmlite's row."""
    target = target_of(r.workload)
    if target is None:
        return "-", "-"
    vs_numpy, vs_tvm = target
    text = f"<= {vs_numpy}x NumPy"
    ok = (ratio := r.ratio("tvmlite", r.numpy)) is not None and ratio <= vs_numpy
    if vs_tvm is not None and "tvm" in r.times:
        text += f", <= {vs_tvm}x TVM"
        ok = ok and (ratio := r.ratio("tvmlite", r.times["tvm"])) is not None and ratio <= vs_tvm
    return text, "pass" if ok else "miss"


def speed_cells(r: Result, peak: float) -> tuple[str, str]:
    """tvmlite's throughput (GFLOP/s, or GB/s without flops) and % of the peak."""
    s = r.times.get("tvmlite")
    if s is None:
        return "-", "-"
    w = r.workload
    if w.flops:
        gflops = w.flops / (s.median * 1e6)
        return f"{gflops:.3g} GFLOP/s", f"{100 * gflops / peak:.2g}%"
    return f"{w.bytes / (s.median * 1e6):.3g} GB/s", "-"


def table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("---" for _ in rows[0]) + "|")
    return "\n".join(lines)


def heading(infos: dict[str, Any], notes: list[str], args: argparse.Namespace) -> str:
    threads = " and ".join(label[6:-1] for label in infos if label.startswith("numpy-"))
    lines = [
        f"tvmlite {infos['tvmlite']['tvmlite']} default build; NumPy {infos[REFERENCE]['numpy']}"
        f" (the faster on {threads} BLAS threads, round by round)"
        + (
            f"; TVM {infos['tvm']['tvm']} default build, {infos['tvm']['target']}"
            if "tvm" in infos
            else ""
        ),
        f"ms per call: median (min) of {args.rounds} interleaved rounds;"
        f" build ms (parse + build): median (min) of {args.compile_repeat}",
        *notes,
        "",
    ]
    return "\n".join(lines)


def report(results: list[Result], labels: list[str], args: argparse.Namespace) -> str:
    has_tvm = "tvm" in labels
    plain = ["unscheduled"] if "unscheduled" in labels else []
    head = ["workload", "NumPy ms", "tvmlite ms"] + (["TVM ms"] if has_tvm else [])
    head += [f"{label} ms" for label in plain]
    head += ["tvmlite / NumPy"] + (["TVM / NumPy", "tvmlite / TVM"] if has_tvm else [])
    head += [f"{label} / NumPy" for label in plain]
    head += ["tvmlite speed", f"% of peak ({args.peak:.0f})", "target", "met"]
    rows = [head]
    for r in results:
        row = [r.workload.name, time_cell(r, "numpy"), time_cell(r, "tvmlite")]
        row += [time_cell(r, "tvm")] if has_tvm else []
        row += [time_cell(r, label) for label in plain]
        row.append(fmt(r.ratio("tvmlite", r.numpy), "x"))
        if has_tvm:
            row.append(fmt(r.ratio("tvm", r.numpy), "x"))
            row.append(fmt(r.ratio("tvmlite", r.times.get("tvm")), "x"))
        row += [fmt(r.ratio(label, r.numpy), "x") for label in plain]
        rows.append(row + [*speed_cells(r, args.peak), *verdict(r)])
    out = [table(rows), ""]
    rows = [["workload", "tvmlite build ms", "TVM build ms", "tvmlite / TVM", "target", "met"]]
    for r in results:
        mine, theirs = r.compile_ms.get("tvmlite"), r.compile_ms.get("tvm")
        ratio = mine.median / theirs.median if mine and theirs else None
        met = "-" if ratio is None else ("pass" if ratio <= COMPILE_TARGET else "miss")
        cells = [f"{fmt(s.median)} ({fmt(s.best)})" if s else "-" for s in (mine, theirs)]
        rows.append([r.workload.name, *cells, fmt(ratio, "x"), f"<= {COMPILE_TARGET:g}x", met])
    out += [table(rows), ""]
    checked = [label for label in labels if label != REFERENCE]
    rows = [["workload", *[f"{label} error" for label in checked], "tolerance"]]
    for r in results:
        errs = [fmt(r.errors.get(label)) for label in checked]
        rows.append([r.workload.name, *errs, f"{r.tolerance:.2g}"])
    out += [table(rows)]
    return "\n".join(out)


def as_json(results: list[Result], infos: dict[str, Any], args: argparse.Namespace) -> Any:
    def summary(s: Summary) -> dict[str, Any]:
        return {"median_ms": s.median, "min_ms": s.best, "samples_ms": list(s.samples)}

    return {
        "rounds": args.rounds,
        "peak_gflops": args.peak,
        "contenders": infos,
        "workloads": [
            {
                "name": r.workload.name,
                "flops": r.workload.flops,
                "bytes": r.workload.bytes,
                "times": {label: summary(s) for label, s in r.times.items()},
                "numpy": summary(r.numpy) if r.times else None,
                "compile": {label: summary(s) for label, s in r.compile_ms.items()},
                "checks": {"tolerance": r.tolerance, "relative_error": r.errors},
                "failures": r.failures,
                **dict(zip(("target", "met"), verdict(r), strict=True)),
            }
            for r in results
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", metavar="NAME", help="this workload (repeatable)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--compile-repeat", type=int, default=3)
    ap.add_argument("--min-ms", type=float, default=5.0, help="shortest timed run (a batch)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the results here")
    ap.add_argument("--no-tvm", action="store_true")
    ap.add_argument(
        "--unscheduled", action="store_true", help="also tvmlite without DefaultCPUSchedule"
    )
    ap.add_argument("--tvm-python", metavar="PYTHON", help="interpreter that imports tvm")
    ap.add_argument("--peak", type=float, help="machine fp32 peak, GFLOP/s (default: measure)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.rounds < 1 or args.compile_repeat < 1:
        ap.error("--rounds and --compile-repeat must be at least 1")
    workloads = load()
    if args.only:
        unknown = sorted(set(args.only) - {w.name for w in workloads})
        if unknown:
            ap.error(f"unknown workload {', '.join(unknown)}; known: {[w.name for w in workloads]}")
        workloads = [w for w in workloads if w.name in args.only]
    notes = []
    if args.peak is None:
        per_core, cores = fma_peak(), os.cpu_count() or 1
        args.peak = per_core * cores
        notes.append(f"peak: {per_core:.0f} GFLOP/s per core (FMA loop, _peak.py) x {cores} cores")
    else:
        notes.append(f"peak: {args.peak:g} GFLOP/s (--peak)")
    workers = start_workers(args, notes)
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="tvmlite-bench-") as tmp:
            for w in workloads:
                print(f"{w.name} ...", file=sys.stderr, flush=True)
                results.append(measure(w, workers, args, Path(tmp)))
    finally:
        for worker in workers.values():
            worker.close()
    infos = {label: worker.info for label, worker in workers.items()}
    print(heading(infos, notes, args))
    print(report(results, list(workers), args))
    if args.json:
        args.json.write_text(json.dumps(as_json(results, infos, args), indent=1) + "\n")
    failed = [
        f"{r.workload.name} {label}: {why}" for r in results for label, why in r.failures.items()
    ]
    if failed:
        print("\n" + "\n".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
