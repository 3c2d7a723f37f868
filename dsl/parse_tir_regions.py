"""Read/write regions of a block written without `T.reads`/`T.writes`.

TVM infers them from the block body; this does the same for the common cases:
every access is a point region, indices that use loops inside the block are
relaxed to the loop's range, nested blocks contribute their own regions, and the
accesses to one buffer are merged into their hull (the whole axis when the hull
is not constant-sized). Block-local allocations are not part of the result.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

from tvmlite.dsl import tir
from tvmlite.dsl.parse_tir_ops import const_int, difference, make_const

Bounds = tuple[tir.PrimExpr, tir.PrimExpr]  # inclusive [lo, hi]


@functools.lru_cache(maxsize=128)
def field_names(cls: type) -> tuple[str, ...]:
    """The dataclass field names of a node class, for generic walks: cached per
    class because `dataclasses.fields` is slow and walks ask for every node."""
    return tuple(f.name for f in dataclasses.fields(cls))


def substitute(expr: tir.PrimExpr, mapping: dict[tir.Var, tir.PrimExpr]) -> tir.PrimExpr:
    """`expr` with vars replaced (values never contain the replaced vars again)."""
    if isinstance(expr, tir.Var):
        return mapping.get(expr, expr)
    changes = {}
    for name in field_names(type(expr)):
        old = getattr(expr, name)
        if isinstance(old, tir.PrimExpr):
            new = substitute(old, mapping)
        elif isinstance(old, tuple) and old and all(isinstance(x, tir.PrimExpr) for x in old):
            new = tuple(substitute(x, mapping) for x in old)
        else:
            continue
        if new is not old:
            changes[name] = new
    return dataclasses.replace(expr, **changes) if changes else expr


def uses(expr: tir.PrimExpr, variables: dict[tir.Var, object]) -> bool:
    if isinstance(expr, tir.Var):
        return expr in variables
    for name in field_names(type(expr)):
        value = getattr(expr, name)
        if isinstance(value, tir.PrimExpr) and uses(value, variables):
            return True
        if isinstance(value, tuple) and any(
            isinstance(x, tir.PrimExpr) and uses(x, variables) for x in value
        ):
            return True
    return False


def _fold(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    x, y = const_int(a), const_int(b)
    if x is not None and y is not None and kind in ("add", "sub", "mul"):
        value = {"add": x + y, "sub": x - y, "mul": x * y}[kind]
        return make_const(value, a.dtype)
    if kind == "add" and y == 0:
        return a
    return tir.BinaryOp(kind, a, b, a.dtype)


@dataclass
class _Collector:
    """Walks a block body; `env` holds the ranges of loops opened inside the block."""

    local: set[tir.Buffer]
    matched: dict[tir.Buffer, tir.BufferRegion]
    reads: dict[tir.Buffer, list[tuple[tir.Range, ...]]] = field(default_factory=dict)
    writes: dict[tir.Buffer, list[tuple[tir.Range, ...]]] = field(default_factory=dict)
    env: dict[tir.Var, tir.Range] = field(default_factory=dict)
    lets: dict[tir.Var, tir.PrimExpr] = field(default_factory=dict)

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
        index = substitute(index, self.lets) if self.lets else index
        if isinstance(index, tir.Ramp) and const_int(index.stride) == 1:
            base = self.relax(buffer, axis, index.base)
            extent = _fold("add", base.extent, make_const(index.lanes - 1, base.extent.dtype))
            return tir.Range(base.min, extent)
        if not uses(index, self.env):
            return tir.Range(index, make_const(1, index.dtype))
        bounds = self.bounds(index)
        if bounds is None:
            shape = buffer.shape[axis] if axis < len(buffer.shape) else index
            return tir.Range(make_const(0, shape.dtype), shape)
        lo, hi = bounds
        return tir.Range(lo, difference(_fold("add", hi, make_const(1, hi.dtype)), lo))

    def bounds(self, e: tir.PrimExpr) -> Bounds | None:
        if not uses(e, self.env):
            return e, e
        if isinstance(e, tir.Var):
            r = self.env[e]
            return r.min, _fold("sub", _fold("add", r.min, r.extent), make_const(1, e.dtype))
        if not isinstance(e, tir.BinaryOp):
            return None
        a, b = self.bounds(e.a), self.bounds(e.b)
        if a is None or b is None:
            return None
        if e.kind == "add":
            return _fold("add", a[0], b[0]), _fold("add", a[1], b[1])
        if e.kind == "sub":
            return _fold("sub", a[0], b[1]), _fold("sub", a[1], b[0])
        scale = const_int(e.b)
        if e.kind == "mul" and scale is not None:
            lo, hi = _fold("mul", a[0], e.b), _fold("mul", a[1], e.b)
            return (lo, hi) if scale >= 0 else (hi, lo)
        if e.kind == "floordiv" and scale is not None and scale > 0:
            return (
                tir.BinaryOp("floordiv", a[0], e.b, e.dtype),
                tir.BinaryOp("floordiv", a[1], e.b, e.dtype),
            )
        if e.kind == "floormod" and scale is not None and scale > 0:
            return make_const(0, e.dtype), make_const(scale - 1, e.dtype)
        return None

    def expr(self, e: tir.PrimExpr) -> None:
        if isinstance(e, tir.BufferLoad):
            for index in e.indices:
                self.expr(index)
            self.access(self.reads, e.buffer, e.indices)
            return
        for name in field_names(type(e)):
            value = getattr(e, name)
            if isinstance(value, tir.PrimExpr):
                self.expr(value)
            elif isinstance(value, tuple):
                for item in value:
                    if isinstance(item, tir.PrimExpr):
                        self.expr(item)

    def stmt(self, s: tir.Stmt | None) -> None:
        if s is None:
            return
        if isinstance(s, tir.BufferStore):
            self.expr(s.value)
            for index in s.indices:
                self.expr(index)
            self.access(self.writes, s.buffer, s.indices)
        elif isinstance(s, tir.For):
            self.env[s.loop_var] = tir.Range(s.min, s.extent)
            self.stmt(s.body)
        elif isinstance(s, tir.LetStmt | tir.Bind):
            self.expr(s.value)
            self.lets[s.var] = substitute(s.value, self.lets)
            if isinstance(s, tir.LetStmt):
                self.stmt(s.body)
        elif isinstance(s, tir.AllocBuffer):
            self.local.add(s.buffer)
        elif isinstance(s, tir.BlockRealize):
            self.nested(s)
        else:
            self.generic(s)

    def generic(self, s: tir.Stmt) -> None:
        for name in field_names(type(s)):
            value = getattr(s, name)
            if isinstance(value, tir.Stmt):
                self.stmt(value)
            elif isinstance(value, tir.PrimExpr):
                self.expr(value)
            elif isinstance(value, tuple):
                for item in value:
                    if isinstance(item, tir.Stmt):
                        self.stmt(item)

    def nested(self, realize: tir.BlockRealize) -> None:
        block = realize.block
        for value in realize.iter_values:
            self.expr(value)
        self.expr(realize.predicate)
        binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values, strict=True)}
        for table, regions in ((self.reads, block.reads), (self.writes, block.writes)):
            for region in regions:
                if region.buffer in self.local:
                    continue
                ranges = []
                for axis, r in enumerate(region.region):
                    lo = self.relax(region.buffer, axis, substitute(r.min, binding))
                    last = substitute(_fold("add", r.min, r.extent), binding)
                    hi = self.relax(
                        region.buffer, axis, _fold("sub", last, make_const(1, last.dtype))
                    )
                    end = _fold("add", hi.min, hi.extent)
                    ranges.append(tir.Range(lo.min, difference(end, lo.min)))
                table.setdefault(region.buffer, []).append(tuple(ranges))


def _hull(buffer: tir.Buffer, accesses: list[tuple[tir.Range, ...]]) -> tuple[tir.Range, ...]:
    """The smallest region covering every access, axis by axis."""
    first = accesses[0]
    out = []
    for axis, r in enumerate(first):
        lo, end = r.min, _fold("add", r.min, r.extent)
        for other in accesses[1:]:
            o = other[axis]
            o_end = _fold("add", o.min, o.extent)
            shift = const_int(difference(o.min, lo))
            tail = const_int(difference(o_end, end))
            if shift is None or tail is None:
                lo, end = make_const(0, buffer.shape[axis].dtype), buffer.shape[axis]
                break
            lo = o.min if shift < 0 else lo
            end = o_end if tail > 0 else end
        out.append(tir.Range(lo, difference(end, lo)))
    return tuple(out)


def infer_regions(
    block_body: tir.Stmt,
    init: tir.Stmt | None,
    local: tuple[tir.Buffer, ...],
    match_buffers: tuple[tir.MatchBufferRegion, ...],
) -> tuple[tuple[tir.BufferRegion, ...], tuple[tir.BufferRegion, ...]]:
    """(reads, writes) of a block, in order of first access."""
    collector = _Collector(set(local), {m.buffer: m.source for m in match_buffers})
    collector.stmt(init)
    collector.stmt(block_body)
    reads = tuple(tir.BufferRegion(b, _hull(b, a)) for b, a in collector.reads.items())
    writes = tuple(tir.BufferRegion(b, _hull(b, a)) for b, a in collector.writes.items())
    return reads, writes
