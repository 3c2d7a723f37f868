"""Spatial stages: elementwise, broadcast and injective computations, fused or
not (the per-stage rule schedules kernels made only of them).

Producers are inlined into their consumers (a fused `add + relu` becomes one
loop reading `a + b`), unless that would compute a math call twice per element
(a producer with several readers). Each stage left is then a loop over its
output: the innermost W elements (W = one vector register) vectorized, the
loops outside them fused and run in parallel. A stage that reads across its
output (a transpose) is tiled instead (layout.py).
"""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.lowering.schedule import Schedule, ScheduleError
from tvmlite.lowering.schedule_rules.kernel import Kernel, Stage
from tvmlite.lowering.schedule_rules.layout import crossed_axis, tile_transpose
from tvmlite.lowering.schedule_rules.loops import lanes, parallel_outer, vectorize_tail


def inline_producers(sch: Schedule, kernel: Kernel) -> list[Stage]:
    """Inline the spatial stages that write intermediates into their readers,
    latest first; the stages left."""
    left = list(kernel.stages)
    for stage in reversed(kernel.stages[:-1]):
        if stage.is_reduction or stage.output in kernel.params:
            continue
        if len(kernel.consumers(stage)) > 1 and _has_calls(stage.block):
            continue
        try:
            sch.compute_inline(stage.name)
        except ScheduleError:
            continue  # stays a stage of its own (say, its store is not in axis order)
        left.remove(stage)
    return left


def schedule_spatial(sch: Schedule, stage: Stage) -> None:
    """Parallel outside, vectorized inside; tiled when the stage transposes."""
    axis = crossed_axis(stage)
    if axis is not None:
        tile_transpose(sch, stage, axis)
        return
    loops = sch.get_loops(stage.name)
    outer = vectorize_tail(sch, loops, lanes(stage.output.dtype))
    parallel_outer(sch, outer, stage.work)


def _has_calls(block: tir.Block) -> bool:
    found = _Calls()
    found.visit_stmt(block.body)
    return found.any


class _Calls(StmtExprVisitor):
    def __init__(self) -> None:
        self.any = False

    def visit_Call(self, e: tir.Call) -> None:
        self.any = True
