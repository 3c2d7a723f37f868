"""Real models: tvmlite's default build against PyTorch eager (1 and 2 threads) and
TVM's default build, as ratios from one run, with build times and the peak memory
of a call.

  python benchmarks/models.py [DIR] [--only NAME]... [--rounds 7] [--min-ms 200]
         [--tvm-python PYTHON] [--no-torch] [--variant LABEL:KEY=VALUE,...]... [--json OUT]

DIR (default $TVMLITE_MODELS_DIR) holds NAME.tvms and NAME.npz for each model, as
the shared gen_real_models.py writes them: the text TVM printed for the exported
model, and main's arguments (arg0.., data inputs then weights) with PyTorch's
outputs (out0..). Every NAME.tvms with a NAME.npz beside it is a model.

Contenders, each in a fresh worker process per model (benchmarks/_model_worker.py):
- "PyTorch 1t", "PyTorch 2t": eager, inference mode, torch.set_num_threads(n), on the
  architecture benchmarks/_torch_models.py defines for the model's name with the
  npz's weights (left out, with a note, when torch cannot be imported or the name
  is not one it defines);
- "tvmlite": `tvmlite.build(tvmlite.parse(text))`, the default build; each
  `--variant LABEL:target=...,pipeline=...,tree=DIR` adds a build with other
  options, `tree` a tvmlite source tree laid out as installed (docs/benchmarks.md);
- "TVM" with `--tvm-python`: `tvm.compile` for the host CPU, run by the Relax VM.

Every contender builds (timed once, wall and processor time), calls once, and its
outputs are checked against the npz's (error relative to the output's largest
magnitude, at most --rtol) before it is timed; one that fails is not timed and
the run exits with status 1. Timed runs (batches of calls lasting at least
--min-ms) are interleaved round by round, the order rotating, each followed by
--settle seconds idle (a thread pool that spins after its call would otherwise
slow whoever runs next; TVM's gets 0.6 s); ms per call are median (min), ratios
of medians. GFLOP/s count the multiply-adds of the graph's matmuls and
convolutions (2 per MAC) at the npz's shapes, against the machine's fp32 peak on
all cores (`--peak`, else measured by _peak.py). Peak MB is the worker's peak
resident size from its first call to the end of the rounds, above its resident
size just before that call (weights, inputs and code already counted): what a
call holds at its worst, per contender process, the same way for all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _peak import fma_peak
from _timing import Summary, interleaved_samples
from _torch_models import ARCHITECTURES
from run import WorkerError, WorkerProcess, fmt, table

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.dsl.analysis import substitute
from tvmlite.dsl.arith import const_int, simplify

REFERENCE = "PyTorch 2t"
SETTLE_TVM = 0.6  # TVM's pool spins ~0.3 s after a call


@dataclass
class Contender:
    label: str
    kind: str  # _model_worker.py's
    options: dict[str, Any] = field(default_factory=dict)
    python: str = sys.executable
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Result:
    name: str
    gflop: float
    labels: list[str]
    build: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    times: dict[str, Summary] = field(default_factory=dict)
    peak_mb: dict[str, float] = field(default_factory=dict)

    def ratio(self, label: str, base: str = REFERENCE) -> float | None:
        if label not in self.times or base not in self.times:
            return None
        return self.times[label].median / self.times[base].median


# ---------------------------------------------------------------------------- the graph


def _dims(main: relax.Function, arrays: list[np.ndarray]) -> dict[tir.Var, tir.PrimExpr]:
    """The values of main's symbolic dims, read off the arrays it is called with."""
    values: dict[tir.Var, tir.PrimExpr] = {}
    for param, array in zip(main.params, arrays, strict=False):
        shape = getattr(param.struct_info, "shape", None)
        if isinstance(shape, tuple):
            for dim, n in zip(shape, array.shape, strict=False):
                if isinstance(dim, tir.Var):
                    values[dim] = tir.IntImm(dim.dtype, n)
    return values


def count_flops(main: relax.Function, arrays: list[np.ndarray]) -> int:
    """2 x the multiply-adds of main's matmuls and convolutions, at `arrays`' shapes."""
    values = _dims(main, arrays)

    def shape(expr: relax.Expr) -> list[int] | None:
        sinfo = getattr(expr, "struct_info", None)
        dims = getattr(sinfo, "shape", None)
        if not isinstance(dims, tuple):
            return None
        ints = [const_int(simplify(substitute(d, values))) for d in dims]
        return None if any(n is None for n in ints) else ints  # type: ignore[return-value]

    total = 0
    for block in main.body.blocks:
        for binding in block.bindings:
            call = binding.value
            if not (isinstance(call, relax.Call) and isinstance(call.op, relax.Op)):
                continue
            out, first = shape(binding.var), shape(call.args[0]) if call.args else None
            if out is None or first is None:
                continue
            if call.op.name == "relax.matmul":
                total += 2 * int(np.prod(out)) * first[-1]
            elif call.op.name.startswith("relax.nn.conv") and "transpose" not in call.op.name:
                weight = shape(call.args[1])
                if weight is not None:  # OIHW-like: in-channels per group x the window
                    total += 2 * int(np.prod(out)) * int(np.prod(weight[1:]))
    return total


