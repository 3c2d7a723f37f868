"""Per-call overhead of a compiled function from Python: `main` adding two (4, 4)
float32 tensors, called from `build()`'s result and from a loaded `.so` with
NumPy arrays, torch tensors (when torch is installed) and bare DLPack producers
(DLPack 1.0 and legacy), through the Python (ctypes) path, with `np.add` for
reference; and TVM's VM on the same module with its own tensors and with the same inputs, in
this interpreter when it imports tvm, else in `--tvm-python`'s.

    python benchmarks/call_overhead.py [--number 100000] [--rounds 7]
    python benchmarks/call_overhead.py --tvm-python /tmp/tvmref/bin/python
    python benchmarks/call_overhead.py --against OTHER/bin/python [--rounds 5]

Each round times `--number` calls of every contender in turn (TVM's in its own
process, asked over a pipe in the same round), every output checked first; a
figure is the best round, in microseconds per call: compare the ratios.

`--against` compares two installations of tvmlite (this one and the one of
another interpreter, say a virtual environment with main's tvmlite): each of
`--rounds` rounds measures both in fresh processes, one after the other, and
the table gives the median per installation and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SOURCE = """
@I.ir_module
class Module:
    @R.function
    def main(
        x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")
    ) -> R.Tensor((4, 4), "float32"):
        z = R.add(x, y)
        return z
"""
Call = Callable[[], Any]


class Producer:
    """A tensor known only through DLPack (as a library NumPy has never heard of)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._array.__dlpack_device__()


class LegacyProducer(Producer):
    """A producer from before DLPack 1.0: no `max_version`, legacy capsules."""

    def __dlpack__(self, stream: Any = None) -> Any:  # type: ignore[override]
        return self._array.__dlpack__(stream=stream)


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.random((4, 4), "float32"), rng.random((4, 4), "float32")


def checked(call: Call, want: np.ndarray) -> Call:
    """`call`, after checking that its result is `want`."""
    np.testing.assert_allclose(np.from_dlpack(call()), want, rtol=1e-6)
    return call


def tvmlite_contenders(folder: Path) -> dict[str, Call]:
    import tvmlite  # noqa: PLC0415 - not in TVM's interpreter

    x, y = inputs()
    want = x + y
    ex = tvmlite.build(tvmlite.parse(SOURCE), cache=False)
    built = ex["main"]
    loaded = tvmlite.load_module(ex.export_library(folder / "add.so"))["main"]
    px, py = Producer(x), Producer(y)
    lx, ly = LegacyProducer(x), LegacyProducer(y)
    calls = {
        "numpy np.add(x, y)": lambda: np.add(x, y),
        "tvmlite build() main(x, y)": lambda: built(x, y),
        "tvmlite load_module main(x, y)": lambda: loaded(x, y),
        "tvmlite main(DLPack producers)": lambda: built(px, py),
        "tvmlite main(legacy producers)": lambda: built(lx, ly),
        "tvmlite ctypes path (fallback)": lambda: built.call_python(x, y),
    }
    torch = _torch()
    if torch is not None:
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        to_torch = ex.with_output("torch")["main"]
        calls["torch tx + ty"] = lambda: tx + ty
        calls["tvmlite main(torch tensors)"] = lambda: built(tx, ty)
        calls["tvmlite with_output('torch')"] = lambda: to_torch(tx, ty)
    return {name: checked(call, want) for name, call in calls.items()}


def tvm_contenders() -> dict[str, Call]:
    """TVM's VM on the module, or {} without TVM."""
    try:
        import tvm  # noqa: PLC0415 - optional, benchmark only
        from tvm import relax  # noqa: PLC0415
    except ImportError:
        return {}
    x, y = inputs()
    vm = relax.VirtualMachine(tvm.compile(tvm.script.from_source(SOURCE), target="llvm"), tvm.cpu())
    to_tensor = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    a, b = to_tensor(x), to_tensor(y)
    main = vm["main"]
    px, py = Producer(x), Producer(y)
    calls = {
        "tvm VM main(tvm tensors)": lambda: main(a, b),
        "tvm VM main(numpy arrays)": lambda: main(x, y),
        "tvm VM main(DLPack producers)": lambda: main(px, py),
    }
    torch = _torch()
    if torch is not None:
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        calls["tvm VM main(torch tensors)"] = lambda: main(tx, ty)
    found = {}
    for name, call in calls.items():
        try:
            found[name] = checked(call, x + y)
        except Exception as err:  # noqa: BLE001 - an input TVM refuses: no figure
            print(f"{name}: {type(err).__name__}: {err}".splitlines()[0], file=sys.stderr)
    return found


