"""Per-call overhead of the same graph functions built by two (or more) tvmlite
trees, e.g. a copy of `main` against this checkout: each tree in a worker
process of its own, the workers timed in turn round by round (the order
rotating: `_timing.interleaved_samples`), so a burst of load on the shared
machine hits all of them alike.

  python benchmarks/call_overhead_versions.py --tree main=/tmp/main-pkg
      [--tree branch=] [--number 20000] [--rounds 15]

A tree is NAME=DIR, DIR a folder holding a `tvmlite` package that goes first
on the worker's PYTHONPATH (empty: the installed tvmlite). The functions, each
called with (4, 4) float32 tensors and checked against NumPy before it is
timed:

  add        `main` of one binding, the only function of its module;
  add-among  the same `main` in a module of 20 graph functions;
  chain-40   `main` of 40 elementwise bindings, the only function.

Figures: median microseconds per call over the rounds, and each tree's ratio
to the first.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit
from collections.abc import Callable

import numpy as np
from _timing import interleaved_samples

F32 = 'R.Tensor((4, 4), "float32")'


def module(bindings: int, fillers: int) -> str:
    """`main(x, y)`: x + y, then alternately + y and * 0.5; and `fillers` more
    small graph functions."""
    lines = ["v0 = R.add(x, y)"]
    for k in range(1, bindings):
        op = "R.add(v{0}, y)" if k % 2 else 'R.multiply(v{0}, R.const(0.5, "float32"))'
        lines.append(f"v{k} = " + op.format(k - 1))
    body = "".join(f"        {line}\n" for line in lines)
    text = (
        "@I.ir_module\nclass Module:\n    @R.function\n"
        f"    def main(x: {F32}, y: {F32}) -> {F32}:\n{body}        return v{bindings - 1}\n"
    )
    for k in range(fillers):
        text += f"\n    @R.function\n    def f{k}(a: {F32}) -> {F32}:\n        b = R.add(a, a)\n"
        text += "        return b\n"
    return text


def expected(bindings: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    v = x + y
    for k in range(1, bindings):
        v = v + y if k % 2 else v * np.float32(0.5)
    return v


CASES = {"add": (1, 0), "add-among": (1, 19), "chain-40": (40, 0)}


def worker() -> None:
    """Build every case, check it, then answer "CASE NUMBER" lines with the
    seconds of NUMBER calls."""
    import tvmlite  # noqa: PLC0415 - the tree chosen by PYTHONPATH

    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((4, 4)).astype("float32") for _ in range(2))
    calls = {}
    for name, (bindings, fillers) in CASES.items():
        fn = tvmlite.build(tvmlite.parse(module(bindings, fillers)), cache=False)["main"]
        np.testing.assert_allclose(fn(x, y), expected(bindings, x, y), rtol=1e-6)
        calls[name] = fn
    print(json.dumps({"ready": tvmlite.__file__}), flush=True)
    for line in sys.stdin:
        name, number = line.split()
        seconds = timeit.timeit(
            "fn(x, y)", number=int(number), globals={"fn": calls[name], "x": x, "y": y}
        )
        print(json.dumps(seconds), flush=True)


def start(tree: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    ready = proc.stdout.readline()
    if not ready:
        raise SystemExit(f"the worker of {tree or 'the installed tvmlite'} failed")
    print(f"tree {tree or '(installed)'}: {json.loads(ready)['ready']}")
    return proc


def ask(proc: subprocess.Popen[str], case: str, number: int) -> float:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{case} {number}\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def timed(proc: subprocess.Popen[str], case: str, number: int) -> Callable[[], float]:
    """One timed run of `number` calls in the worker: microseconds per call."""
    return lambda: ask(proc, case, number) / number * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[], help="NAME=DIR")
    ap.add_argument("--number", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker()
        return
    trees = dict(t.split("=", 1) for t in args.tree) or {"installed": ""}
    workers = {name: start(tree) for name, tree in trees.items()}
    names = list(workers)
    print(f"\n{'function':10} " + " ".join(f"{n + ' us':>12}" for n in names[:1]), end="")
    print("".join(f" {n + ' us':>12} {'/' + names[0]:>10}" for n in names[1:]))
    for case in CASES:
        runs = {n: timed(workers[n], case, args.number) for n in names}
        med = {n: s.median for n, s in interleaved_samples(runs, args.rounds).items()}
        row = f"{case:10} {med[names[0]]:12.3f}"
        row += "".join(f" {med[n]:12.3f} {med[n] / med[names[0]]:10.2f}" for n in names[1:])
        print(row, flush=True)
    for proc in workers.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


if __name__ == "__main__":
    main()
