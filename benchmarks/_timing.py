"""Timing shared by the benchmarks (run as `python benchmarks/NAME.py`, which
puts this folder on the import path)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def timings(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(median, best) of `repeat` calls in ms, after one warm-up call."""
    fn()
    times = [stopwatch(fn)() for _ in range(repeat)]
    return statistics.median(times), min(times)


def stopwatch(
    fn: Callable[[], Any], number: int = 1, clock: Callable[[], float] = time.perf_counter
) -> Callable[[], float]:
    """A run of `number` calls of `fn`, returning ms per call: a batch of calls
    makes a call of a few microseconds measurable with one clock reading.
    `clock=time.process_time` counts the processor time of the process instead
    (all its threads): on a shared machine, the time others' work preempts it
    is left out."""

    def run() -> float:
        start = clock()
        for _ in range(number):
            fn()
        return (clock() - start) * 1e3 / number

    return run


def autorange(fn: Callable[[], Any], min_ms: float) -> int:
    """The number of calls of `fn` (1, 2, 5, 10, 20, ...) a batch needs to last
    at least `min_ms`."""
    number = 1
    while True:
        for factor in (1, 2, 5):
            if stopwatch(fn, number * factor)() * number * factor >= min_ms:
                return number * factor
        number *= 10


@dataclass(frozen=True)
class Summary:
    """Times of one contender over the rounds, in ms per call."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def best(self) -> float:
        return min(self.samples)


def interleaved_samples(
    runs: dict[str, Callable[[], float]], rounds: int, warmup: bool = True
) -> dict[str, Summary]:
    """Each run returns the ms of one timed run of its contender (its own
    stopwatch, in this process or in a worker process). Every round runs each
    contender once, in turn, so a burst of load on the machine hits all of them
    alike; the order rotates from round to round so no contender always follows
    the same one (a BLAS library's threads may still spin after its call). One
    warm-up round first unless `warmup` is False (the caller already ran them)."""
    if warmup:
        for run in runs.values():
            run()
    names = list(runs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            times[name].append(runs[name]())
    return {name: Summary(tuple(values)) for name, values in times.items()}


def interleaved(contenders: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Median ms per call of each contender over `rounds` interleaved rounds
    (`interleaved_samples` with one call a run), after one warm-up round."""
    runs = {name: stopwatch(fn) for name, fn in contenders.items()}
    return {name: s.median for name, s in interleaved_samples(runs, rounds).items()}
