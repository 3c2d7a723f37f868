"""The interface of a default schedule rule."""

from __future__ import annotations

from typing import Protocol

from tvmlite.lowering.schedule import Schedule
from tvmlite.lowering.schedule_rules.kernel import Kernel


class Rule(Protocol):
    """Schedules the kernels it matches. `matches` reads the kernel's structure
    (stages, axis kinds, access patterns, op pattern); `apply` schedules it with
    `tvmlite.tir.Schedule` primitives (the schedule works on `kernel.name`), for
    the machine `kernel.traits` describes (vector width, registers, caches). A
    primitive that cannot apply raises `ScheduleError`, and the pass then keeps
    the function unscheduled, so `apply` need not check what the primitives do."""

    name: str

    def matches(self, kernel: Kernel) -> bool: ...

    def apply(self, sch: Schedule, kernel: Kernel) -> None: ...
