"""Timing shared by the benchmarks (run as `python benchmarks/NAME.py`, which
puts this folder on the import path)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timings(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(median, best) of `repeat` calls in ms, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)
