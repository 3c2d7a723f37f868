"""The block cache of the JIT's support code (lowering/codegen/llvm_block_cache.py):
results handed back are reused, the cache stays within TVMLITE_BLOCK_CACHE_SIZE, and
it is safe with threads and fork. Each case runs block_cache_probe.py in a fresh
process (the limit is read once per process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tvmlite.lowering.codegen.llvm_block_cache import CACHE_MIN, MAX_SHIFT, class_of

SCRIPT = Path(__file__).with_name("block_cache_probe.py")
CAPACITY = class_of(128 + 512 * 1024 * 4)[1]


@pytest.mark.parametrize(
    ("mode", "limit"),
    [
        ("reuse", None),
        ("limit", CAPACITY),
        ("off", 0),
        ("threads", f"{8 * CAPACITY // 1024}K"),
        ("fork", None),
        ("libraries", None),
    ],
)
def test_block_cache(mode, limit, tmp_path):
    env = dict(os.environ)
    env.pop("TVMLITE_BLOCK_CACHE_SIZE", None)
    env.pop("TVMLITE_NO_CACHE", None)
    env["TVMLITE_CACHE_DIR"] = str(tmp_path / "compiled")
    if limit is not None:
        env["TVMLITE_BLOCK_CACHE_SIZE"] = str(limit)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), mode],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, f"exit {done.returncode}: {done.stdout}{done.stderr[-2000:]}"
    assert done.stdout.strip() == "ok"


def test_size_classes():
    assert class_of(CACHE_MIN - 64) is None
    assert class_of(CACHE_MIN) == (3, CACHE_MIN)  # the last class above 2**MIN_SHIFT
    seen = {}
    for size in range(CACHE_MIN, 1 << 24, 4096 + 64):
        index, capacity = class_of(size)
        assert size <= capacity < size * 1.25 + 64  # at most a quarter more
        assert seen.setdefault(index, capacity) == capacity  # one capacity a class
    assert class_of(1 << MAX_SHIFT) is not None and class_of((1 << MAX_SHIFT) + 64) is None
