"""Measuring compiled functions, with TVM's names.

`module.time_evaluator("main", number=10, repeat=3, min_repeat_ms=0)(*args)` times
a function as TVM's `time_evaluator` does (without its device argument): one call
first, untimed, then `repeat` measurements, each the mean time of `number`
consecutive calls, `number` grown until a measurement lasts `min_repeat_ms`. The
result holds the measurements in seconds and their statistics.

`module.profile("main", *args, number=1)` (the name of TVM's former VM profiler)
calls the function once untimed, then `number` times in a build whose host code
times every kernel and packed call (`lowering/codegen/llvm_profile.py`), and
reports each kernel, each packed function and what the host did around them:
calls, total time, share of the whole. Only that build pays for the clock: the
module a user calls is compiled without it.
"""

from __future__ import annotations

import ctypes
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime.abi import PROFILE_COUNTERS, with_prefix
from tvmlite.runtime.kernels import PrimFuncKernel

if TYPE_CHECKING:
    from tvmlite.runtime.module import CompiledModule

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
        where = "" if ":" in name else "time_evaluator: "
        raise TVMLiteError(f"{where}{name} must be an int >= {least}, got {value!r}")
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
            elapsed = -1.0
            while True:
                if elapsed > 0.0:  # too short: TVM's next count
                    calls = max(int(least / (elapsed / calls)) + 1, int(calls * _GOLDEN_RATIO))
                elif elapsed == 0.0:  # below the clock's resolution
                    calls *= 2
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
    """Where the time of `number` calls of `function` went, most expensive first;
    `total` is the time of the calls, measured around them from Python."""

    function: str
    number: int
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
        total = f"{self.total * 1e3:>11.4f}"
        lines.append(f"{'total':<{width}}  {'':<6}  {self.number:>6}  {total}  {1:>6.1%}")
        calls = "1 call" if self.number == 1 else f"{self.number} calls"
        return f"{self.function}: {calls}\n" + "\n".join(lines) + "\n"

    def json(self) -> str:
        """The report as JSON: the function, the number of calls, their total time
        and one object per row."""
        rows = [r.__dict__ for r in self.rows]
        whole = {"function": self.function, "number": self.number, "total": self.total}
        return json.dumps({**whole, "rows": rows})

    def __str__(self) -> str:
        return self.table()


def profile(module: CompiledModule, name: str, args: Sequence[Any], number: int) -> ProfileReport:
    """`number` calls of `name` in `module` (a profiled build: its manifest lists
    the counters), after an untimed call that warms what a first call prepares."""
    number = _count(number, "profile: number", 1)
    fn = module[name]
    fn(*args)
    counters = None
    if not isinstance(fn, PrimFuncKernel):  # a kernel called from Python is the whole call
        rows = module.manifest["profile"]
        address = module.image.address(with_prefix(PROFILE_COUNTERS, module.prefix))
        counters = (ctypes.c_int64 * (2 * len(rows))).from_address(address)
        ctypes.memset(counters, 0, ctypes.sizeof(counters))
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    total = time.perf_counter() - start
    if counters is None:
        return make_report(name, number, total, [(name, "kernel", number, round(total * 1e9))])
    values = list(counters)
    found = [(n, kind, values[2 * k], values[2 * k + 1]) for k, (n, kind) in enumerate(rows)]
    return make_report(name, number, total, found)


def make_report(
    function: str, number: int, total: float, counters: Sequence[tuple[str, str, int, int]]
) -> ProfileReport:
    """The report of `number` calls that took `total` seconds, from the counters
    the profiled code kept: (name, kind, calls, nanoseconds) of each kernel and
    packed function. What the counters do not cover is the host's own time."""
    rows = [
        ProfileRow(name, kind, calls, nanos / 1e9, 0.0)
        for name, kind, calls, nanos in counters
        if calls
    ]
    timed = sum(r.seconds for r in rows)
    rows.append(ProfileRow("host", "host", number, max(total - timed, 0.0), 0.0))
    whole = max(total, timed) or 1.0
    ordered = sorted(rows, key=lambda r: r.seconds, reverse=True)
    shared = tuple(
        ProfileRow(r.name, r.kind, r.calls, r.seconds, r.seconds / whole) for r in ordered
    )
    return ProfileReport(function, number, shared, max(total, timed))
