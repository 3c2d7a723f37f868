"""CompactBuffers: an intermediate buffer shrinks to the part its loops touch and
is allocated inside the innermost loop around all its accesses (TVM's
CompactBufferAllocation).

A schedule's `cache_write(..., "local")` or `cache_read` stage moved under a
loop still declares the whole buffer at the top of the function; what it uses
per iteration of that loop is one tile (a 6x32 accumulator of a matmul). Here
such a buffer becomes that tile, indexed from the tile's first element, and its
allocation moves into the loop: a small constant-size tile is a stack slot that
LLVM keeps in registers, and a parallel loop's body gets a tile of its own.

Runs after LowerBlocks, on block-free code: every access is a multi-dimensional
load or store whose indices are loop variables once the iteration variables'
`LetStmt` bindings are substituted. A buffer stays as it is when an access is
not understood (data-dependent or vector indices, the data pointer used
directly, another buffer sharing its storage), when a tile extent is not a
constant, or when the tile is not smaller than the buffer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl.analysis import substitute
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering.transform import PrimFuncPass

MAX_TILE = 1 << 24  # elements of one axis of a tile: beyond, the span is not bounded


@dataclass
class _Usage:
    """Where one allocated buffer is accessed: each access's enclosing loops and
    indices (iteration variables substituted by their loop expressions)."""

    alloc: tir.AllocBuffer
    accesses: list[tuple[tuple[tir.For, ...], tuple[tir.PrimExpr, ...]]] = field(
        default_factory=list
    )
    understood: bool = True


class _Collect(StmtExprVisitor):
    def __init__(self) -> None:
        self.usage: dict[tir.Var, _Usage] = {}
        self.loops: list[tir.For] = []
        self.lets: dict[tir.Var, tir.PrimExpr] = {}

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> None:
        b = s.buffer
        if s.form == "decl_buffer" or b.data in self.usage:
            self._give_up(b.data)
        else:
            self.usage[b.data] = _Usage(s, understood=not b.strides)
        super().visit_AllocBuffer(s)

    def _give_up(self, data: tir.Var) -> None:
        if data in self.usage:
            self.usage[data].understood = False

    def _access(self, buffer: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> None:
        usage = self.usage.get(buffer.data)
        if usage is None:
            return
        scalar = all(i.dtype in ("int32", "int64") for i in indices)
        if buffer is not usage.alloc.buffer or not scalar:
            usage.understood = False
            return
        usage.accesses.append((tuple(self.loops), tuple(substitute(i, self.lets) for i in indices)))

    def visit_Var(self, e: tir.Var) -> None:
        self._give_up(e)  # the data pointer itself, outside a load or store

    def visit_BufferLoad(self, e: tir.BufferLoad) -> None:
        self._access(e.buffer, e.indices)
        for i in e.indices:
            self.visit_expr(i)

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        self._access(s.buffer, s.indices)
        self.visit_expr(s.value)
        for i in s.indices:
            self.visit_expr(i)

    def visit_LetStmt(self, s: tir.LetStmt) -> None:
        self.lets[s.var] = substitute(s.value, self.lets)
        super().visit_LetStmt(s)

    def visit_Bind(self, s: tir.Bind) -> None:
        self.lets[s.var] = substitute(s.value, self.lets)
        super().visit_Bind(s)

    def visit_For(self, s: tir.For) -> None:
        self.loops.append(s)
        super().visit_For(s)
        self.loops.pop()


@dataclass(frozen=True)
class _Plan:
    """The tile of one buffer: its new buffer, first index per axis, and the loop
    whose body allocates it (None: where it was)."""

    buffer: tir.Buffer
    starts: tuple[tir.PrimExpr, ...]
    loop: tir.For | None


def _plan(usage: _Usage) -> _Plan | None:
    if not usage.understood or not usage.accesses:
        return None
    paths = [path for path, _ in usage.accesses]
    depth = 0
    while all(len(p) > depth and p[depth] is paths[0][depth] for p in paths):
        depth += 1
    analyzer = canonical.Analyzer()
    for lp in paths[0][:depth]:
        analyzer.bind_range(lp.loop_var, tir.Range(lp.min, lp.extent))
    old = usage.alloc.buffer
    los: list[tir.PrimExpr | None] = [None] * len(old.shape)
    his: list[tir.PrimExpr | None] = [None] * len(old.shape)
    for path, indices in usage.accesses:
        ranges = {lp.loop_var: tir.Range(lp.min, lp.extent) for lp in path[depth:]}
        for axis, index in enumerate(indices):
            found = arith.bounds(index, ranges)
            if found is None:
                return None
            lo, hi = (analyzer.simplify(x) for x in found)
            los[axis] = lo if los[axis] is None else analyzer.simplify(arith.minimum(los[axis], lo))
            his[axis] = hi if his[axis] is None else analyzer.simplify(arith.maximum(his[axis], hi))
    shape = []
    for lo, hi, dim in zip(los, his, old.shape, strict=True):
        span = analyzer.simplify(arith.sub(hi, lo))
        extent = arith.as_int(span)
        if extent is None:
            # A symbolic span (the guarded last tile of a symbolic axis: `T.min(n
            # - i * 12, 12)` rows) is covered by its constant upper bound.
            extent = analyzer.difference_bound(span)[1]
        if extent < 0 or extent >= MAX_TILE:
            return None
        shape.append(extent + 1 if arith.as_int(dim) is None else min(extent + 1, dim.value))
    if all(n == arith.as_int(dim) for n, dim in zip(shape, old.shape, strict=True)):
        return None
    starts = tuple(
        arith.const(0, dim.dtype) if n == arith.as_int(dim) else lo
        for n, dim, lo in zip(shape, old.shape, los, strict=True)
    )
    new_shape = tuple(tir.IntImm(dim.dtype, n) for n, dim in zip(shape, old.shape, strict=True))
    return _Plan(replace(old, shape=new_shape), starts, paths[0][depth - 1] if depth else None)


class _Rewrite(StmtExprMutator):
    def __init__(self, plans: dict[tir.Buffer, _Plan]) -> None:
        super().__init__()
        self.plans = plans
        self.at_loop: dict[int, list[tir.Buffer]] = {}  # by id: loops compare by value
        for plan in plans.values():
            if plan.loop is not None:
                self.at_loop.setdefault(id(plan.loop), []).append(plan.buffer)

    def _indices(self, plan: _Plan, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        return tuple(
            i if arith.as_int(lo) == 0 else arith.sub(i, arith.cast(i.dtype, lo))
            for i, lo in zip(self.visit_exprs(indices), plan.starts, strict=True)
        )

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        plan = self.plans.get(e.buffer)
        if plan is None:
            return super().visit_BufferLoad(e)
        return replace(e, buffer=plan.buffer, indices=self._indices(plan, e.indices))

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        plan = self.plans.get(s.buffer)
        if plan is None:
            return super().visit_BufferStore(s)
        value = self.visit_expr(s.value)
        return replace(s, buffer=plan.buffer, value=value, indices=self._indices(plan, s.indices))

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> tir.Stmt:
        plan = self.plans.get(s.buffer)
        if plan is None:
            return super().visit_AllocBuffer(s)
        if plan.loop is None:
            return replace(s, buffer=plan.buffer)
        return tir.seq([])  # allocated in its loop instead

    def visit_For(self, s: tir.For) -> tir.Stmt:
        new = super().visit_For(s)
        tiles = self.at_loop.get(id(s))
        if not tiles:
            return new
        allocs = [tir.AllocBuffer(b) for b in tiles]
        return replace(new, body=tir.seq([*allocs, new.body]))


@dataclass(frozen=True)
class CompactBuffers(PrimFuncPass):
    """Intermediate buffers of every prim function shrink to the tile their loops use."""

    name: str = "CompactBuffers"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        collect = _Collect()
        collect.visit_stmt(func.body)
        plans = {}
        for usage in collect.usage.values():
            plan = _plan(usage)
            if plan is not None:
                plans[usage.alloc.buffer] = plan
        if not plans:
            return func
        return _Rewrite(plans).visit_prim_func(func)
