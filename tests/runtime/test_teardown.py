"""Nothing CPython reads while the garbage collector tears down an executable is
freed before it is read: teardown_probe.py builds, calls and drops executables
in a fresh process whose allocator (glibc's, told to) overwrites every block it
frees with bytes that make a stale read fail loudly. A builtin's method
definition once lived in a ctypes buffer the collector freed first: the
collector then crashed with a segmentation fault."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = Path(__file__).with_name("teardown_probe.py")
POISONED = {
    "PYTHONMALLOC": "malloc",  # every object from glibc's malloc, not Python's pools
    "MALLOC_PERTURB_": "255",  # freed blocks overwritten with 0xff
    "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0",  # (blocks in tcache are not)
}


def test_executables_torn_down_by_the_collector_read_nothing_freed():
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", str(PROBE), "3"],
        capture_output=True, text=True, env={**os.environ, **POISONED}, timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
