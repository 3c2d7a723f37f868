"""Spatial stages: elementwise, broadcast and injective computations, fused or
not (the per-stage rule schedules kernels made only of them).

Producers are inlined into their consumers (a fused `add + relu` becomes one
loop reading `a + b`), unless that would compute a math call twice per element
(a producer with several readers) or copy more than a little arithmetic (a
producer read several times: inlining a chain of `v = v + v` into its last stage
doubles the expression at every step). Each stage left is then a loop over its
output: the innermost W elements (W = one vector register) vectorized, the
loops outside them fused and run in parallel. A stage that reads across its
output (a transpose) is tiled instead (layout.py).
"""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.lowering.codegen.cpu_traits import CPUTraits
from tvmlite.lowering.schedule import Schedule, ScheduleError
from tvmlite.lowering.schedule_rules.kernel import Kernel, Stage
from tvmlite.lowering.schedule_rules.layout import crossed_axis, tile_transpose
from tvmlite.lowering.schedule_rules.loops import parallel_outer, vectorize_tail

# Expression nodes the copies of an inlined producer may add to its readers: a
# few cheap operations recomputed beat a round trip through memory, a growing
# expression does not (and costs every later pass its size).
INLINE_COPY_BUDGET = 64


def inline_producers(sch: Schedule, kernel: Kernel) -> list[Stage]:
    """Inline the spatial stages that write intermediates into their readers,
    latest first; the stages left."""
    left = list(kernel.stages)
    for stage in reversed(kernel.stages[:-1]):
        if stage.is_reduction or stage.output in kernel.params:
            continue
        if len(kernel.consumers(stage)) > 1 and _has_calls(stage.block):
            continue
        if _copied_nodes(sch, stage) > INLINE_COPY_BUDGET:
            continue
        try:
            sch.compute_inline(stage.name)
        except ScheduleError:
            continue  # stays a stage of its own (say, its store is not in axis order)
        left.remove(stage)
    return left


def schedule_spatial(sch: Schedule, stage: Stage, traits: CPUTraits) -> None:
    """Parallel outside, vectorized inside (one vector of the machine of `traits`);
    tiled when the stage transposes."""
    axis = crossed_axis(stage)
    if axis is not None:
        tile_transpose(sch, stage, axis, traits)
        return
    loops = sch.get_loops(stage.name)
    outer = vectorize_tail(sch, loops, traits.lanes(stage.output.dtype))
    parallel_outer(sch, outer, stage.work)


def _copied_nodes(sch: Schedule, stage: Stage) -> int:
    """How many expression nodes inlining `stage` would add beyond moving its
    expression once: its size times its reads in the current readers, less one."""
    readers = [sch.get(rv) for rv in sch.get_consumers(stage.name)]
    reads = _Nodes(stage.output)
    for reader in readers:
        assert isinstance(reader, tir.Block)
        reads.visit_stmt(reader.body)
    if reads.loads < 2:
        return 0
    size = _Nodes(stage.output)
    store = stage.block.body
    size.visit_expr(store.value if isinstance(store, tir.BufferStore) else store)
    return size.nodes * (reads.loads - 1)


class _Nodes(StmtExprVisitor):
    """Counts expression nodes, and the loads of one buffer."""

    def __init__(self, buffer: tir.Buffer) -> None:
        self.buffer = buffer
        self.nodes = 0
        self.loads = 0

    def visit_expr(self, e: tir.PrimExpr) -> None:
        self.nodes += 1
        super().visit_expr(e)

    def visit_BufferLoad(self, e: tir.BufferLoad) -> None:
        self.loads += e.buffer == self.buffer
        super().visit_BufferLoad(e)


def _has_calls(block: tir.Block) -> bool:
    found = _Calls()
    found.visit_stmt(block.body)
    return found.any


class _Calls(StmtExprVisitor):
    def __init__(self) -> None:
        self.any = False

    def visit_Call(self, e: tir.Call) -> None:
        self.any = True