def _torch() -> Any:
    try:
        import torch  # noqa: PLC0415 - optional
    except ImportError:
        return None
    return torch


def one_round(calls: dict[str, Call], number: int) -> dict[str, float]:
    """Microseconds per call of each contender, one timed run each."""
    return {name: timeit.timeit(call, number=number) / number * 1e6 for name, call in calls.items()}


def tvm_child(number: int) -> None:
    """The TVM side in another interpreter: one round per line read."""
    calls = tvm_contenders()
    print(json.dumps(sorted(calls)), flush=True)
    for _ in sys.stdin:
        print(json.dumps(one_round(calls, number)), flush=True)


def measure(args: argparse.Namespace) -> dict[str, float]:
    """The best round of every contender, this process's and TVM's interleaved."""
    child = None
    with tempfile.TemporaryDirectory() as tmp:
        calls = tvmlite_contenders(Path(tmp))
        remote = tvm_contenders() if args.tvm_python is None else {}
        calls.update(remote)
        if args.tvm_python and not remote:
            cmd = [args.tvm_python, __file__, "--tvm-child", "--number", str(args.number)]
            child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert child.stdin and child.stdout
            if not json.loads(child.stdout.readline()):
                print(f"({args.tvm_python} cannot import tvm: no TVM figures)")
        best: dict[str, float] = {}
        for _ in range(args.rounds):
            found = one_round(calls, args.number)
            if child is not None:
                child.stdin.write("round\n")
                child.stdin.flush()
                found.update(json.loads(child.stdout.readline()))
            for name, micros in found.items():
                best[name] = min(micros, best.get(name, micros))
    if child is not None:
        child.stdin.close()
        child.wait()
    return best


def against(other: str, args: argparse.Namespace) -> None:
    """This installation and `other`'s, measured in alternating fresh processes."""
    pythons = {"this": sys.executable, "other": other}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in pythons}
    child = [__file__, "--child", "--number", str(args.number), "--rounds", "1"]
    for _ in range(args.rounds):
        for name, python in pythons.items():
            done = subprocess.run([python, *child], capture_output=True, text=True, check=True)
            runs[name].append(json.loads(done.stdout))
    print(f"median of {args.rounds} rounds, us/call (this: {sys.executable}; other: {other})")
    print(f"{'call':34} {'this':>9} {'other':>9} {'this/other':>11}")
    for row in runs["this"][0]:
        if all(row in r for r in runs["other"]):
            mine = statistics.median(r[row] for r in runs["this"])
            theirs = statistics.median(r[row] for r in runs["other"])
            print(f"{row:34} {mine:9.3f} {theirs:9.3f} {mine / theirs:11.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tvm-python", metavar="PYTHON", help="interpreter that imports tvm")
    parser.add_argument("--against", metavar="PYTHON", help="another tvmlite's interpreter")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tvm-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tvm_child:
        tvm_child(args.number)
        return
    if args.child:
        args.tvm_python = None
        with tempfile.TemporaryDirectory() as tmp:
            calls = tvmlite_contenders(Path(tmp))
        print(json.dumps(one_round(calls, args.number)))
        return
    if args.against:
        against(args.against, args)
        return
    rows = measure(args)
    numpy_base = rows["tvmlite build() main(x, y)"]
    print(f"best of {args.rounds} rounds of {args.number} calls")
    print(f"{'call':34} {'us/call':>9} {'/ main(numpy)':>14}")
    for name, micros in rows.items():
        print(f"{name:34} {micros:9.3f} {micros / numpy_base:14.2f}")
    if not any(name.startswith("tvm VM") for name in rows):
        print("(apache-tvm not importable: no TVM figure; see --tvm-python)")
    if _torch() is None:
        print("(torch not installed: no torch figures)")


if __name__ == "__main__":
    main()
