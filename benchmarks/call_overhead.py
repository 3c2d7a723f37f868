"""Per-call overhead of a compiled function from Python: `main` adding two (4, 4)
float32 tensors, called from `build()`'s result, from a loaded `.so`, through
the Python (ctypes) path, and NumPy's `np.add` for reference; when apache-tvm
is importable, TVM's VM on the same module in the same run.

    python benchmarks/call_overhead.py [--number 200000] [--repeat 7]

Each figure is the best of `--repeat` timeit runs of `--number` calls, in
microseconds per call, all measured in this one process: compare the ratios.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    x = np.random.rand(4, 4).astype("float32")
    y = np.random.rand(4, 4).astype("float32")
    ex = tvmlite.build(tvmlite.parse(SOURCE), cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        lib = tvmlite.load_module(ex.export_library(Path(tmp) / "add.so"))
        built, loaded = ex["main"], lib["main"]
        np.testing.assert_array_equal(built(x, y), x + y)
        np.testing.assert_array_equal(loaded(x, y), x + y)
        n, r = args.number, args.repeat
        rows: list[tuple[str, float]] = [
            ("numpy np.add(x, y)", per_call(lambda: np.add(x, y), n, r)),
            ("tvmlite build() main(x, y)", per_call(lambda: built(x, y), n, r)),
            ("tvmlite load_module main(x, y)", per_call(lambda: loaded(x, y), n, r)),
            (
                "tvmlite ctypes path (fallback)",
                per_call(lambda: built.call_python(x, y), n // 50, r),
            ),
        ]
        vm = tvm_vm(x, y)
        if vm is not None:
            rows.append(("tvm VM main(a, b)", per_call(vm, args.number, args.repeat)))
    base = rows[0][1]
    print(f"{'call':34} {'us/call':>9} {'/ numpy':>8}")
    for name, micros in rows:
        print(f"{name:34} {micros:9.3f} {micros / base:8.2f}")
    if vm is None:
        print("(apache-tvm not importable: no TVM figure)")


if __name__ == "__main__":
    main()
