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
lanes vectorized (contiguous stores), in parallel over the panels; from a source
contiguous along the reduction (a dense layer's `w[j, k]`, rows of `x[i, k]`) it
reads each source row a cache line at a time instead, the lanes outside.

A copy that reads only parameters of the function carries TVM's block
annotation `meta_schedule.layout_rewrite_preproc` (what MetaSchedule's
RewriteLayout marks and Relax's SplitLayoutRewritePreproc splits out into a
function of its own): the mark by which a graph pass may run it once, at
build time, for a weight that is a constant or bound parameter.
"""

from __future__ import annotations

from tvmlite.dsl import arith, tir
from tvmlite.dsl import dtype as dt
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
    line_bytes: int,
) -> None:
    """Lay the copy `stage` (one loop per axis of the operand, in order) out in
    panels of `size` along `var`, inline what computes the operand into it, and
    order its loops as the panels: the `size` lanes innermost (vectorized for
    the columns: contiguous stores and loads), the panel loops parallel;
    `line_bytes` is the machine's cache line (`CPUTraits.l1.line`)."""
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
    line = _line_split(sch, loops, operand, axes[var], reduce_axes, line_bytes)
    if line is None:
        sch.reorder(*panels, *(loops[a] for a in reduce_axes), lanes)
        if vectorize:
            sch.vectorize(lanes)
        else:
            sch.unroll(lanes)  # rows: one load from each, stores LLVM merges
    else:
        # The source is contiguous along its last (reduction) axis: each of the
        # `size` rows a panel gathers from is read a cache line at a time, so a
        # line is used whole once it is loaded. Read lane by lane instead, the
        # `size` lines of one step are a row stride apart, and when that is a
        # multiple of 4 KiB they share one L1 set and evict each other: the copy
        # of a 768 x 3072 dense weight took 70% of its 128-row product.
        (k_outer, k_inner), last = line
        reduce_loops = [k_outer if a == last else loops[a] for a in reduce_axes]
        sch.reorder(*panels, *reduce_loops, lanes, k_inner)
        sch.unroll(k_inner)
    # Only the panel loops are fused: a fused reduction loop would recompute
    # its index by a division per NR lanes, 4x slower than the copy itself.
    sch.parallel(sch.fuse(*panels) if len(panels) > 1 else panels[0])


def _line_split(
    sch: Schedule,
    loops: list,
    operand: Operand,
    lane_axis: int,
    reduce_axes: list[int],
    line_bytes: int,
) -> tuple[tuple, int] | None:
    """When the operand's last axis is a reduction axis (not the panel's lanes)
    whose extent whole cache lines divide: that loop split into (lines, one
    line), and the axis."""
    last = len(operand.load.indices) - 1
    if lane_axis == last or last not in reduce_axes:
        return None
    per_line = line_bytes // max(dt.bits(operand.buffer.dtype) // 8, 1)
    extent = arith.as_int(sch.get(loops[last]).extent)
    if extent is None or extent <= per_line or extent % per_line:
        return None
    return tuple(sch.split(loops[last], [None, per_line])), last


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
