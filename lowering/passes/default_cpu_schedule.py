"""DefaultCPUSchedule: give every unscheduled prim function a CPU schedule.

The CPU counterpart of TVM's DefaultGPUSchedule. For each prim function
without the `tir.is_scheduled` attribute (`tirx.is_scheduled` in 0.27 text)
it reads what the function computes (`schedule_rules.Kernel`: stages, axis
kinds, access patterns, op pattern), asks the rules of
`schedule_rules.RULES` in order for the first that matches, applies it with
`tvmlite.tir.Schedule`, and marks the result scheduled. The rules size
vectors, register tiles and cache-aware choices for the pass's target (its
`traits`: vector width, registers, caches; the current machine options' when
the pass has no target). So legalized
operators, fused kernels and hand-written block kernels are all scheduled,
whatever they are called; functions a user scheduled (marked) are left alone.

A rule that cannot apply (a primitive raising `ScheduleError`) leaves the
function as it was, unmarked; the build goes on with the plain loop nest
(logged at debug level on the `tvmlite.schedule` logger). The PassContext
config `tir.default_cpu_schedule` (default True) turns the pass off. Under
`PassContext(verify=True)` the TIR verifier runs after every primitive.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.target import Target, kind_of
from tvmlite.lowering.transform import Pass, PassContext

CONFIG_KEY = "tir.default_cpu_schedule"
SCHEDULED = ("tir.is_scheduled", "tirx.is_scheduled")
LOG = logging.getLogger("tvmlite.schedule")


def is_scheduled(func: tir.PrimFunc) -> bool:
    return any(bool(func.attr(key, False)) for key in SCHEDULED)


@dataclass(frozen=True)
class DefaultCPUSchedule(Pass):
    """Schedule every prim function not marked `tir.is_scheduled` by the first
    default rule that matches it (lowering/schedule_rules/), for `target`
    (None: the machine of the current machine options, by default the host)."""

    target: Target | None = None
    name: str = "DefaultCPUSchedule"

    def run(self, mod: IRModule) -> IRModule:
        from tvmlite.lowering.codegen.cpu_traits import cpu_traits

        if not PassContext.current().get(CONFIG_KEY, True):
            return mod
        traits = cpu_traits() if self.target is None else self.target.traits
        functions: dict[str, Any] = dict(mod.functions)
        for gname, func in mod.functions.items():
            if isinstance(func, tir.PrimFunc) and not is_scheduled(func) and _for_cpu(func):
                scheduled = schedule(gname, func, mod.dialect, traits)
                if scheduled is not None:
                    functions[gname] = scheduled
        return mod.with_functions(functions)


def schedule(
    name: str, func: tir.PrimFunc, dialect: Any = None, traits: Any = None
) -> tir.PrimFunc | None:
    """`func` scheduled by the first matching rule for the machine of `traits`
    (a `CPUTraits`; None: the current machine options') and marked scheduled, or
    None when no rule matches it or the rule fails."""
    from tvmlite.lowering.schedule import Schedule, ScheduleError
    from tvmlite.lowering.schedule_rules import Kernel, rule_for

    kernel = Kernel.of(name, func, traits)
    rule = None if kernel is None else rule_for(kernel)
    if kernel is None or rule is None:
        return None
    debug = "all" if PassContext.current().verifies() else "none"
    sch = Schedule(IRModule({name: func}, dialect=dialect), debug_mask=debug)
    sch.work_on(name)
    try:
        rule.apply(sch, kernel)
    except ScheduleError as err:
        LOG.debug(
            "DefaultCPUSchedule: rule %s failed on %s, left unscheduled: %s", rule.name, name, err
        )
        return None
    done = sch.mod[name]
    key = SCHEDULED[1] if done.s_tir else SCHEDULED[0]
    attrs = tuple(sorted((*done.attrs, (key, True)), key=itemgetter(0)))
    return dataclasses.replace(done, attrs=attrs)


def _for_cpu(func: tir.PrimFunc) -> bool:
    """Functions for another target kind are that kind's business."""
    return kind_of(func.attr("target")) in (None, "llvm")
