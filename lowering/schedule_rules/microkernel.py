"""The register-blocked schedule of a contraction (gemm.py, conv.py choose the roles).

For C[..., i, ..., j] += X[...] * Y[...] with `j` the vector variable and `i` the
row variable the schedule is, per tile of MR rows and NR columns,

    for outer..., j_0, i_0 (fused, parallel):
        C_local[MR, NR] = 0                     # decompose_reduction: the init
        for r... (the reduction, in its loop order):
            for i_1 in unroll(MR):
                for j_1 in vectorized(NR):       # NR = two 512-bit registers
                    C_local[i_1, j_1] += X[...] * Y_packed[..., j_0, r..., j_1]
        C[...] = epilogue(C_local[...])          # cache_write, write-back fused

`Y`, the operand read along `j`, is packed first (`cache_read` +
`transform_layout`) so that the NR values of one reduction step are contiguous
and successive steps adjacent (when they are not already: `_worth_packing`);
the accumulator tile is a `local` buffer that TIR lowering compacts to MR x NR
(CompactBuffers) and LLVM keeps in registers: MR * NR / 16 zmm accumulators, one
broadcast of X and NR / 16 vector loads of Y per MR * NR / 16 FMAs. Elementwise
consumers that FuseOps put after the contraction (bias add, relu, ...) are
inlined into the write-back, so C is written once, with the epilogue applied.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tvmlite.dsl import arith, tir
from tvmlite.dsl import dtype as dt
from tvmlite.dsl.analysis import uses
from tvmlite.lowering.schedule import BlockRV, IndexMap, LoopRV, Schedule, ScheduleError
from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules.contraction import (
    Contraction,
    Operand,
    Roles,
    block_realize,
    contraction_of,
    match_contraction,
)

if TYPE_CHECKING:
    from tvmlite.lowering.schedule_rules.kernel import Kernel

VECTOR_BYTES = 64  # one AVX-512 register
ROW_CHOICES = (12, 10, 8, 6, 5, 4)  # MR: 12 x 32 fp32 is 24 accumulators of 32 registers
ACCUMULATORS = 24  # vector registers the tile may take: LLVM spills beyond (24 x 8 at 12 rows)


def tile_sizes(c: Contraction, roles: Roles) -> tuple[int, int]:
    """(MR, NR): NR columns (`_columns`), MR the largest row count of
    ROW_CHOICES that divides the rows and keeps MR x (registers of a row) within
    ACCUMULATORS, else the largest that fits, with a predicated last tile (a
    predicate on rows costs little: it is the same for a whole vector)."""
    lanes = register_lanes(c)
    n, m = c.extents[roles.vector], c.extents[roles.row]
    nr = _columns(n, lanes)
    width = _chunk(nr, lanes)
    per_row = nr // width if width < nr else -(-nr // lanes)
    fits = [mr for mr in ROW_CHOICES if mr * per_row <= ACCUMULATORS] or [min(ROW_CHOICES)]
    divisors = [mr for mr in fits if m % mr == 0]
    mr = divisors[0] if divisors else min(fits[0], m)
    return mr, nr


def _chunk(nr: int, lanes: int) -> int:
    """The lanes of one vector of a row of NR columns: NR when it is a power of
    two or has no power-of-two factor of 4 or more (then vectorized whole), else
    that factor up to a register (24 columns: 3 x 8)."""
    width = min(nr & -nr, lanes)
    return nr if nr & (nr - 1) == 0 or width < 4 else width


def register_lanes(c: Contraction) -> int:
    """Elements of the output dtype in one vector register."""
    return max(VECTOR_BYTES * 8 // max(dt.bits(c.output.dtype), 8), 1)


def whole_registers(c: Contraction, var: tir.Var) -> bool:
    """Whether vectorizing `var` gives tiles of whole or half registers, the
    widths LLVM keeps in registers (another width, 15 columns say, runs at an
    eighth of the speed)."""
    lanes = register_lanes(c)
    width = _chunk(_columns(c.extents[var], lanes), lanes)
    return width & (width - 1) == 0 and width >= lanes // 2


def _columns(n: int, lanes: int) -> int:
    """NR, the vectorized columns of a tile: a width that divides the extent
    `n`, so that no tile has a predicate on the vector axis (LLVM then keeps the
    accumulator tile in memory and leaves the loop scalar: 50x slower than a
    column tile of any width). The whole extent when it is at most two
    registers; else two registers, one or half a register when they divide
    `n`; else the largest divisor up to two registers made of vectors of 4 lanes
    or more (100: 20 = 5 x 4, at half the speed), else the largest up to one
    register (90: 15, 511: 7, a prime: 1), at an eighth of the speed or less."""
    if n <= 2 * lanes:
        return n
    for nr in (2 * lanes, lanes, lanes // 2):
        if nr and n % nr == 0:
            return nr
    divisors = [d for d in range(2 * lanes, 0, -1) if n % d == 0]
    chunked = [d for d in divisors if _chunk(d, lanes) < d]
    return chunked[0] if chunked else next(d for d in divisors if d <= lanes)


PAGE_STRIDE = 4096  # bytes: rows this far apart share L1 sets (and pages)


def _worth_packing(c: Contraction, operand: Operand, j: tir.Var, nr: int) -> bool:
    """Packing costs a copy of the operand per call; it pays when the NR values
    of a reduction step are not contiguous (the vector axis is not the last:
    conv weights, a dense layer's weight), or when successive steps are a page
    or more apart (a 1024-wide matrix), and it is possible when NR divides the
    vector axis (transform_layout does not pad)."""
    axes = operand.plain_axes()
    if not operand.is_plain() or j not in axes or c.extents[j] % nr:
        return False
    shape = [arith.as_int(d) for d in operand.buffer.shape]
    if any(d is None for d in shape):
        return False
    if axes[j] != len(shape) - 1:
        return True
    item = max(dt.bits(operand.buffer.dtype) // 8, 1)
    strides = [math.prod(shape[a + 1 :]) * item for a in (axes[r] for r in c.reduce if r in axes)]
    return any(s >= PAGE_STRIDE for s in strides)


def _pack(
    sch: Schedule, block: BlockRV, c: Contraction, operand: Operand, j: tir.Var, nr: int
) -> None:
    """Copy `operand` so that, per column panel, a reduction step's NR values are
    contiguous: [other axes..., j // NR, reduction axes..., j % NR]."""
    packed = sch.cache_read(block, operand.read_index, "global")
    axes = operand.plain_axes()
    j_axis = axes[j]
    reduce_axes = sorted(axes[r] for r in c.reduce if r in axes)
    rank = len(operand.load.indices)
    other = [a for a in range(rank) if a != j_axis and a not in reduce_axes]
    dtype = operand.load.indices[j_axis].dtype
    names = [f"i{a}" for a in range(rank)]
    idx = tuple(tir.Var(n, dtype) for n in names)
    nr_imm = tir.IntImm(dtype, nr)
    final = (
        *(idx[a] for a in other),
        tir.BinaryOp("floordiv", idx[j_axis], nr_imm, dtype),
        *(idx[a] for a in reduce_axes),
        tir.BinaryOp("floormod", idx[j_axis], nr_imm, dtype),
    )
    sch.transform_layout(packed, ("write", 0), IndexMap(idx, final))
    loops = sch.get_loops(packed)
    if len(loops) > 1:
        sch.parallel(sch.fuse(*loops[:-1]))


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
    """Vectorize the NR columns of the micro-kernel, in chunks of `_chunk`
    lanes (the outer loop unrolled): LLVM keeps a tile in registers only for
    power-of-two vector widths (24 columns vectorized whole: a third of the
    speed of 3 x 8)."""
    width = _chunk(nr, lanes)
    if width == nr:
        sch.vectorize(j1)
        return
    outer, inner = sch.split(j1, [None, width])
    sch.unroll(outer)
    sch.vectorize(inner)


def _inline_epilogue(sch: Schedule, writeback: BlockRV) -> None:
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

    def _find(self, kernel: Kernel) -> tuple[str, Contraction, Roles] | None:
        """The first reduction stage of `kernel` that is this rule's contraction."""
        tree = Tree(kernel.func)
        for stage in kernel.reductions:
            c = contraction_of(tree.realize_of[id(stage.block)], list(stage.loops))
            roles = None if c is None else self.roles(c)
            if c is not None and roles is not None:
                return stage.name, c, roles
        return None

    def matches(self, kernel: Kernel) -> bool:
        return self._find(kernel) is not None

    def apply(self, sch: Schedule, kernel: Kernel) -> None:
        found = self._find(kernel)
        assert found is not None, "apply follows matches"
        name, c, roles = found
        schedule_tiled(sch, sch.get_sblock(name), c, roles)

    def accepts(self, sch: Schedule, block: BlockRV) -> bool:
        c = match_contraction(sch, block)
        return c is not None and self.roles(c) is not None

    def schedule(self, sch: Schedule, block: BlockRV) -> None:
        c = match_contraction(sch, block)
        roles = None if c is None else self.roles(c)
        if c is None or roles is None:
            raise ScheduleError(f"{self.name}: the block is not one of this rule's contractions")
        schedule_tiled(sch, block, c, roles)


def _parallel_producers(sch: Schedule, block: BlockRV) -> None:
    """Stages computing what the contraction reads (conv's padding, a layout
    copy): parallel over all loops but the innermost. One that cannot be
    (loops not a perfect chain) stays as it is: the primitive changed nothing."""
    for producer in sch.get_producers(block):
        loops = sch.get_loops(producer)
        if len(loops) > 1:
            try:
                sch.parallel(sch.fuse(*loops[:-1]))
            except ScheduleError:
                continue


def schedule_tiled(sch: Schedule, block: BlockRV, c: Contraction, roles: Roles) -> None:
    _parallel_producers(sch, block)
    mr, nr = tile_sizes(c, roles)
    j, i = roles.vector, roles.row
    readers = c.readers(j)
    packed = readers[0] if len(readers) == 1 else None
    if packed is not None and _worth_packing(c, packed, j, nr):
        _pack(sch, block, c, packed, j, nr)
    loops = c.loops(sch, block)
    i0, i1 = sch.split(loops[i], [None, mr])
    j0, j1 = sch.split(loops[j], [None, nr])
    # Loops of variables the packed operand reads (batch) go outside the column
    # panels, the others (conv's output rows) inside, so a panel is reused.
    outer = [v for v in c.spatial if v not in (i, j)]
    first = [loops[v] for v in outer if packed is not None and packed.reads(v)]
    second = [loops[v] for v in outer if not (packed is not None and packed.reads(v))]
    tile_loops = [*first, j0, *second, i0]
    sch.reorder(*tile_loops, *(loops[r] for r in c.reduce), i1, j1)
    writeback = sch.cache_write(block, 0, "local")
    _vector_axis_last(sch, block, c, j)
    sch.reverse_compute_at(writeback, i0)
    _inline_epilogue(sch, writeback)
    _vectorize_write_back(sch, writeback, c.spatial.index(j), len(tile_loops))
    sch.unroll(i1)
    _vectorize_columns(sch, j1, nr, register_lanes(c))
    sch.parallel(sch.fuse(*tile_loops) if len(tile_loops) > 1 else tile_loops[0])
    # Last: loop kinds can only change above a block that still has its init.
    sch.decompose_reduction(block, loops[c.reduce[0]])