def signature(main: relax.Function) -> tuple[list[str], int | None]:
    """main's parameter names, and how many are data inputs (TVM's `num_input`)."""
    num_input = main.attr("num_input")
    return [p.name for p in main.params], None if num_input is None else int(num_input)


# ---------------------------------------------------------------------------- measuring


def contenders_for(name: str, args: argparse.Namespace, notes: list[str]) -> list[Contender]:
    found = []
    if args.no_torch:
        pass
    elif name not in ARCHITECTURES:
        notes.append(f"{name}: no PyTorch definition in _torch_models.py, PyTorch left out")
    else:
        for n in (1, 2):
            env = {"OMP_NUM_THREADS": str(n), "MKL_NUM_THREADS": str(n)}
            found.append(Contender(f"PyTorch {n}t", "torch", {"threads": n}, env=env))
    found.append(Contender("tvmlite", "tvmlite"))
    for spec in args.variant or ():
        found.append(variant(spec))
    if args.tvm_python:
        found.append(Contender("TVM", "tvm", python=args.tvm_python))
    return found


def variant(spec: str) -> Contender:
    """LABEL:target=...,pipeline=...,tree=DIR as a tvmlite contender."""
    label, _, rest = spec.partition(":")
    options, env = {}, {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key in ("target", "pipeline") or (key, value) == ("params", "bound"):
            options[key] = value
        elif key == "tree":
            env["PYTHONPATH"] = value
        else:
            known = "target, pipeline, params=bound, tree"
            raise SystemExit(f"--variant {spec!r}: unknown key or value {item!r} ({known})")
    if not label or not rest:
        raise SystemExit(f"--variant {spec!r}: expected LABEL:KEY=VALUE,...")
    return Contender(label, "tvmlite", options, env=env)


def measure(directory: Path, name: str, args: argparse.Namespace, notes: list[str]) -> Result:
    """Build, check, time and weigh one model on every contender."""
    text = (directory / f"{name}.tvms").read_text()
    # Only main's signature is read here: a text the build refuses (the corpus has
    # one, gpt2_nomask) is reported by each contender's build, not by this parse.
    main = tvmlite.parse(text, f"{name}.tvms", check_well_formed=False)["main"]
    data = np.load(directory / f"{name}.npz")
    arrays = [data[f"arg{i}"] for i in range(len(main.params))]
    names, num_input = signature(main)
    result = Result(name, count_flops(main, arrays) / 1e9, [])
    workers: dict[str, WorkerProcess] = {}
    try:
        for c in contenders_for(name, args, notes):
            if c.kind == "torch" and num_input is None:
                result.failures[c.label] = "main has no num_input: data inputs unknown"
                continue
            try:
                w = WorkerProcess(c.label, c.kind, c.python, c.env, script="_model_worker.py")
            except (WorkerError, OSError) as exc:
                notes.append(f"{name}: {c.label} left out: cannot start ({exc})")
                continue
            workers[c.label] = w
            options = {**c.options, "num_input": num_input, "param_names": names}
            try:
                w.ask("load", dir=str(directory), name=name, options=options)
                result.build[c.label] = w.ask("compile")
            except WorkerError as exc:
                result.failures[c.label] = f"build failed: {exc}"
        result.labels = list(workers)
        live = {k: w for k, w in workers.items() if k not in result.failures}
        base = {}
        for label, w in list(live.items()):
            base[label] = w.ask("memory", reset=True)["rss_mb"]
            try:
                result.errors[label] = err = max(w.ask("check"), default=0.0)
            except WorkerError as exc:
                result.failures[label] = f"call failed: {exc}"
                del live[label]
                continue
            if err > args.rtol:
                result.failures[label] = f"WRONG: relative error {err:.2g}"
                del live[label]
        for w in live.values():
            w.ask("calibrate", min_ms=args.min_ms)

        def run(label: str) -> float:
            ms = live[label].ask("time")
            time.sleep(SETTLE_TVM if label == "TVM" else args.settle)
            return ms

        runs = {label: lambda label=label: run(label) for label in live}
        result.times = interleaved_samples(runs, args.rounds, warmup=False)
        for label, w in live.items():
            result.peak_mb[label] = w.ask("memory")["peak_mb"] - base[label]
    finally:
        for w in workers.values():
            w.close()
    return result


# ---------------------------------------------------------------------------- reporting


def model_table(r: Result, peak: float) -> str:
    head = ["contender", "build s (cpu s)", "error", "ms", f"x {REFERENCE}", "GFLOP/s"]
    rows = [head + [f"% of peak ({peak:.0f})", "peak MB"]]
    for label in r.labels:
        b = r.build.get(label)
        built = f"{b['wall_ms'] / 1e3:.1f} ({b['cpu_ms'] / 1e3:.1f})" if b else "-"
        s = r.times.get(label)
        if label in r.failures:
            rows.append([label, built, r.failures[label].split(":")[0], "-", "-", "-", "-", "-"])
            continue
        gflops = r.gflop / (s.median / 1e3) if s and r.gflop else None
        rows.append(
            [
                label,
                built,
                f"{r.errors[label]:.2g}",
                f"{fmt(s.median)} ({fmt(s.best)})" if s else "-",
                fmt(r.ratio(label), "x"),
                fmt(gflops),
                fmt(100 * gflops / peak if gflops else None, "%"),
                f"{r.peak_mb[label]:.0f}" if label in r.peak_mb else "-",
            ]
        )
    return f"### {r.name} ({r.gflop:.2f} GFLOP)\n\n" + table(rows)


def summary_table(results: list[Result]) -> str:
    labels = list(dict.fromkeys(label for r in results for label in r.labels))
    head = ["model", *[f"{label} ms" for label in labels], "tvmlite / PyTorch 2t"]
    rows = [head + ["tvmlite build s", "peak MB tvmlite / PyTorch 2t", "met"]]
    for r in results:
        cells = [r.name]
        for label in labels:
            s = r.times.get(label)
            cells.append(fmt(s.median) if s else r.failures.get(label, "-").split(":")[0])
        ratio = r.ratio("tvmlite")
        b = r.build.get("tvmlite")
        mine, theirs = r.peak_mb.get("tvmlite"), r.peak_mb.get(REFERENCE)
        memory = f"{mine:.0f} / {theirs:.0f}" if mine is not None and theirs is not None else "-"
        met = "-"
        if ratio is not None and mine is not None and theirs is not None:
            met = "yes" if ratio <= 1.0 and mine <= theirs else "no"
        rows.append(
            cells + [fmt(ratio, "x"), f"{b['wall_ms'] / 1e3:.1f}" if b else "-", memory, met]
        )
    return table(rows)


def as_json(results: list[Result], args: argparse.Namespace) -> dict[str, Any]:
    def summary(s: Summary) -> dict[str, Any]:
        return {"median_ms": s.median, "min_ms": s.best, "samples_ms": list(s.samples)}

    return {
        "rounds": args.rounds,
        "peak_gflops": args.peak,
        "models": [
            {
                "name": r.name,
                "gflop": r.gflop,
                "build": r.build,
                "errors": r.errors,
                "failures": r.failures,
                "times": {label: summary(s) for label, s in r.times.items()},
                "peak_mb": r.peak_mb,
            }
            for r in results
        ],
    }


def load_average() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def models_in(directory: Path) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.tvms") if (p.with_suffix(".npz")).exists())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=os.environ.get("TVMLITE_MODELS_DIR"))
    ap.add_argument("--only", action="append", metavar="NAME", help="this model (repeatable)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=200.0, help="shortest timed run (a batch)")
    ap.add_argument("--settle", type=float, default=0.2, help="idle seconds after each run")
    ap.add_argument("--rtol", type=float, default=1e-3, help="largest relative error allowed")
    ap.add_argument("--tvm-python", metavar="PYTHON", help="interpreter that imports tvm")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    ap.add_argument("--variant", action="append", metavar="LABEL:KEY=VALUE,...")
    ap.add_argument("--peak", type=float, help="machine fp32 peak, GFLOP/s (default: measure)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the results here")
    args = ap.parse_args()
    if args.dir is None:
        ap.error("give the models' directory (or set TVMLITE_MODELS_DIR)")
    directory = Path(args.dir)
    names = models_in(directory)
    if not names:
        ap.error(f"{directory}: no NAME.tvms with a NAME.npz beside it")
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            ap.error(f"unknown model {', '.join(unknown)}; known: {', '.join(names)}")
        names = [n for n in names if n in args.only]
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    notes: list[str] = []
    if args.peak is None:
        per_core, cores = fma_peak(), os.cpu_count() or 1
        args.peak = per_core * cores
        notes.append(f"peak: {per_core:.0f} GFLOP/s per core (FMA loop, _peak.py) x {cores} cores")
    start_load = load_average()
    results = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        results.append(measure(directory, name, args, notes))
    print(f"ms per call: median (min) of {args.rounds} interleaved rounds")
    print(f"load average (1, 5, 15 min): {start_load} at the start, {load_average()} at the end")
    print("\n".join(notes) + "\n")
    for r in results:
        print(model_table(r, args.peak) + "\n")
    print(summary_table(results))
    if args.json:
        args.json.write_text(json.dumps(as_json(results, args), indent=1) + "\n")
    failed = [f"{r.name} {label}: {why}" for r in results for label, why in r.failures.items()]
    if failed:
        print("\n" + "\n".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
