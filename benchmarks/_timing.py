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


def interleaved(contenders: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Median ms per call of each contender over `rounds` rounds; every round calls
    each contender once, in turn, so a burst of load on the machine hits all of
    them alike. One warm-up round first."""
    for fn in contenders.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(values) for name, values in times.items()}
