"""The register-blocked schedule of a contraction (gemm.py, conv.py choose the roles).

For C[..., i, ..., j] += X[...] * Y[...] with `j` the vector variable and `i` the
row variable the schedule is, per tile of MR rows and NR columns,

    for outer..., j_0, i_0 (fused, parallel):
        C_local[MR, NR] = 0                     # decompose_reduction: the init
        for r... (the reduction, in its loop order):
            for i_1 in unroll(MR):
                for j_1 in vectorized(NR):       # NR = two vector registers
                    C_local[i_1, j_1] += X[...] * Y_packed[..., j_0, r..., j_1]
        C[...] = epilogue(C_local[...])          # cache_write, write-back fused

`Y`, the operand read along `j`, is packed first (`cache_read` +
`transform_layout`) so that the NR values of one reduction step are contiguous
and successive steps adjacent (when they are not already: `_worth_packing`);
the accumulator tile is a `local` buffer that TIR lowering compacts to MR x NR
(CompactBuffers) and LLVM keeps in registers: MR * NR / L vector accumulators
(L lanes a register: 16 float32 with AVX-512, 8 with AVX2, 4 with NEON; the
target's `CPUTraits`), one broadcast of X and NR / L vector loads of Y per
MR * NR / L FMAs. Elementwise
consumers that FuseOps put after the contraction (bias add, relu, ...) are
inlined into the write-back, so C is written once, with the epilogue applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tvmlite.dsl import arith, tir
from tvmlite.dsl.analysis import uses
from tvmlite.lowering.codegen.cpu_traits import CPUTraits, cpu_traits
from tvmlite.lowering.schedule import BlockRV, IndexMap, LoopRV, Schedule, ScheduleError
from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules.contraction import (
    Contraction,
    Roles,
    block_realize,
    contraction_of,
    match_contraction,
)
from tvmlite.lowering.schedule_rules.packing import pack
from tvmlite.lowering.schedule_rules.tiling import chunk, plan, register_lanes

if TYPE_CHECKING:
    from tvmlite.lowering.schedule_rules.kernel import Kernel

# Tasks the constant tile loops of a kernel with symbolic extents must give
# the thread pool (a few per core) for them alone to run in parallel.
PARALLEL_TASKS = 8


def _vector_axis_last(sch: Schedule, block: BlockRV, c: Contraction, j: tir.Var) -> None:
    """Lay the accumulator tile out with the vector variable's axis last (NCHW
    conv writes [f, x] otherwise), so that its rows are whole registers."""
    axis = c.spatial.index(j)
    if axis == len(c.spatial) - 1:
        return
    dtype = c.output.shape[axis].dtype
    idx = tuple(tir.Var(f"i{a}", dtype) for a in range(len(c.spatial)))
    order = [a for a in range(len(idx)) if a != axis] + [axis]
    sch.transform_layout(block, ("write", 0), IndexMap(idx, tuple(idx[a] for a in order)))


def _vectorize_write_back(sch: Schedule, writeback: BlockRV, axis: int, depth: int) -> None:
    """Vectorize the write-back along the accumulator's last axis (the vector
    axis, output axis `axis`): its loop goes innermost. Along another axis the
    tile would be read by a gather, and a stack tile whose address feeds a
    vector of pointers counts as escaping for LLVM, which then keeps it in
    memory and guards every loop with alias checks. Only the write-back's own
    loops count, those below the `depth` tile loops (a tile one column wide
    has no loop along the vector axis)."""
    binding = block_realize(sch, writeback).iter_values[axis]
    loops = sch.get_loops(writeback)[depth:]
    along = [lp for lp in loops if uses(binding, {sch.get(lp).loop_var})]
    if not along:
        return
    inner = along[-1]
    position = loops.index(inner)
    if position != len(loops) - 1:
        sch.reorder(*loops[position + 1 :], inner)
    sch.vectorize(inner)


def _vectorize_columns(sch: Schedule, j1: LoopRV, nr: int, lanes: int) -> None:
    """Vectorize the NR columns of the micro-kernel, in chunks of `chunk`
    lanes (the outer loop unrolled): LLVM keeps a tile in registers only for
    power-of-two vector widths (24 columns vectorized whole: a third of the
    speed of 3 x 8)."""
    width = chunk(nr, lanes)
    if width == nr:
        sch.vectorize(j1)
        return
    outer, inner = sch.split(j1, [None, width])
    sch.unroll(outer)
    sch.vectorize(inner)


def inline_epilogue(sch: Schedule, writeback: BlockRV) -> None:
    """Fold the elementwise consumers of the write-back into it, one at a time,
    until one cannot be (not elementwise, several consumers, an output read
    elsewhere): those keep their own loops."""
    while True:
        consumers = sch.get_consumers(writeback)
        if len(consumers) != 1:
            return
        try:
            sch.reverse_compute_inline(consumers[0])
        except ScheduleError:
            return


class ContractionRule:
    """A default schedule rule for the contractions `roles` gives roles to (None:
    not this rule's). As DefaultCPUSchedule's registry asks (`matches(kernel)`,
    `apply(sch, kernel)`, schedule_rules/rule.py), and for one block of a
    schedule (`accepts(sch, block)`, `schedule(sch, block)`)."""

    name = "contraction"

    def roles(self, c: Contraction) -> Roles | None:
        raise NotImplementedError

    def tile_roles(self, c: Contraction) -> Roles | None:
        """`roles`, when the register tile can take them: with a symbolic vector
        axis only when its operand is read in place along it (no pack, whose
        panels would need a symbolic padding)."""
        roles = self.roles(c)
        if roles is None or roles.vector not in c.symbolic:
            return roles
        (reader,) = c.readers(roles.vector)
        axes = reader.plain_axes()
        last = len(reader.load.indices) - 1
        return roles if axes.get(roles.vector) == last else None

    def _find(self, kernel: Kernel) -> tuple[str, Contraction, Roles] | None:
        """The first reduction stage of `kernel` that is this rule's contraction."""
        tree = Tree(kernel.func)
        for stage in kernel.reductions:
            c = contraction_of(tree.realize_of[id(stage.block)], list(stage.loops))
            roles = None if c is None else self.tile_roles(c)
            if c is not None and roles is not None:
                return stage.name, c, roles
        return None

    def matches(self, kernel: Kernel) -> bool:
        return self._find(kernel) is not None

    def apply(self, sch: Schedule, kernel: Kernel) -> None:
        found = self._find(kernel)
        assert found is not None, "apply follows matches"
        name, c, roles = found
        schedule_tiled(sch, sch.get_sblock(name), c, roles, kernel.traits)

    def accepts(self, sch: Schedule, block: BlockRV) -> bool:
        c = match_contraction(sch, block)
        return c is not None and self.tile_roles(c) is not None

    def schedule(self, sch: Schedule, block: BlockRV, traits: CPUTraits | None = None) -> None:
        """Schedule `block` for the machine of `traits` (default: the current
        machine options')."""
        c = match_contraction(sch, block)
        roles = None if c is None else self.tile_roles(c)
        if c is None or roles is None:
            raise ScheduleError(f"{self.name}: the block is not one of this rule's contractions")
        schedule_tiled(sch, block, c, roles, cpu_traits() if traits is None else traits)


def _read_index(sch: Schedule, block: BlockRV, buffer: tir.Buffer) -> int:
    """Where `block` reads `buffer` now: padding the other side (pad_einsum)
    rewrites the block's reads."""
    return next(n for n, region in enumerate(sch.get(block).reads) if region.buffer is buffer)


def _parallel_producers(sch: Schedule, block: BlockRV) -> None:
    """Stages computing what the contraction reads (conv's padding, a layout
    copy): parallel over all loops but the innermost, which is vectorized (a
    padding's bounds test becomes a masked load: 3x faster than a branch per
    element). A primitive that cannot apply (loops not a perfect chain, a
    reduction) leaves the stage as it is; a pack stage is scheduled already."""
    for producer in sch.get_producers(block):
        loops = sch.get_loops(producer)
        if not loops or any(sch.get(lp).kind != tir.SERIAL for lp in loops):
            continue
        try:
            if len(loops) > 1:
                sch.parallel(sch.fuse(*loops[:-1]))
            sch.vectorize(loops[-1])
        except ScheduleError:
            continue


def _iterations(sch: Schedule, loops: list[LoopRV]) -> int:
    """Iterations of a nest of constant loops."""
    total = 1
    for lp in loops:
        total *= arith.as_int(sch.get(lp).extent) or 0
    return total


def _phase_split(sch: Schedule, block: BlockRV, c: Contraction, j: tir.Var) -> None:
    """Make strided reads along the vector axis contiguous: a depthwise conv of
    stride 2 reads its (padded) data at `x * 2 + rx`, which LLVM vectorizes
    poorly (4 lanes at a time, the accumulators in memory). The stage that
    writes the data (conv's padding) writes it by phase instead, [..., w % 2,
    w // 2], where the reads are [..., rx % 2, x + rx // 2]: contiguous in x
    (stride-2 depthwise 96x112x112 on one core: 3.1 ms -> 1.0 ms, its padding
    aside)."""
    for op in c.readers(j):
        for axis, index in enumerate(op.load.indices):
            form = arith.linear_form(index)
            stride = 0 if form is None else _coefficient(form[0], j)
            extent = arith.as_int(op.buffer.shape[axis])
            if stride < 2 or extent is None or extent % stride:
                continue
            writers = [
                p for p in sch.get_producers(block) if sch.get(p).writes[0].buffer is op.buffer
            ]
            if len(writers) != 1:
                continue
            dtype = index.dtype
            idx = tuple(tir.Var(f"i{a}", dtype) for a in range(len(op.load.indices)))
            step = tir.IntImm(dtype, stride)
            phased = (
                *idx[:axis],
                tir.BinaryOp("floormod", idx[axis], step, dtype),
                tir.BinaryOp("floordiv", idx[axis], step, dtype),
                *idx[axis + 1 :],
            )
            sch.transform_layout(writers[0], ("write", 0), IndexMap(idx, phased))
            # The copy loops by phase too, so that its stores are contiguous.
            loops = sch.get_loops(writers[0])
            if len(loops) == len(idx):
                within, phase = sch.split(loops[axis], [None, stride])
                sch.reorder(phase, within)


def _coefficient(terms: dict, var: tir.Var) -> int:
    return next((k for atom, k in terms.items() if atom.expr is var), 0)


def schedule_tiled(
    sch: Schedule, block: BlockRV, c: Contraction, roles: Roles, traits: CPUTraits
) -> None:
    tiling = plan(c, roles, traits)
    rows, columns = tiling.rows, tiling.columns
    j, i = roles.vector, roles.row
    writeback = step = None
    if rows.pad or columns.pad:
        # Axes grown to whole tiles: the padded copy of an operand is its pack,
        # or else (columns) made per reduction step; the padded output, the
        # accumulator, is copied back under a guard.
        padded = {side.var: side.size for side in (rows, columns) if side.pad}
        order = sorted(c.position, key=c.position.__getitem__)
        sch.pad_einsum(block, [padded.get(v, 1) for v in order])
        sch.set_scope(block, 0, "local")
        writeback = sch.get_sblock(f"{c.output.name}_pad")
    for side in (rows, columns):
        reader = c.readers(side.var)[0]
        if side.pad:
            stage = sch.get_sblock(f"{reader.buffer.name}_pad")
        elif side.packed is not None:
            stage = sch.cache_read(block, _read_index(sch, block, side.packed.buffer), "global")
        else:
            continue
        if side.packed is not None:
            line = traits.l1.line
            pack(sch, stage, c, side.packed, side.var, side.size, side is columns, line)
        else:
            step = stage
    _phase_split(sch, block, c, j)
    _parallel_producers(sch, block)
    loops = c.loops(sch, block)
    i0, i1 = sch.split(loops[i], [None, rows.size])
    j0, j1 = sch.split(loops[j], [None, columns.size])
    # Loops of variables the operand read along `j` reads (batch) go outside the
    # column panels, the others (conv's output rows) inside them, so a panel is
    # reused.
    readers = c.readers(j)
    outer = [v for v in c.spatial if v not in (i, j)]
    first = [loops[v] for v in outer if len(readers) == 1 and readers[0].reads(v)]
    second = [loops[v] for v in outer if not (len(readers) == 1 and readers[0].reads(v))]
    tile_loops = [*first, j0, *second, i0]
    serial: list[LoopRV] = []
    if j in c.symbolic:
        # A symbolic vector axis: its column tiles run one after the other inside
        # the parallel loop, the last one guarded; PartitionLoops then runs the
        # whole ones without the guard, their tile in registers.
        tile_loops.remove(j0)
        serial = [j0]
    if c.symbolic:
        symbolic = {lp for v, lp in loops.items() if v in c.symbolic}
        symbolic |= {i0} if i in c.symbolic else set()
        fixed = [lp for lp in tile_loops if lp not in symbolic]
        moving = [lp for lp in tile_loops if lp in symbolic]
        if fixed and _iterations(sch, fixed) >= PARALLEL_TASKS:
            # Enough tasks in the constant tile loops: they run in parallel, the
            # symbolic ones serially inside each task. No index needs a
            # division, a column panel stays in cache across the rows, and
            # PartitionLoops runs the whole row tiles without the guard.
            tile_loops, serial = fixed, [*moving, *serial]
        else:
            # Symbolic loops outermost: the fused parallel loop then recovers
            # every index by dividing by constants. A division by a symbolic
            # extent inside the tile cannot be hoisted out of the guarded rows
            # (its divisor might be 0), nor seen through by the vector code.
            tile_loops = [*moving, *fixed]
    sch.reorder(*tile_loops, *serial, *(loops[r] for r in c.reduce), i1, j1)
    if step is not None:
        # NR values of the operand per reduction step, zero past its end: one
        # masked vector load, kept in a register for the MR rows.
        sch.compute_at(step, loops[c.reduce[-1]])
        sch.set_scope(step, 0, "local")
        sch.vectorize(sch.get_loops(step)[-1])
    if writeback is None:
        writeback = sch.cache_write(block, 0, "local")
    _vector_axis_last(sch, block, c, j)
    sch.reverse_compute_at(writeback, [*tile_loops, *serial][-1])
    inline_epilogue(sch, writeback)
    _vectorize_write_back(sch, writeback, c.spatial.index(j), len(tile_loops) + len(serial))
    sch.unroll(i1)
    _vectorize_columns(sch, j1, columns.size, register_lanes(c, traits))
    sch.parallel(sch.fuse(*tile_loops) if len(tile_loops) > 1 else tile_loops[0])
    # Last: loop kinds can only change above a block that still has its init.
    sch.decompose_reduction(block, loops[c.reduce[0]])
