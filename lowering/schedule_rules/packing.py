"""The pack stage of a contraction: a copy of the operand read along the vector
axis, laid out in column panels [other axes..., j // NR, reduction axes...,
j % NR], so that the NR values of one reduction step are contiguous and
successive steps adjacent.

The copy is a stage of its own (`<buffer>_global` made by cache_read, or
`<buffer>_pad` made by pad_einsum when the columns are padded), so that a
graph-level pass can find it and hoist it out of the call for a constant
weight. Elementwise or layout stages computing the operand inside the kernel
(a transposed weight) are inlined into it: the operand is then read once, in
its own layout, by the one copy. The copy runs in the panel's order, its NR
lanes vectorized (contiguous stores), in parallel over the panels.

A copy that reads only parameters of the function carries TVM's block
annotation `meta_schedule.layout_rewrite_preproc` (what MetaSchedule's
RewriteLayout marks and Relax's SplitLayoutRewritePreproc splits out into a
function of its own): the mark by which a graph pass may run it once, at
build time, for a weight that is a constant or bound parameter.
"""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.lowering.schedule import BlockRV, IndexMap, Schedule, ScheduleError
from tvmlite.lowering.schedule_rules.contraction import Contraction, Operand, function_name

PREPROC = "meta_schedule.layout_rewrite_preproc"  # TVM's mark of a hoistable layout rewrite


def panel_map(c: Contraction, operand: Operand, var: tir.Var, size: int) -> IndexMap:
    """The operand's index -> its place in the packed copy, panels of `size`
    along `var`."""
    axes = operand.plain_axes()
    j_axis = axes[var]
    reduce_axes = sorted(axes[r] for r in c.reduce if r in axes)
    rank = len(operand.load.indices)
    other = [a for a in range(rank) if a != j_axis and a not in reduce_axes]
    dtype = operand.load.indices[j_axis].dtype
    idx = tuple(tir.Var(f"i{a}", dtype) for a in range(rank))
    nr_imm = tir.IntImm(dtype, size)
    final = (
        *(idx[a] for a in other),
        tir.BinaryOp("floordiv", idx[j_axis], nr_imm, dtype),
        *(idx[a] for a in reduce_axes),
        tir.BinaryOp("floormod", idx[j_axis], nr_imm, dtype),
    )
    return IndexMap(idx, final)


def pack(
    sch: Schedule,
    stage: BlockRV,
    c: Contraction,
    operand: Operand,
    var: tir.Var,
    size: int,
    vectorize: bool,
) -> None:
    """Lay the copy `stage` (one loop per axis of the operand, in order) out in
    panels of `size` along `var`, inline what computes the operand into it, and
    order its loops as the panels: the `size` lanes innermost (vectorized for
    the columns: contiguous stores and loads), the panel loops parallel."""
    sch.transform_layout(stage, ("write", 0), panel_map(c, operand, var, size))
    _inline_producers(sch, stage)
    if _reads_parameters_only(sch, stage):
        sch.annotate(stage, PREPROC, True)
    axes = operand.plain_axes()
    loops = sch.get_loops(stage)
    reduce_axes = sorted(axes[r] for r in c.reduce if r in axes)
    other = [a for a in range(len(loops)) if a != axes[var] and a not in reduce_axes]
    outer, lanes = sch.split(loops[axes[var]], [None, size])
    panels = [*(loops[a] for a in other), outer]
    sch.reorder(*panels, *(loops[a] for a in reduce_axes), lanes)
    if vectorize:
        sch.vectorize(lanes)
    else:
        sch.unroll(lanes)  # rows: one load from each, stores LLVM merges
    # Only the panel loops are fused: a fused reduction loop would recompute
    # its index by a division per NR lanes, 4x slower than the copy itself.
    sch.parallel(sch.fuse(*panels) if len(panels) > 1 else panels[0])


def _reads_parameters_only(sch: Schedule, stage: BlockRV) -> bool:
    func = sch.mod[function_name(sch)]
    params = {b for _, b in func.buffer_map}
    block = sch.get(stage)
    assert isinstance(block, tir.Block)
    return all(r.buffer in params for r in block.reads)


def _inline_producers(sch: Schedule, stage: BlockRV) -> None:
    """Inline the stages that compute what the copy reads, nearest first, while
    they inline (spatial, one consumer, not an output)."""
    while True:
        producers = sch.get_producers(stage)
        if not producers:
            return
        try:
            sch.compute_inline(producers[-1])
        except ScheduleError:
            return
