"""Per-call overhead of the same graph functions built by two (or more) tvmlite
trees, e.g. a copy of `main` against this checkout: each tree in a worker
process of its own, the workers timed in turn round by round (the order
rotating: `_timing.interleaved_samples`), so a burst of load on the shared
machine hits all of them alike.

  python benchmarks/call_overhead_versions.py --tree main=/tmp/main-pkg
      [--tree branch=] [--batch-ms 50] [--rounds 15]

A tree is NAME=DIR, DIR a folder holding a `tvmlite` package that goes first
on the worker's PYTHONPATH (empty: the installed tvmlite). The functions, each
checked against NumPy before it is timed:

  add        `main` adding two (4, 4) float32 tensors, the only function of
             its module (the anchor workload add_4x4);
  add-among  the same `main` in a module of 20 graph functions;
  chain-40   `main` of 40 elementwise bindings on (4, 4) tensors, the only
             function;
  mlp        the anchor MLP 64x784 -> 512 -> 512 -> 10 (8 bindings, seven
             parameters: a call of real work, where overhead must not show).

A timed run is a batch of calls lasting about `--batch-ms` in the first tree's
worker (the same count for every tree); figures are the median processor
microseconds per call over the rounds (waiting for a core does not count), and
each tree's ratio to the first.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time
import timeit
from collections.abc import Callable

import numpy as np
from _timing import autorange, interleaved_samples
from _workloads import by_name, relative_error, tolerance

F32 = 'R.Tensor((4, 4), "float32")'


def chain(bindings: int, fillers: int) -> str:
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


def chain_reference(bindings: int) -> Callable[..., np.ndarray]:
    def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        v = x + y
        for k in range(1, bindings):
            v = v + y if k % 2 else v * np.float32(0.5)
        return v

    return reference


def cases() -> dict[str, tuple[str, list[np.ndarray], Callable[..., np.ndarray]]]:
    """name -> (module text, arguments of `main`, NumPy reference)."""
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((4, 4)).astype("float32") for _ in range(2))
    mlp = by_name("mlp_64x784_512_512_10")
    add = by_name("add_4x4")
    return {
        "add": (add.text, [x, y], add.reference()),
        "add-among": (chain(1, 19), [x, y], chain_reference(1)),
        "chain-40": (chain(40, 0), [x, y], chain_reference(40)),
        "mlp": (mlp.text, mlp.make_inputs(), mlp.reference()),
    }


def worker() -> None:
    """Build every case and check it, then answer lines "batch CASE MS" with
    the number of calls lasting MS, and "time CASE NUMBER" with the processor
    seconds of NUMBER calls."""
    import tvmlite  # noqa: PLC0415 - the tree chosen by PYTHONPATH

    calls = {}
    for name, (text, args, reference) in cases().items():
        fn = tvmlite.build(tvmlite.parse(text), cache=False)["main"]
        ref = reference(*args)
        err = relative_error(np.asarray(fn(*args)), ref)
        if not err <= tolerance(ref.dtype):
            raise SystemExit(f"{name}: relative error {err} against NumPy")
        calls[name] = (fn, args)
    print(json.dumps({"ready": tvmlite.__file__}), flush=True)
    for line in sys.stdin:
        command, name, value = line.split()
        fn, args = calls[name]
        if command == "batch":
            answer: float = autorange(functools.partial(fn, *args), float(value))
        else:
            glob = {"fn": fn, "args": args}
            answer = timeit.timeit(
                "fn(*args)", timer=time.process_time, number=int(value), globals=glob
            )
        print(json.dumps(answer), flush=True)


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


def ask(proc: subprocess.Popen[str], command: str, case: str, value: float) -> float:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{command} {case} {value}\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def timed(proc: subprocess.Popen[str], case: str, number: int) -> Callable[[], float]:
    """One timed run of `number` calls in the worker: microseconds per call."""
    return lambda: ask(proc, "time", case, number) / number * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[], help="NAME=DIR")
    ap.add_argument("--batch-ms", type=float, default=50.0)
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
    for case in cases():
        number = int(ask(workers[names[0]], "batch", case, args.batch_ms))
        runs = {n: timed(workers[n], case, number) for n in names}
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
