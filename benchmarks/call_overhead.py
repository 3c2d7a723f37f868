"""Per-call overhead of a compiled function from Python: `main` adding two (4, 4)
float32 tensors, called from `build()`'s result, from a loaded `.so`, through
the Python (ctypes) path, and NumPy's `np.add` for reference; when apache-tvm
is importable, TVM's VM on the same module in the same run.

    python benchmarks/call_overhead.py [--number 200000] [--repeat 7]
    python benchmarks/call_overhead.py --against OTHER/bin/python [--rounds 5]

Each figure is the best of `--repeat` timeit runs of `--number` calls, in
microseconds per call, all measured in one process: compare the ratios.

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

import tvmlite

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


def per_call(fn: Callable[[], Any], number: int, repeat: int) -> float:
    """Microseconds per call, best of `repeat` runs."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def tvm_vm(x: np.ndarray, y: np.ndarray) -> Callable[[], Any] | None:
    """A zero-argument call of TVM's VM on the same module, or None without TVM."""
    try:
        import tvm  # noqa: PLC0415 - optional, benchmark only
        from tvm import relax
    except ImportError:
        return None
    mod = tvm.script.from_source(SOURCE)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    to_tensor = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    a, b = to_tensor(x), to_tensor(y)
    main = vm["main"]
    np.testing.assert_allclose(main(a, b).numpy(), x + y)
    return lambda: main(a, b)


def measure(number: int, repeat: int, with_tvm: bool) -> dict[str, float]:
    """Microseconds per call of each contender, outputs checked first."""
    x = np.random.rand(4, 4).astype("float32")
    y = np.random.rand(4, 4).astype("float32")
    ex = tvmlite.build(tvmlite.parse(SOURCE), cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        lib = tvmlite.load_module(ex.export_library(Path(tmp) / "add.so"))
        built, loaded = ex["main"], lib["main"]
        np.testing.assert_array_equal(built(x, y), x + y)
        np.testing.assert_array_equal(loaded(x, y), x + y)
        rows = {
            "numpy np.add(x, y)": per_call(lambda: np.add(x, y), number, repeat),
            "tvmlite build() main(x, y)": per_call(lambda: built(x, y), number, repeat),
            "tvmlite load_module main(x, y)": per_call(lambda: loaded(x, y), number, repeat),
            "tvmlite ctypes path (fallback)": per_call(
                lambda: built.call_python(x, y), number // 50, repeat
            ),
        }
    vm = tvm_vm(x, y) if with_tvm else None
    if vm is not None:
        rows["tvm VM main(a, b)"] = per_call(vm, number, repeat)
    return rows


def against(other: str, args: argparse.Namespace) -> None:
    """This installation and `other`'s, measured in alternating fresh processes."""
    pythons = {"this": sys.executable, "other": other}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in pythons}
    child = [__file__, "--child", "--number", str(args.number), "--repeat", str(args.repeat)]
    for _ in range(args.rounds):
        for name, python in pythons.items():
            done = subprocess.run([python, *child], capture_output=True, text=True, check=True)
            runs[name].append(json.loads(done.stdout))
    print(f"median of {args.rounds} rounds, us/call (this: {sys.executable}; other: {other})")
    print(f"{'call':34} {'this':>9} {'other':>9} {'this/other':>11}")
    for row in runs["this"][0]:
        mine = statistics.median(r[row] for r in runs["this"])
        theirs = statistics.median(r[row] for r in runs["other"])
        print(f"{row:34} {mine:9.3f} {theirs:9.3f} {mine / theirs:11.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--against", metavar="PYTHON", help="another tvmlite's interpreter")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.number, args.repeat, with_tvm=False)))
        return
    if args.against:
        against(args.against, args)
        return
    rows = measure(args.number, args.repeat, with_tvm=True)
    base = rows["numpy np.add(x, y)"]
    print(f"{'call':34} {'us/call':>9} {'/ numpy':>8}")
    for name, micros in rows.items():
        print(f"{name:34} {micros:9.3f} {micros / base:8.2f}")
    if "tvm VM main(a, b)" not in rows:
        print("(apache-tvm not importable: no TVM figure)")


if __name__ == "__main__":
    main()
