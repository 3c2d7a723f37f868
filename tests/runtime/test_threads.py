"""Compiled functions and loaded libraries are safe to call from many threads
from the very first call, and building from several threads at once is safe.

Each round runs thread_stress.py in a fresh process (first calls only happen
once per process). CI runs a few rounds; `TVMLITE_STRESS=200 pytest
tests/runtime/test_threads.py` runs many.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("thread_stress.py")
ROUNDS = int(os.environ.get("TVMLITE_STRESS", "3"))


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_first_calls_and_builds_from_many_threads(round_):
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stdout}{done.stderr[-2000:]}"
    assert done.stdout.startswith("ok ")
