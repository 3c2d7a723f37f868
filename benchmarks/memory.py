"""What do the memory plan and the block cache buy (docs/memory.md)? Per-call time
and peak resident memory of tvmlite's default build ("after") against the same
build with every kernel output allocated on its own and no block cache
("before": PassContext config `tvmlite.memory_plan=False`, TVMLITE_BLOCK_CACHE_SIZE=0,
what host code did before both), with NumPy for scale, on workloads of
benchmarks/workloads/ (default: the MLP and add + relu on 16 M floats).

  python benchmarks/memory.py [--only NAME]... [--rounds 9] [--min-ms 5]

Each contender runs in a worker process of its own (benchmarks/_worker.py: the
cache's limit is read once per process). Per workload every contender builds
the text, runs it once and its output is checked against NumPy (as run.py
does) before it is timed; timed runs (batches of calls lasting at least
`--min-ms`) are interleaved round by round, the order rotating. The peak is
the worker's peak resident size from its first call to the end of the timed
rounds, above its resident size before that call (inputs and code already
counted): what calls hold at their worst, results and the block cache included.
Faults are the worker's minor page faults per call over the timed rounds (the
first calls, which fill the cache, are not in them): fresh memory is what faults. Times are ms per
call, median (min); ratios are of medians.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from _timing import interleaved_samples
from _workloads import load, relative_error, tolerance
from run import WorkerError, WorkerProcess, table

DEFAULT = ("mlp_64x784_512_512_10", "add_relu_16M")
CONTENDERS = {  # label: (worker kind, environment)
    "numpy": ("numpy", {"OPENBLAS_NUM_THREADS": "1"}),
    "before": ("tvmlite-unplanned", {"TVMLITE_BLOCK_CACHE_SIZE": "0"}),
    "after": ("tvmlite", {}),
}


def measure(name: str, workers: dict[str, WorkerProcess], args: argparse.Namespace) -> list[str]:
    """One row: times, ratios and peaks of every contender on workload `name`."""
    base: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="tvmlite-memory-") as tmp:
        outs = {}
        for label, worker in workers.items():
            worker.ask("load", name=name, seed=0)
            worker.ask("compile")
            base[label] = worker.ask("memory", reset=True)
            outs[label] = Path(tmp) / f"{label}.npy"
            worker.ask("run", out=str(outs[label]))
        ref = np.load(outs["numpy"])
        for label in ("before", "after"):
            err = relative_error(np.load(outs[label]), ref)
            if err > tolerance(ref.dtype):
                raise SystemExit(f"{name}: {label} is WRONG (relative error {err:.2g})")
    calls = {
        label: w.ask("calibrate", min_ms=args.min_ms) * args.rounds for label, w in workers.items()
    }
    warm = {label: w.ask("memory")["faults"] for label, w in workers.items()}
    runs = {label: lambda w=w: w.ask("time") for label, w in workers.items()}
    times = interleaved_samples(runs, args.rounds, warmup=False)
    end = {label: w.ask("memory") for label, w in workers.items()}
    peak = {label: end[label]["peak_mb"] - base[label]["rss_mb"] for label in workers}
    faults = {label: (end[label]["faults"] - warm[label]) / calls[label] for label in workers}
    before, after = times["before"].median, times["after"].median
    cells = [name]
    cells += [f"{times[k].median:.3f} ({times[k].best:.3f})" for k in CONTENDERS]
    cells += [f"{before / after:.2f}x", f"{after / times['numpy'].median:.2f}x"]
    cells += [f"{peak[k]:.1f}" for k in CONTENDERS]
    cells += [f"{faults[k]:.0f}" for k in CONTENDERS]
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="a workload name (repeatable)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--min-ms", type=float, default=5.0)
    args = parser.parse_args()
    names = args.only or list(DEFAULT)
    known = {w.name for w in load()}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}; known: {sorted(known)}")
    workers = {
        label: WorkerProcess(label, kind, sys.executable, env)
        for label, (kind, env) in CONTENDERS.items()
    }
    head = ["workload", "NumPy ms", "before ms", "after ms", "before / after"]
    head += ["after / NumPy", "NumPy peak MB", "before peak MB", "after peak MB"]
    head += ["NumPy faults/call", "before faults/call", "after faults/call"]
    rows = [head]
    try:
        for name in names:
            rows.append(measure(name, workers, args))
    except WorkerError as exc:
        raise SystemExit(str(exc)) from exc
    finally:
        for worker in workers.values():
            worker.close()
    print(table(rows))


if __name__ == "__main__":
    main()
