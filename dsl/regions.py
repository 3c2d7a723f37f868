"""Read/write regions of a block, inferred from its body as TVM does for blocks
written without `T.reads`/`T.writes` (and for the kernels `te` builds).

Every access is a point region; indices that use loops opened inside the block
are relaxed to the loops' ranges (`arith.bounds`); a nested block contributes
its own regions, relaxed the same way; an access through a `match_buffer` is an
access to its source region. The accesses to one buffer are merged into their
hull, or the whole axis when the hull is not constant-sized. Buffers allocated
inside the block are not part of the result. Buffers come in order of first
access, a load before the loads in its indices (TVM's order).
"""

from __future__ import annotations

from tvmlite.dsl import arith, tir
from tvmlite.dsl.analysis import substitute, uses
from tvmlite.dsl.tir_functor import StmtExprVisitor

Region = tuple[tir.Range, ...]


class _Collector(StmtExprVisitor):
    """Walks a block body; `loops` holds the ranges of loops opened inside it."""

    def __init__(self, local: set[tir.Buffer], matched: dict[tir.Buffer, tir.BufferRegion]):
        self.local = local
        self.matched = matched
        self.reads: dict[tir.Buffer, list[Region]] = {}
        self.writes: dict[tir.Buffer, list[Region]] = {}
        self.loops: dict[tir.Var, tir.Range] = {}
        self.lets: dict[tir.Var, tir.PrimExpr] = {}

    def access(self, table: dict, buffer: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> None:
        if buffer in self.local:
            return
        if buffer in self.matched:
            source = self.matched[buffer]
            table.setdefault(source.buffer, []).append(source.region)
            return
        ranges = tuple(self.relax(buffer, axis, i) for axis, i in enumerate(indices))
        table.setdefault(buffer, []).append(ranges)

    def relax(self, buffer: tir.Buffer, axis: int, index: tir.PrimExpr) -> tir.Range:
        """The range `index` covers while the block's inner loops run."""
        index = substitute(index, self.lets)
        if isinstance(index, tir.Ramp) and arith.const_int(index.stride) == 1:
            base = self.relax(buffer, axis, index.base)
            last = arith.const(index.lanes - 1, base.extent.dtype)
            return tir.Range(base.min, arith.fold("add", base.extent, last))
        if not uses(index, self.loops):
            return tir.Range(index, arith.const(1, index.dtype))
        found = arith.bounds(index, self.loops)
        if found is None:
            shape = buffer.shape[axis] if axis < len(buffer.shape) else index
            return tir.Range(arith.const(0, shape.dtype), shape)
        lo, hi = found
        end = arith.fold("add", hi, arith.const(1, hi.dtype))
        return tir.Range(lo, arith.difference(end, lo))

    def visit_buffer(self, buffer: tir.Buffer) -> None:
        pass  # a buffer's shape is not an access

    def visit_BufferLoad(self, e: tir.BufferLoad) -> None:
        self.access(self.reads, e.buffer, e.indices)
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        super().visit_BufferStore(s)
        self.access(self.writes, s.buffer, s.indices)

    def visit_For(self, s: tir.For) -> None:
        self.loops[s.loop_var] = tir.Range(s.min, s.extent)
        super().visit_For(s)

    def visit_LetStmt(self, s: tir.LetStmt) -> None:
        self.visit_expr(s.value)
        self.lets[s.var] = substitute(s.value, self.lets)
        self.visit_stmt(s.body)

    def visit_Bind(self, s: tir.Bind) -> None:
        self.visit_expr(s.value)
        self.lets[s.var] = substitute(s.value, self.lets)

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> None:
        self.local.add(s.buffer)

    def visit_BlockRealize(self, s: tir.BlockRealize) -> None:
        """A nested block: its bindings are read here; its own regions, in the
        outer block's terms, stand for its body."""
        for value in s.iter_values:
            self.visit_expr(value)
        self.visit_expr(s.predicate)
        block = s.block
        binding = {iv.var: v for iv, v in zip(block.iter_vars, s.iter_values, strict=True)}
        for table, regions in ((self.reads, block.reads), (self.writes, block.writes)):
            for region in regions:
                if region.buffer not in self.local:
                    table.setdefault(region.buffer, []).append(self.nested(region, binding))

    def nested(self, region: tir.BufferRegion, binding: dict[tir.Var, tir.PrimExpr]) -> Region:
        ranges = []
        for axis, r in enumerate(region.region):
            lo = self.relax(region.buffer, axis, substitute(r.min, binding))
            last = substitute(arith.fold("add", r.min, r.extent), binding)
            one = arith.const(1, last.dtype)
            hi = self.relax(region.buffer, axis, arith.fold("sub", last, one))
            end = arith.fold("add", hi.min, hi.extent)
            ranges.append(tir.Range(lo.min, arith.difference(end, lo.min)))
        return tuple(ranges)


def _hull(buffer: tir.Buffer, accesses: list[Region]) -> Region:
    """The smallest region covering every access, axis by axis."""
    first = accesses[0]
    out = []
    for axis, r in enumerate(first):
        lo, end = r.min, arith.fold("add", r.min, r.extent)
        for other in accesses[1:]:
            o = other[axis]
            o_end = arith.fold("add", o.min, o.extent)
            shift = arith.const_int(arith.difference(o.min, lo))
            tail = arith.const_int(arith.difference(o_end, end))
            if shift is None or tail is None:
                dim = buffer.shape[axis]
                lo, end = arith.const(0, dim.dtype), dim
                break
            lo = o.min if shift < 0 else lo
            end = o_end if tail > 0 else end
        out.append(tir.Range(lo, arith.difference(end, lo)))
    return tuple(out)


def infer_regions(
    body: tir.Stmt,
    init: tir.Stmt | None,
    alloc_buffers: tuple[tir.Buffer, ...],
    match_buffers: tuple[tir.MatchBufferRegion, ...],
) -> tuple[tuple[tir.BufferRegion, ...], tuple[tir.BufferRegion, ...]]:
    """(reads, writes) of a block with this body, init, allocations and match
    buffers, in order of first access."""
    collector = _Collector(set(alloc_buffers), {m.buffer: m.source for m in match_buffers})
    if init is not None:
        collector.visit_stmt(init)
    collector.visit_stmt(body)
    reads = tuple(tir.BufferRegion(b, _hull(b, a)) for b, a in collector.reads.items())
    writes = tuple(tir.BufferRegion(b, _hull(b, a)) for b, a in collector.writes.items())
    return reads, writes
