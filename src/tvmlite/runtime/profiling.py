"""Measuring compiled functions, with TVM's names.

`module.time_evaluator("main", number=10, repeat=3, min_repeat_ms=0)(*args)` times
a function as TVM's `time_evaluator` does (without its device argument): one call
first, untimed, then `repeat` measurements, each the mean time of `number`
consecutive calls, `number` grown until a measurement lasts `min_repeat_ms`. The
result holds the measurements in seconds and their statistics.

`module.profile("main", *args)` (the name of TVM's former VM profiler) runs the
function once in a build whose host code times every kernel call
(`lowering/codegen/llvm_profile.py`) and reports each kernel and what the host did
around them: calls, total time, share of the whole. Only that build pays for the
clock: the module a user calls is compiled without it.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import TVMLiteError

# TVM's rule for the next `number` when a measurement was too short.
_GOLDEN_RATIO = 1.618


@dataclass(frozen=True)
class BenchmarkResult:
    """Measurements of one function in seconds (each the mean of `number` calls)
    and their statistics, as TVM's `BenchmarkResult`."""

    results: tuple[float, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        return min(self.results)

    @property
    def max(self) -> float:
        return max(self.results)

    @property
    def std(self) -> float:
        """The population standard deviation (NumPy's and TVM's), 0 for one result."""
        return statistics.pstdev(self.results)

    def __str__(self) -> str:
        heads = ("mean (ms)", "median (ms)", "max (ms)", "min (ms)", "std (ms)")
        values = (self.mean, self.median, self.max, self.min, self.std)
        return (
            "Execution time summary:\n"
            + " ".join(f"{h:>12}" for h in heads)
            + "\n"
            + " ".join(f"{v * 1e3:12.4f}" for v in values)
            + "\n"
        )

    def __repr__(self) -> str:
        return (
            f"BenchmarkResult(min={self.min!r}, mean={self.mean!r}, median={self.median!r}, "
            f"max={self.max!r}, std={self.std!r}, results={self.results!r})"
        )


def _count(value: Any, name: str, least: int) -> int:
    if type(value) is not int or value < least:
        raise TVMLiteError(f"time_evaluator: {name} must be an int >= {least}, got {value!r}")
    return value


def _milliseconds(value: Any, name: str) -> float:
    if type(value) not in (int, float) or not value >= 0:
        raise TVMLiteError(f"time_evaluator: {name} must be a number >= 0, got {value!r}")
    return float(value)


def time_evaluator(
    function: Callable[..., Any],
    number: int = 10,
    repeat: int = 1,
    min_repeat_ms: float = 0,
    cooldown_interval_ms: float = 0,
    repeats_to_cooldown: int = 1,
) -> Callable[..., BenchmarkResult]:
    """`function`'s timer (see the module docstring; the options are TVM's and are
    checked here, before anything runs)."""
    number = _count(number, "number", 1)
    repeat = _count(repeat, "repeat", 1)
    repeats_to_cooldown = _count(repeats_to_cooldown, "repeats_to_cooldown", 1)
    least = _milliseconds(min_repeat_ms, "min_repeat_ms") / 1e3
    cooldown = _milliseconds(cooldown_interval_ms, "cooldown_interval_ms") / 1e3

    def timed(*args: Any) -> BenchmarkResult:
        function(*args)  # warms up what the first call prepares (as TVM does)
        clock = time.perf_counter
        calls, results = number, []
        for k in range(repeat):
            elapsed = 0.0
            while True:
                if elapsed > 0.0:  # too short: TVM's next count
                    calls = max(int(least / (elapsed / calls)) + 1, int(calls * _GOLDEN_RATIO))
                start = clock()
                for _ in range(calls):
                    function(*args)
                elapsed = clock() - start
                if elapsed >= least:
                    break
            results.append(elapsed / calls)
            if cooldown and (k + 1) % repeats_to_cooldown == 0:
                time.sleep(cooldown)
        return BenchmarkResult(tuple(results))

    return timed


@dataclass(frozen=True)
class ProfileRow:
    """One line of a profile: a kernel (`kind` "kernel"), a packed function the
    host called ("packed"), or the host's own work ("host": argument checks,
    allocation, releases, result arrays)."""

    name: str
    kind: str
    calls: int
    seconds: float
    share: float  # of the whole call, 0..1


@dataclass(frozen=True)
class ProfileReport:
    """Where the time of one call went, most expensive first; `total` is the
    call's own time, measured around it."""

    function: str
    rows: tuple[ProfileRow, ...]
    total: float

    def table(self) -> str:
        """The rows as an aligned text table (what `str()` and `tvms run --profile` print)."""
        width = max([len("name"), *(len(r.name) for r in self.rows)])
        lines = [f"{'name':<{width}}  {'kind':<6}  {'calls':>6}  {'total (ms)':>11}  {'share':>6}"]
        for r in self.rows:
            lines.append(
                f"{r.name:<{width}}  {r.kind:<6}  {r.calls:>6}  {r.seconds * 1e3:>11.4f}  "
                f"{r.share:>6.1%}"
            )
        lines.append(f"{'total':<{width}}  {'':<6}  {1:>6}  {self.total * 1e3:>11.4f}  {1:>6.1%}")
        return "\n".join(lines) + "\n"

    def json(self) -> str:
        """The report as JSON: the function, the total and one object per row."""
        rows = [r.__dict__ for r in self.rows]
        return json.dumps({"function": self.function, "total": self.total, "rows": rows})

    def __str__(self) -> str:
        return self.table()


def make_report(
    function: str, total: float, counters: Sequence[tuple[str, str, int, int]]
) -> ProfileReport:
    """The report of one call that took `total` seconds, from the counters the
    profiled code kept: (name, kind, calls, nanoseconds) of each kernel and packed
    function. What the counters do not cover is the host's own time."""
    rows = [
        ProfileRow(name, kind, calls, nanos / 1e9, 0.0)
        for name, kind, calls, nanos in counters
        if calls
    ]
    timed = sum(r.seconds for r in rows)
    rows.append(ProfileRow("host", "host", 1, max(total - timed, 0.0), 0.0))
    whole = max(total, timed) or 1.0
    ordered = sorted(rows, key=lambda r: r.seconds, reverse=True)
    shared = tuple(
        ProfileRow(r.name, r.kind, r.calls, r.seconds, r.seconds / whole) for r in ordered
    )
    return ProfileReport(function, shared, max(total, timed))
