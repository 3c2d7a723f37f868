"""Contractions with few rows: a dense layer or attention applied to one token,
a matrix-vector product (x[i, k] * w[j, k], q[b, h, i, d] * k[b, h, j, d],
x[i, k] * w[k, j], x[k] * w[j, k]).

The register tile of gemm.py keeps MR rows by NR columns of outputs in
registers while it walks the reduction, so it reads the weight a few vectors
per row of it, each step a row further; a weight not contiguous along the
outputs (a dense layer's) it packs first. With one to eight rows nothing
repays the pack (1 x 4096 x 4096 ran at 28x NumPy's time) and a tile of so few
rows holds too few accumulators to hide the FMA latency. This rule reads the
weight along its rows instead, as they lie in memory:

- **dots**, both operands contiguous along the reduction (a dense weight
  [j, k], attention keys): each output is a dot product. Per group of J
  outputs along the weight's own axis,

      for outer..., j_0 (fused, parallel):
          acc[rows, J, W] = 0                     # rfactor's partial sums, registers
          for k_0 in range(ceil(K / W)):           # the last step guarded
              for rows..., j_1 (unrolled), k_1 (vectorized W):
                  acc[.., j_1, k_1] += x[.., k_0 * W + k_1] * w[.., j_1, k_0 * W + k_1]
          out_local[rows, J] = sum of acc over k_1 # W partial sums per output
          out[...] = epilogue(out_local[...])      # elementwise consumers inlined

  J weight rows stream side by side, and each step's vector of x serves J of
  them.
- **updates**, the weight contiguous along the outputs (x[i, k] * w[k, j],
  GPT-2's layers, attention's values): per task a chunk of each row of
  outputs lives in a local tile (in L1), updated from S weight rows at a time,

      for outer..., j_0 (fused, parallel):        # chunks of the outputs
          for k_0 in range(K / S):
              for j_1, k_1 (unrolled S), rows... (unrolled), j_2 (vectorized W):
                  out_local[.., j_1, j_2] += x[.., k_0 * S + k_1] * w[k_0 * S + k_1, j_1, j_2]
          out[...] = epilogue(out_local[...])

  so each weight row is read start to end of the chunk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.lowering.codegen.cpu_traits import CPUTraits, cpu_traits
from tvmlite.lowering.schedule import BlockRV, LoopRV, Schedule, ScheduleError
from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules.contraction import (
    Contraction,
    contraction_of,
    match_contraction,
)
from tvmlite.lowering.schedule_rules.kernel import Kernel
from tvmlite.lowering.schedule_rules.loops import worth_parallel
from tvmlite.lowering.schedule_rules.microkernel import inline_epilogue

# Rows (the product of the extents only the vector operand reads) up to which
# dot products beat gemm.py's tile, which packs the weight on every call.
MAX_ROWS = 8
# Weight rows streamed side by side: more adds streams than the prefetcher
# follows well and makes each output's final sum of W lanes a larger share.
MAX_GROUP = 2
# Rows up to which a weight contiguous along the outputs is read row by row
# (1 x 768 x 3072: 5x NumPy's time in gemm.py's tile, 1.5x this way; 4 rows
# about even).
MAX_UPDATE_ROWS = 4
# Bytes of one row of outputs a task updates per step: the tile stays in L1.
CHUNK_BYTES = 3072


@dataclass(frozen=True)
class Dots:
    """A contraction whose operands both run along the reduction, by role: `rows`,
    variables read by one operand only (x's; few, unrolled), `columns`, read by
    the other only (the weight's; the last in groups of `group`, J), `shared`,
    read by both (batch)."""

    rows: tuple[tir.Var, ...]
    columns: tuple[tir.Var, ...]
    shared: tuple[tir.Var, ...]
    group: int


@dataclass(frozen=True)
class Updates:
    """A contraction whose weight runs along the outputs (x[i, k] * w[k, j]), by
    role as in `Dots`; per task `chunk` outputs of each row, updated with
    `step` reduction steps at a time."""

    rows: tuple[tir.Var, ...]
    columns: tuple[tir.Var, ...]
    shared: tuple[tir.Var, ...]
    chunk: int
    step: int


class MatrixVector:
    name = "matvec"

    def matches(self, kernel: Kernel) -> bool:
        return self._find(kernel) is not None

    def apply(self, sch: Schedule, kernel: Kernel) -> None:
        found = self._find(kernel)
        assert found is not None, "apply follows matches"
        name, c, p = found
        _schedule(sch, sch.get_sblock(name), c, p, kernel.traits.lanes(c.output.dtype))

    def accepts(self, sch: Schedule, block: BlockRV, traits: CPUTraits | None = None) -> bool:
        """Whether `block` is a contraction this rule schedules (for the machine
        of `traits`, default: the current machine options')."""
        return _block_plan(sch, block, traits) is not None

    def schedule(self, sch: Schedule, block: BlockRV, traits: CPUTraits | None = None) -> None:
        """Schedule `block` for the machine of `traits` (default: the current
        machine options')."""
        found = _block_plan(sch, block, traits)
        if found is None:
            raise ScheduleError(f"{self.name}: the block is not a matrix-vector product")
        c, p, lanes = found
        _schedule(sch, block, c, p, lanes)

    def _find(self, kernel: Kernel) -> tuple[str, Contraction, Dots | Updates] | None:
        tree = Tree(kernel.func)
        for stage in kernel.reductions:
            c = contraction_of(tree.realize_of[id(stage.block)], list(stage.loops))
            p = None if c is None else plan(c, kernel.traits.lanes(c.output.dtype))
            if c is not None and p is not None:
                return stage.name, c, p
        return None


def _block_plan(
    sch: Schedule, block: BlockRV, traits: CPUTraits | None
) -> tuple[Contraction, Dots | Updates, int] | None:
    """The contraction of `block`, its plan and the vector lanes of `traits`."""
    c = match_contraction(sch, block)
    if c is None:
        return None
    lanes = (cpu_traits() if traits is None else traits).lanes(c.output.dtype)
    p = plan(c, lanes)
    return None if p is None else (c, p, lanes)


def plan(c: Contraction, lanes: int) -> Dots | Updates | None:
    """How this rule computes `c`, or None when it is not a matrix-vector
    product: one reduction, operands indexed by plain variables, few rows."""
    if len(c.reduce) != 1 or not c.spatial or not all(op.is_plain() for op in c.operands):
        return None  # (no spatial axis: a dot product alone, the reductions' rules)
    return _dots(c, lanes) or _updates(c, lanes)


def _sides(c: Contraction) -> tuple[list[list[tir.Var]], list[tir.Var]]:
    """The variables only the first operand reads, only the second, and both."""
    sides = [
        [v for v in c.spatial if op.reads(v) and not other.reads(v)]
        for op, other in (c.operands, c.operands[::-1])
    ]
    return sides, [v for v in c.spatial if all(op.reads(v) for op in c.operands)]


def _dots(c: Contraction, lanes: int) -> Dots | None:
    """Both operands contiguous along the reduction (their last index), at most
    MAX_ROWS rows on the smaller side, at least two vectors' worth of reduction."""
    (k,) = c.reduce
    if any(op.load.indices[-1] is not k for op in c.operands):
        return None
    if k not in c.symbolic and c.extents[k] < 2 * lanes:
        return None
    sides, shared = _sides(c)
    sizes = [_rows(c, side) for side in sides]
    if min(sizes) > MAX_ROWS:
        return None
    small = sizes.index(min(sizes))
    rows, columns = sides[small], sides[1 - small]
    if not columns:
        return None  # a dot product alone: the reductions' rules
    j = columns[-1]
    group = 1
    if j not in c.symbolic:
        group = max(g for g in range(1, MAX_GROUP + 1) if c.extents[j] % g == 0)
    return Dots(tuple(rows), tuple(columns), tuple(shared), group)


def _updates(c: Contraction, lanes: int) -> Updates | None:
    """The weight contiguous along the output's last axis, which x does not
    read; at most MAX_UPDATE_ROWS rows; constant extents, the outputs in whole
    vectors."""
    (k,) = c.reduce
    j = c.spatial[-1]
    readers = c.readers(j)
    if len(readers) != 1 or readers[0].load.indices[-1] is not j:
        return None
    w = readers[0]
    x = c.operands[1] if w is c.operands[0] else c.operands[0]
    if c.symbolic or c.extents[j] % lanes:
        return None
    rows = [v for v in c.spatial if x.reads(v) and not w.reads(v)]
    if _rows(c, rows) > MAX_UPDATE_ROWS:
        return None
    columns = [v for v in c.spatial if w.reads(v) and not x.reads(v)]
    shared = [v for v in c.spatial if x.reads(v) and w.reads(v)]
    vectors = c.extents[j] // lanes
    itemsize = max(dt.bits(c.output.dtype) // 8, 1)
    most = max(CHUNK_BYTES // (lanes * itemsize), 1)
    chunk = lanes * max(d for d in range(1, min(most, vectors) + 1) if vectors % d == 0)
    step = max(
        s
        for s in (8 if len(rows) <= 1 and _rows(c, rows) == 1 else 4, 2, 1)
        if c.extents[k] % s == 0
    )
    return Updates(tuple(rows), tuple(columns), tuple(shared), chunk, step)


def _rows(c: Contraction, side: list[tir.Var]) -> int:
    if any(v in c.symbolic for v in side):
        return MAX_ROWS + 1
    return math.prod(c.extents[v] for v in side)


def _schedule(sch: Schedule, block: BlockRV, c: Contraction, p: Dots | Updates, lanes: int) -> None:
    if isinstance(p, Dots):
        schedule_dots(sch, block, c, p, lanes)
    else:
        schedule_updates(sch, block, c, p, lanes)


def schedule_dots(sch: Schedule, block: BlockRV, c: Contraction, shape: Dots, lanes: int) -> None:
    loops = c.loops(sch, block)
    (k,) = c.reduce
    j = shape.columns[-1]
    group: list[LoopRV] = []
    j0 = loops[j]
    if shape.group > 1:
        j0, j1 = sch.split(loops[j], [None, shape.group])
        group = [j1]
    k0, k1 = sch.split(loops[k], [None, lanes])
    outer = [loops[v] for v in c.spatial if v in shape.shared or v in shape.columns[:-1]]
    rows = [loops[v] for v in shape.rows]
    sch.reorder(*outer, j0, k0, *rows, *group, k1)
    rf = sch.rfactor(k1, factor_axis=len(c.spatial))
    # rfactor made new loops: the partial sums' nest, in the order above.
    nest = sch.get_loops(rf)
    n = len(outer)
    outer, (j0, k0), inner = nest[:n], nest[n : n + 2], nest[n + 2 :]
    # `block` now sums each output's `lanes` partial results; its result goes
    # through a local tile so that the epilogue runs once per output.
    writeback = sch.cache_write(block, 0, "local")
    inline_epilogue(sch, writeback)
    sch.reverse_compute_at(block, j0)
    sch.reverse_compute_at(writeback, j0)
    sch.set_scope(rf, 0, "local")
    for lp in inner[:-1]:
        sch.unroll(lp)
    sch.vectorize(inner[-1])
    head = sch.fuse(*outer, j0) if outer else j0
    if worth_parallel(_work(c)):
        sch.parallel(head)
    sch.decompose_reduction(rf, k0)


def schedule_updates(sch: Schedule, block: BlockRV, c: Contraction, p: Updates, lanes: int) -> None:
    """Per task, `p.chunk` outputs of each row in a local tile (L1), updated
    `p.step` weight rows at a time: the weight is read along its rows, a whole
    vector per step and row of outputs."""
    loops = c.loops(sch, block)
    (k,) = c.reduce
    j = c.spatial[-1]
    j0, j1, j2 = sch.split(loops[j], [None, p.chunk // lanes, lanes])
    k0, k1 = sch.split(loops[k], [None, p.step])
    outer = [loops[v] for v in c.spatial if v in p.shared or v in p.columns[:-1]]
    rows = [loops[v] for v in p.rows]
    sch.reorder(*outer, j0, k0, j1, k1, *rows, j2)
    writeback = sch.cache_write(block, 0, "local")
    inline_epilogue(sch, writeback)
    sch.reverse_compute_at(writeback, j0)
    _, vector = sch.split(sch.get_loops(writeback)[-1], [None, lanes])
    sch.vectorize(vector)
    for lp in (k1, *rows):
        sch.unroll(lp)
    sch.vectorize(j2)
    head = sch.fuse(*outer, j0) if outer else j0
    if worth_parallel(_work(c)):
        sch.parallel(head)
    sch.decompose_reduction(block, k0)


def _work(c: Contraction) -> int:
    return math.prod(c.extents.values())
