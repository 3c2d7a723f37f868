"""Calling a compiled function many times keeps memory flat: the arena of the
memory plan, blocks of dynamic shape and results all go back (to the block
cache, bounded, or to libc) once their owner is done with them."""

from __future__ import annotations

import ctypes
import gc
import os
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering.codegen.llvm_block_cache import DEFAULT_LIMIT
from tvmlite.lowering.codegen.llvm_host_support import cached_bytes

CALLS = int(os.environ.get("TVMLITE_STRESS", "0")) or 10_000
BOUND_MB = 24  # generous: a leak of one block per call would be gigabytes

SOURCE = """
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


def rss_mb() -> float:
    gc.collect()
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads RSS from /proc")
def test_rss_is_flat_over_many_calls():
    ex = tvmlite.build(tvmlite.parse(SOURCE))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 1024), dtype="float32")
    y = rng.standard_normal((256, 1024), dtype="float32")
    want = np.maximum((x + y) * x - y, 0)
    planned, dynamic = ex["planned"], ex["dynamic"]

    def step(k: int) -> None:
        out = planned(x, y)
        rows = 128 + k % 128  # a new shape now and then: fresh size classes
        twice = dynamic(x[:rows])
        if k % 1000 == 0:  # checked now and then: the loop measures memory, not NumPy
            np.testing.assert_allclose(out, want, rtol=1e-6)
            np.testing.assert_allclose(twice, 2 * x[:rows] * x[:rows], rtol=1e-6)

    for k in range(500):
        step(k)
    start = rss_mb()
    for k in range(CALLS):
        step(k)
    grown = rss_mb() - start
    assert grown < BOUND_MB, f"RSS grew {grown:.1f} MB over {CALLS} calls"
    assert 0 < cached_bytes() <= DEFAULT_LIMIT
