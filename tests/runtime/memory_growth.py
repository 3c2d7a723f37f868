"""RSS growth per `build()`, per `load_module()` of a rewritten library and per
call of compiled functions, in a fresh process (run by test_leaks.py with a small
count, by hand with a large one):

    python tests/runtime/memory_growth.py build 1000
    python tests/runtime/memory_growth.py load 1000
    python tests/runtime/memory_growth.py call 10000

Prints "<KB per call> <MB total>". Each step also makes the first call of the
function (through the fast-call wrapper compiled with it). Freed heap is handed back to
the system (glibc `malloc_trim`) before each reading, so the figure counts
memory still held, not fragmentation.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

import tvmlite
from tvmlite.lowering.codegen.llvm_block_cache import DEFAULT_LIMIT
from tvmlite.lowering.codegen.llvm_host_support import cached_bytes

SOURCE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        z = R.add(x, y)
        return z
"""
# Calls: planned intermediates (one arena a call), a dynamic shape (blocks of
# many sizes), results of a megabyte (the block cache).
CALLED = """
@I.ir_module
class Module:
    @R.function
    def planned(x: R.Tensor((256, 1024), "float32"), y: R.Tensor((256, 1024), "float32")) -> R.Tensor((256, 1024), "float32"):
        a = R.add(x, y)
        b = R.multiply(a, x)
        c = R.subtract(b, y)
        d = R.nn.relu(c)
        return d

    @R.function
    def dynamic(x: R.Tensor(("n", 1024), "float32")) -> R.Tensor(("n", 1024), "float32"):
        a = R.add(x, x)
        b = R.multiply(a, x)
        return b
"""
WARM_UP = 50


def rss_mb() -> float:
    gc.collect()
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def calls() -> Callable[[int], None]:
    """A step calling both functions of CALLED; results checked now and then (the
    loop measures memory, not NumPy)."""
    ex = tvmlite.build(tvmlite.parse(CALLED))
    planned, dynamic = ex["planned"], ex["dynamic"]
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 256, 1024), dtype="float32")
    want = np.maximum((x + y) * x - y, 0)

    def step(k: int) -> None:
        out = planned(x, y)
        rows = 128 + k % 128  # a new shape now and then
        twice = dynamic(x[:rows])
        if k % 1000 == 0:
            np.testing.assert_allclose(out, want, rtol=1e-6)
            np.testing.assert_allclose(twice, 2 * x[:rows] * x[:rows], rtol=1e-6)

    return step


def main(what: str, count: int) -> None:
    if what == "call":
        step = calls()
        for k in range(WARM_UP):
            step(k)
        start = rss_mb()
        for k in range(count):
            step(k)
        grown = rss_mb() - start
        held = cached_bytes()
        assert 0 < held <= DEFAULT_LIMIT, held  # results went through the block cache
        print(f"{grown * 1024 / count:.1f} {grown:.2f}")
        return
    mod = tvmlite.parse(SOURCE)
    x = np.arange(4, dtype="float32")
    with tempfile.TemporaryDirectory(prefix="tvmlite-memory-") as tmp:
        library = Path(tmp) / "m.so"
        tvmlite.build(mod, cache=False).export_library(library)
        data = library.read_bytes()

        def step() -> None:
            if what == "build":
                fn = tvmlite.build(mod, cache=False)["main"]
            else:  # a new file at the same path each time, as a rebuild writes it
                fresh = Path(tmp) / "new.so"
                fresh.write_bytes(data)
                os.replace(fresh, library)
                fn = tvmlite.load_module(library)["main"]
            assert fn(x, x).tolist() == [0, 2, 4, 6]

        for _ in range(WARM_UP):
            step()
        start = rss_mb()
        for _ in range(count):
            step()
        grown = rss_mb() - start
    print(f"{grown * 1024 / count:.1f} {grown:.2f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
