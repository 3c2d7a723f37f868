"""What a prim function computes, as the default schedule rules see it.

A kernel the rules understand is a root block holding a sequence of stages;
a stage is a perfect nest of serial loops from 0 with one block at the bottom
whose axes are the loops in order (`T.axis.remap`) and which stores to one
buffer at indices computed from its axes alone. That is the shape of every
legalized operator and of FuseTIR's fused kernels, and of most hand-written
block kernels. Anything else (loops written without blocks, `while`, scatters
that store at loaded indices, a stage that reads what it writes outside a
reduction, a loop whose extent depends on another loop) is not a `Kernel`,
and the rules leave such a function as it is, as they do one that calls
extern or packed code.

Extents may be symbolic (a batch `n`, a sequence `s`): a stage's `extents`
hold an int for each constant extent and the expression for the others, and
its `work` counts a symbolic extent as `SYMBOLIC_EXTENT` iterations.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from tvmlite.dsl import tir
from tvmlite.dsl.analysis import free_vars, loads, uses
from tvmlite.dsl.iter_map import Extent, as_extent
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.lowering.analysis.op_pattern import calls_opaque_code
from tvmlite.lowering.codegen.cpu_traits import CPUTraits, cpu_traits
from tvmlite.lowering.schedule import Schedule

# What a symbolic extent counts for in work estimates. Running a small kernel in
# parallel costs a thread-pool launch (microseconds), a large one on one thread
# half its speed: so a batch or a sequence counts as large, a kernel over (n, 256)
# as 32768 iterations.
SYMBOLIC_EXTENT = 128


def estimate(extent: Extent) -> int:
    """Iterations of a loop, `SYMBOLIC_EXTENT` when symbolic."""
    return extent if isinstance(extent, int) else SYMBOLIC_EXTENT


@dataclass(frozen=True)
class Stage:
    """One loop nest: its block, the loops outermost first, and per loop its
    extent (an int, or the expression of a symbolic one) and axis kind ("S"
    spatial, "R" reduce)."""

    block: tir.Block
    loops: tuple[tir.For, ...]
    extents: tuple[Extent, ...]
    kinds: str

    @property
    def name(self) -> str:
        return self.block.name

    @property
    def is_reduction(self) -> bool:
        return "R" in self.kinds

    @property
    def output(self) -> tir.Buffer:
        return self.block.writes[0].buffer

    @cached_property
    def axis_of(self) -> dict[tir.Var, int]:
        """The position of the loop each block axis is bound to."""
        return {iv.var: i for i, iv in enumerate(self.block.iter_vars[: len(self.loops)])}

    @cached_property
    def main_read(self) -> tir.BufferLoad | None:
        """The load that decides the memory walk: of the largest buffer read
        (the data, not a bias or a row statistic), first in the body."""
        written = {w.buffer for w in self.block.writes}
        found = [x for x in loads(self.block.body) if x.buffer not in written]
        if not found:
            return None
        return max(found, key=lambda x: (_size(x.buffer), -found.index(x)))

    def innermost_axes(self, read: tir.BufferLoad | None = None) -> list[int]:
        """The loops whose axes index the last dimension of `read` (default: the
        main read): along them the data is contiguous."""
        read = self.main_read if read is None else read
        if read is None or not read.indices:
            return []
        used = {self.axis_of[v] for v in free_vars(read.indices[-1]) if v in self.axis_of}
        return sorted(used)

    def reduces_along_rows(self) -> bool:
        """A reduction whose every input that the reduction walks is contiguous
        along reduced axes only (a row sum, a matrix-vector product); not a
        matmul, whose second operand runs along an output axis."""
        reduce = {i for i, k in enumerate(self.kinds) if k == "R"}
        written = {w.buffer for w in self.block.writes}
        for read in loads(self.block.body):
            walked = {self.axis_of[v] for v in free_vars(read) if v in self.axis_of} & reduce
            inner = set(self.innermost_axes(read))
            if read.buffer not in written and walked and not (inner and inner <= reduce):
                return False
        return bool(reduce)

    @property
    def work(self) -> int:
        """Iterations of the block: a rough measure of the stage's cost (a
        symbolic extent counts as `SYMBOLIC_EXTENT`)."""
        total = 1
        for e in self.extents:
            total *= estimate(e)
        return total


@dataclass(frozen=True)
class Kernel:
    """A prim function as a sequence of stages, and the machine it is scheduled
    for (`traits`: vector width, registers, caches)."""

    name: str
    func: tir.PrimFunc
    stages: tuple[Stage, ...]
    traits: CPUTraits

    @property
    def reductions(self) -> tuple[Stage, ...]:
        return tuple(s for s in self.stages if s.is_reduction)

    @cached_property
    def params(self) -> frozenset[tir.Buffer]:
        return frozenset(b for _, b in self.func.buffer_map)

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)

    def consumers(self, stage: Stage) -> list[Stage]:
        """The later stages that read what `stage` writes."""
        return [
            s
            for s in self.stages[self.stages.index(stage) + 1 :]
            if any(r.buffer == stage.output for r in s.block.reads)
        ]

    @staticmethod
    def of(name: str, func: tir.PrimFunc, traits: CPUTraits | None = None) -> Kernel | None:
        """The kernel `func` is, scheduled for the machine of `traits` (default: the
        current machine options'), or None when its shape is not one the rules know."""
        root = func.body
        if not isinstance(root, tir.BlockRealize) or root.block.init is not None:
            return None
        body = root.block.body
        nests = body.seq if isinstance(body, tir.SeqStmt) else (body,)
        stages = []
        for nest in nests:
            stage = _stage(nest)
            if stage is None:
                return None
            stages.append(stage)
        if len({s.name for s in stages}) != len(stages):
            return None  # blocks are found by name
        # Extern or packed calls may have effects loops must not reorder. (An
        # opaque fusion pattern alone is no reason: TVM's analysis calls a
        # reshape over a symbolic batch opaque for its `% n` index.)
        if calls_opaque_code(func):
            return None
        return Kernel(name, func, tuple(stages), cpu_traits() if traits is None else traits)


def _size(buffer: tir.Buffer) -> int:
    total = 1
    for d in buffer.shape:
        total *= d.value if isinstance(d, tir.IntImm) else 1 << 20
    return total


def _stage(nest: tir.Stmt) -> Stage | None:
    loops: list[tir.For] = []
    s = nest
    while isinstance(s, tir.For):
        if (
            s.kind != tir.SERIAL
            or s.step is not None
            or s.annotations
            or uses(s.extent, {lp.loop_var: None for lp in loops})
            or not (isinstance(s.min, tir.IntImm) and s.min.value == 0)
        ):
            return None
        loops.append(s)
        s = s.body
    if not isinstance(s, tir.BlockRealize):
        return None
    block = s.block
    # A stage without loops (a 0-d output) binds its axes to constants.
    bound = s.iter_values if loops else ()
    plain = len(bound) == len(loops) and all(
        isinstance(v, tir.Var) and v is lp.loop_var for v, lp in zip(bound, loops, strict=True)
    )
    reduction = any(iv.kind == tir.REDUCE for iv in block.iter_vars)
    if (
        not plain
        or not (loops or all(isinstance(v, tir.IntImm) for v in s.iter_values))
        or not (isinstance(s.predicate, tir.IntImm) and s.predicate.value == 1)
        or block.alloc_buffers
        or block.match_buffers
        or not (len(block.writes) == 1 or reduction)  # argmax-like reductions write several
        or any(iv.kind not in (tir.SPATIAL, tir.REDUCE) for iv in block.iter_vars)
        or _irregular(block)
    ):
        return None
    kinds = "".join("R" if iv.kind == tir.REDUCE else "S" for iv in block.iter_vars[: len(loops)])
    return Stage(block, tuple(loops), tuple(as_extent(lp.extent) for lp in loops), kinds)


def _irregular(block: tir.Block) -> bool:
    """Stores that vectorized or reordered loops could get wrong: one at indices
    loaded from memory (a scatter, whose lanes may collide), or a spatial
    block reading the buffer it writes (a scan)."""
    stores = _Stores()
    stores.visit_stmt(block.body)
    if block.init is not None:
        stores.visit_stmt(block.init)
    written = {w.buffer for w in block.writes}
    if any(s.buffer not in written or any(loads(i) for i in s.indices) for s in stores.found):
        return True
    if not stores.found or stores.nested:
        return True
    reduction = any(iv.kind == tir.REDUCE for iv in block.iter_vars)
    return not reduction and any(x.buffer in written for x in loads(block.body))


class _Stores(StmtExprVisitor):
    """The stores of a block body, and whether it nests loops or blocks."""

    def __init__(self) -> None:
        self.found: list[tir.BufferStore] = []
        self.nested = False

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        self.found.append(s)
        super().visit_BufferStore(s)

    def visit_BlockRealize(self, s: tir.BlockRealize) -> None:
        self.nested = True

    def visit_For(self, s: tir.For) -> None:
        self.nested = True

    def visit_While(self, s: tir.While) -> None:
        self.nested = True


def current_stage(sch: Schedule, name: str) -> Stage:
    """Stage `name` as the schedule has it now (an inlined producer changes what
    its consumer reads)."""
    block = sch.get(sch.get_sblock(name))
    loops = tuple(sch.get(lp) for lp in sch.get_loops(name))
    kinds = "".join("R" if iv.kind == tir.REDUCE else "S" for iv in block.iter_vars[: len(loops)])
    return Stage(block, loops, tuple(as_extent(lp.extent) for lp in loops), kinds)
