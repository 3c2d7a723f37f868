"""RSS growth per `build()` and per `load_module()` of a rewritten library, in a
fresh process (run by test_leaks.py with a small count, by hand with a large one):

    python tests/runtime/memory_growth.py build 1000
    python tests/runtime/memory_growth.py load 1000

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
from pathlib import Path

import numpy as np

import tvmlite

SOURCE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        z = R.add(x, y)
        return z
"""
WARM_UP = 50


def rss_mb() -> float:
    gc.collect()
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main(what: str, count: int) -> None:
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
