"""Build time of real models, cold, warm and incremental, per contender (a Python
that has some tvmlite installed: this checkout, another branch's venv; or one
that has Apache TVM), as ratios from one run.

  python benchmarks/build_time.py --models /work/models_data/resnet18.tvms,... \\
      [--contender before=/work/venv/bin/python] [--tvm-python /work/venv/bin/python] \\
      [--workers 1,2] [--rounds 3] [--modes cold,fresh,warm,incremental]

Every build runs in a fresh process (interpreter, imports and worker start-up
are what a user pays too, but not in the figure: the text is parsed before the
clock starts) with a fresh compile cache directory. Per model, contender and
worker count, up to four builds: `cold` (cache off), `fresh` (an empty cache
directory: the cold build plus storing its entries), `warm` (the fresh
build's cache, the same model: served from the cache) and `incremental` (that
cache, the model edited: its last `R.add` made an `R.subtract`, so one kernel
changes; tvmlite versions without kernel units rebuild everything). TVM
(`--tvm-python`: `tvm.compile` for the host CPU, parsed before the clock
starts) builds cold only: it keeps no cache. Rounds interleave the
contenders. Each build's result (the sum of main's first output on the
arguments `arg0...` of NAME.npz beside NAME.tvms) is checked against the first
contender's before it counts. Printed: the median build wall time (the
`tvmlite.build` / `tvm.compile` call), the median processor time of the whole
process and of its workers, the kernel units compiled and prim functions
lowered, and each time's ratio to the first row of the model's mode; the
machine's load (`uptime`) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, os, sys, time
import numpy as np
import tvmlite
from tvmlite.transform import PassContext
path, mode, workers, edit = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
text = open(path).read()
if edit:
    at = text.rindex("R.add(")
    text = text[:at] + "R.subtract(" + text[at + len("R.add("):]
mod = tvmlite.parse(text)
try:
    ctx = PassContext(config={"tvmlite.build_workers": workers} if workers else {})
except tvmlite.TVMLiteError:  # a tvmlite without parallel builds
    ctx = PassContext()
start = time.perf_counter()
with ctx:
    ex = tvmlite.build(mod, cache=mode != "cold")
wall = time.perf_counter() - start
npz = np.load(os.path.splitext(path)[0] + ".npz")
args = [npz[f"arg{k}"] for k in range(sum(n.startswith("arg") for n in npz.files))]
out = ex["main"](*args)
first = out[0] if isinstance(out, (tuple, list)) else out
check = float(np.asarray(first, dtype="float64").sum())
kernels, functions = getattr(ex, "kernel_counts", None), getattr(ex, "function_counts", None)
print(json.dumps({"wall": wall, "check": check, "kernels": kernels, "functions": functions}))
"""

TVM_CHILD = r"""
import json, os, sys, time
import numpy as np
import tvm
from tvm import relax
path = sys.argv[1]
mod = tvm.script.from_source(open(path).read())
target = tvm.target.Target({"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu()})
start = time.perf_counter()
ex = tvm.compile(mod, target=target)
wall = time.perf_counter() - start
npz = np.load(os.path.splitext(path)[0] + ".npz")
args = [npz[f"arg{k}"] for k in range(sum(n.startswith("arg") for n in npz.files))]
to_tensor = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
out = relax.VirtualMachine(ex, tvm.cpu())["main"](*(to_tensor(a) for a in args))
first = out if hasattr(out, "numpy") else out[0]
check = float(np.asarray(first.numpy(), dtype="float64").sum())
print(json.dumps({"wall": wall, "check": check, "kernels": None, "functions": None}))
"""


def run_child(
    python: str, model: str, mode: str, workers: int | None, cache: str, edit: bool
) -> dict:
    """One build in a fresh process; `workers` None: TVM's."""
    env = {**os.environ, "TVMLITE_CACHE_DIR": cache}
    env.pop("TVMLITE_NO_CACHE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if workers is None:
        command = [python, "-c", TVM_CHILD, model]
    else:
        command = [python, "-c", CHILD, model, mode, str(workers), "1" if edit else "0"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    total = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{python} {model} {mode}: {done.stderr.strip()[-800:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {**found, "process": total, "cpu": cpu}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


MODES = {"cold": False, "fresh": False, "warm": False, "incremental": True}  # mode: edited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True, help="comma-separated .tvms files")
    parser.add_argument("--contender", action="append", default=[], help="LABEL=PYTHON")
    parser.add_argument("--tvm-python", help="a Python with apache-tvm: TVM's cold build")
    parser.add_argument("--workers", default="1,2", help="worker counts of this checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES), help="of " + ",".join(MODES))
    args = parser.parse_args()
    modes = [m for m in MODES if m in args.modes.split(",")]
    contenders = [tuple(c.split("=", 1)) for c in args.contender]
    rows: list[tuple[str, str, int | None]] = [(label, py, 0) for label, py in contenders]
    rows += [(f"now w={w}", sys.executable, int(w)) for w in args.workers.split(",")]
    if args.tvm_python:
        rows.append(("TVM", args.tvm_python, None))
    print("load before:", uptime())
    for model in args.models.split(","):
        times: dict[tuple[str, str], list[dict]] = {}
        reference: dict[str, float] = {}
        failures: dict[str, str] = {}  # TVM's builds that failed, why
        for _ in range(args.rounds):
            for label, python, workers in rows:
                with tempfile.TemporaryDirectory(prefix="tvmlite-bt-") as cache:
                    for mode in modes if workers is not None else ["cold"]:
                        # warm and incremental builds need the fresh build's cache
                        if mode in ("warm", "incremental") and "fresh" not in modes:
                            run_child(python, model, "fresh", workers, cache, False)
                        try:
                            found = run_child(python, model, mode, workers, cache, MODES[mode])
                        except SystemExit as failed:
                            if workers is not None:  # tvmlite must build every model
                                raise
                            failures.setdefault(label, str(failed).splitlines()[-1][-200:])
                            continue
                        want = reference.setdefault(mode, found["check"])
                        if abs(found["check"] - want) > 1e-3 * max(1.0, abs(want)):
                            raise SystemExit(f"{label} {mode}: result {found['check']} != {want}")
                        times.setdefault((label, mode), []).append(found)
        print(f"\n{Path(model).name}: median of {args.rounds} (s; ratio to the first row)")
        print(
            f"{'contender':<14}{'mode':<13}{'build':>8}{'ratio':>7}{'process':>9}{'cpu':>7}"
            f"{'ratio':>7}  kernels; functions"
        )
        first: dict[str, tuple[float, float]] = {}
        for mode in modes:
            for label, _, _ in rows:
                runs = times.get((label, mode))
                if not runs:
                    continue
                wall = statistics.median(r["wall"] for r in runs)
                cpu = statistics.median(r["cpu"] for r in runs)
                process = statistics.median(r["process"] for r in runs)
                base = first.setdefault(mode, (wall, cpu))
                print(
                    f"{label:<14}{mode:<13}{wall:8.3f}{wall / base[0]:7.2f}{process:9.2f}"
                    f"{cpu:7.2f}{cpu / base[1]:7.2f}  {_counts(runs[-1])}"
                )
        for label, why in failures.items():
            print(f"{label:<14}failed: {why}")
    print("\nload after:", uptime())


def _counts(run: dict) -> str:
    kernels, functions = run.get("kernels"), run.get("functions")
    notes = []
    if kernels is not None:
        notes.append(f"{kernels['compiled']}/{kernels['units']} compiled")
    if functions is not None:
        notes.append(f"{functions['lowered']}/{functions['functions']} lowered")
    return "; ".join(notes)


if __name__ == "__main__":
    main()
