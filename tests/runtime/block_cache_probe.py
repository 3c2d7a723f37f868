"""Behaviours of the JIT's block cache, in a fresh process (the cache and its
byte limit, read once from TVMLITE_BLOCK_CACHE_SIZE, are per process); run by
test_block_cache.py:

    python tests/runtime/block_cache_probe.py reuse|limit|off|threads|fork|libraries

Prints "ok" and exits 0, or fails an assertion.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

import tvmlite
from tvmlite.lowering.codegen.llvm_block_cache import class_of
from tvmlite.lowering.codegen.llvm_host_support import cached_bytes

SOURCE = """
@R.function
def main(x: R.Tensor((512, 1024), "float32")) -> R.Tensor((512, 1024), "float32"):
    y = R.add(x, x)
    return y
"""
BLOCK = 128 + 512 * 1024 * 4  # header and shape, then the data (docs/abi.md)
CAPACITY = class_of(BLOCK)[1]


def reuse(f, x) -> None:
    """A freed result goes into the cache; the next call takes it back out."""
    out = f(x)
    before = cached_bytes()
    address = out.ctypes.data
    del out
    assert cached_bytes() - before == CAPACITY, (cached_bytes(), before, CAPACITY)
    out = f(x)
    assert out.ctypes.data == address and cached_bytes() == before
    np.testing.assert_array_equal(out, x + x)


def limit(f, x) -> None:
    """TVMLITE_BLOCK_CACHE_SIZE is one block's class: a second one goes back to libc."""
    outs = [f(x) for _ in range(3)]
    assert cached_bytes() == 0
    outs.clear()
    assert cached_bytes() == CAPACITY


def off(f, x) -> None:
    """TVMLITE_BLOCK_CACHE_SIZE=0: nothing is kept."""
    for _ in range(3):
        np.testing.assert_array_equal(f(x), x + x)
    assert cached_bytes() == 0


def threads(f, x) -> None:
    """Threads that take and give blocks at once get correct results, and the
    cache holds no more than its limit after."""
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(k: int) -> None:
        try:
            start.wait()
            mine = x + k
            for _ in range(100):
                held = [f(mine) for _ in range(1 + k % 3)]
                for out in held:
                    np.testing.assert_array_equal(out, mine + mine)
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(e)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors[0]
    assert 0 < cached_bytes() <= 8 * CAPACITY  # TVMLITE_BLOCK_CACHE_SIZE


def fork(f, x) -> None:
    """Children forked while a thread takes and gives blocks (so now and then
    while it holds the cache's lock) still allocate, compute and exit."""
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            f(x)

    busy = threading.Thread(target=churn)
    busy.start()
    try:
        for _ in range(20):
            pid = os.fork()
            if pid == 0:
                good = all(np.array_equal(f(x), x + x) for _ in range(3))
                os._exit(0 if good else 1)
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0
    finally:
        stop.set()
        busy.join()


def libraries(f, x) -> None:
    """A build the compile cache (TVMLITE_CACHE_DIR) answers is a loaded library
    whose blocks come from this process's cache; a library loaded by hand keeps
    libc's (its results may outlive it)."""
    assert os.environ.get("TVMLITE_CACHE_DIR")
    tvmlite.build(tvmlite.parse(SOURCE))  # stored
    cached = tvmlite.build(tvmlite.parse(SOURCE))
    assert "cache" in cached.timings
    reuse(cached["main"], x)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.so"
        cached.export_library(path)
        out = tvmlite.load_module(path)["main"](x)
        before = cached_bytes()
        del out
        assert cached_bytes() == before


def main(mode: str) -> None:
    f = tvmlite.build(tvmlite.parse(SOURCE))["main"]
    x = np.arange(512 * 1024, dtype="float32").reshape(512, 1024)
    f(x)  # the first call makes the fast-call wrapper
    modes = {"reuse": reuse, "limit": limit, "off": off, "threads": threads, "fork": fork}
    modes["libraries"] = libraries
    modes[mode](f, x)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
