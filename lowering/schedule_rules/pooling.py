"""Pooling, and every reduction whose data is contiguous along an output axis
rather than a reduced one: max/avg pools (NCHW along w, NHWC along c),
adaptive pools, sum/mean/max over a leading axis.

The reduced elements of one output are far apart in memory, but neighbouring
outputs read neighbouring elements. So the contiguous output axis goes
innermost, W lanes vectorized, under the reduction loops: each step of the
window (or of the reduced axis) updates W outputs at once. The padding
stage is inlined into the reads; the other output axes are fused and run in
parallel, and a stage after the reduction (avg_pool's division) is computed
inside that parallel loop.
"""

from __future__ import annotations

from tvmlite.lowering.codegen.cpu_traits import CPUTraits
from tvmlite.lowering.schedule import LoopRV, Schedule
from tvmlite.lowering.schedule_rules.injective import inline_producers, schedule_spatial
from tvmlite.lowering.schedule_rules.kernel import Kernel, Stage, current_stage
from tvmlite.lowering.schedule_rules.loops import exceeds, parallel_outer, vectorize_tail


def contiguous_output_axis(stage: Stage) -> int | None:
    """The spatial loop along which the reduction's data is contiguous."""
    spatial = [i for i in stage.innermost_axes() if stage.kinds[i] == "S"]
    return spatial[0] if len(spatial) == 1 else None


class Pooling:
    name = "pooling"

    def matches(self, kernel: Kernel) -> bool:
        reductions = kernel.reductions
        return len(reductions) == 1 and contiguous_output_axis(reductions[0]) is not None

    def apply(self, sch: Schedule, kernel: Kernel) -> None:
        anchor = kernel.reductions[0]
        left = [s.name for s in inline_producers(sch, kernel)]
        at = left.index(anchor.name)
        for name in left[:at]:  # producers that could not be inlined
            schedule_spatial(sch, current_stage(sch, name), kernel.traits)
        fused = schedule_window(sch, anchor, kernel.traits)
        for name in left[at + 1 :]:
            if fused is None:
                schedule_spatial(sch, current_stage(sch, name), kernel.traits)
                continue
            sch.reverse_compute_at(name, fused)
            width = kernel.traits.lanes(kernel.stage(name).output.dtype)
            vectorize_tail(sch, sch.get_loops(name)[1:], width)


def schedule_window(sch: Schedule, stage: Stage, traits: CPUTraits) -> LoopRV | None:
    """The contiguous output axis of reduction `stage` innermost (vectorized)
    under its reduction loops, the other output axes fused and parallel; the
    fused loop (None when there is none)."""
    axis = contiguous_output_axis(stage)  # inlining changes the reads, not the loops
    assert axis is not None
    loops = sch.get_loops(stage.name)
    width = traits.lanes(stage.output.dtype)
    inner = loops[axis]
    outer = [lp for i, lp in enumerate(loops) if stage.kinds[i] == "S" and i != axis]
    if exceeds(stage.extents[axis], width):
        rest, inner = sch.split(inner, factors=[None, width])
        outer.append(rest)
    reduce = [lp for i, lp in enumerate(loops) if stage.kinds[i] == "R"]
    sch.reorder(*outer, *reduce, inner)
    sch.vectorize(inner)
    fused = parallel_outer(sch, outer, stage.work)
    # The init goes above the reduction loops (after parallel: TVM refuses to
    # parallelize above a decomposed update); the loops are fused, reduce..., inner.
    sch.decompose_reduction(stage.name, sch.get_loops(stage.name)[0 if fused is None else 1])
    return fused
