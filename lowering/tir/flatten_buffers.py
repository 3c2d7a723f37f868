"""FlattenBuffers: every buffer access becomes one int64 element index.

`A[i, j]` on a buffer with strides (s0, s1) and element offset o becomes
`A_flat[o + i*s0 + j*s1]`, where `A_flat` is a 1-D buffer over the same data var.
Compact buffers get row-major strides from their shape. Codegen then only sees
pointer + index; the original buffers stay in `buffer_map`, which is the calling
convention's business, not the body's.

The index arithmetic is folded as it is built (most shapes and strides are
constants), which keeps `--emit tir` readable and the LLVM input small; `add`
and `mul` also know how a `Ramp` combines with scalars, which is how vector
indices survive flattening.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import arith, tir
from tvmlite.dsl import dtype as dt
from tvmlite.dsl.tir_layout import ComposeLayout, TileLayout, compact_extents
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering.transform import PrimFuncPass

INDEX = "int64"


def to_index(e: tir.PrimExpr) -> tir.PrimExpr:
    """`e` as int64 (the flat-index type), with the same lanes."""
    elem = dt.element_of(e.dtype)
    if elem == INDEX:
        return e
    if isinstance(e, tir.IntImm):
        return tir.IntImm(INDEX, e.value)
    vector = dt.like_lanes(INDEX, e.dtype)  # scalable lanes stay scalable
    if isinstance(e, tir.Ramp):
        return tir.Ramp(to_index(e.base), to_index(e.stride), e.lanes, vector)
    if isinstance(e, tir.Broadcast):
        return tir.Broadcast(to_index(e.value), e.lanes, vector)
    return tir.Cast(vector, e)


def _broadcast(e: tir.PrimExpr, lanes: int) -> tir.PrimExpr:
    if dt.lanes(e.dtype) == lanes:
        return e
    return tir.Broadcast(e, lanes, dt.with_lanes(e.dtype, lanes))


def _vector_op(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    lanes = max(dt.lanes(a.dtype), dt.lanes(b.dtype))
    return arith.fold(kind, _broadcast(a, lanes), _broadcast(b, lanes))


def add(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    x, y = arith.as_int(a), arith.as_int(b)
    if x is not None and y is not None:
        return arith.fold("add", a, b)
    if x == 0:
        return b
    if y == 0:
        return a
    if isinstance(a, tir.Ramp) and isinstance(b, tir.Ramp):
        return tir.Ramp(add(a.base, b.base), add(a.stride, b.stride), a.lanes, a.dtype)
    if isinstance(a, tir.Ramp) and dt.lanes(b.dtype) == 1:
        return tir.Ramp(add(a.base, b), a.stride, a.lanes, a.dtype)
    if isinstance(b, tir.Ramp) and dt.lanes(a.dtype) == 1:
        return tir.Ramp(add(a, b.base), b.stride, b.lanes, b.dtype)
    return _vector_op("add", a, b)


def mul(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    x, y = arith.as_int(a), arith.as_int(b)
    if x is not None and y is not None:
        return arith.fold("mul", a, b)
    if x == 1:
        return b
    if y == 1:
        return a
    if isinstance(a, tir.Ramp) and dt.lanes(b.dtype) == 1:
        return tir.Ramp(mul(a.base, b), mul(a.stride, b), a.lanes, a.dtype)
    if isinstance(b, tir.Ramp) and dt.lanes(a.dtype) == 1:
        return tir.Ramp(mul(a, b.base), mul(a, b.stride), b.lanes, b.dtype)
    return _vector_op("mul", a, b)


def product(items: tuple[tir.PrimExpr, ...]) -> tir.PrimExpr:
    total: tir.PrimExpr = tir.IntImm(INDEX, 1)
    for item in items:
        total = mul(total, to_index(item))
    return total


def check_placeable(b: tir.Buffer) -> None:
    """A tirx layout (a buffer spread over threads or over an accelerator's memories)
    has no place in a CPU build's flat memory; a compact row-major one (`T.S[1:1]` of an
    s_tir scalar) is the flat layout itself."""
    if compact_extents(b.layout, b.shape) is not None:
        return
    if isinstance(b.layout, TileLayout | ComposeLayout):
        kind = type(b.layout).__name__
        raise TVMLiteError(
            f"buffer '{b.name}' has a tirx layout (T.{kind}): a CPU build cannot place it"
        )


def strides_of(b: tir.Buffer) -> tuple[tir.PrimExpr, ...]:
    """Element strides as int64 expressions: the declared ones, else row-major."""
    check_placeable(b)
    if b.strides:
        if len(b.strides) != len(b.shape):
            raise TVMLiteError(
                f"buffer '{b.name}' has {len(b.strides)} strides for {len(b.shape)} dims"
            )
        return tuple(to_index(s) for s in b.strides)
    strides: list[tir.PrimExpr] = []
    running: tir.PrimExpr = tir.IntImm(INDEX, 1)
    for dim in reversed(b.shape):
        strides.append(running)
        running = mul(running, to_index(dim))
    return tuple(reversed(strides))


def elem_offset_of(b: tir.Buffer) -> tir.PrimExpr:
    if b.elem_offset is None:
        return tir.IntImm(INDEX, 0)
    return to_index(b.elem_offset)


def flat_index(b: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> tir.PrimExpr:
    if len(indices) != len(b.shape):
        raise TVMLiteError(
            f"buffer '{b.name}' has {len(b.shape)} dims, accessed with {len(indices)}"
        )
    index = elem_offset_of(b)
    for i, stride in zip(indices, strides_of(b), strict=True):
        index = add(index, mul(to_index(i), stride))
    return index


class _Flattener(StmtExprMutator):
    """Rewrite accesses and allocations of one PrimFunc to flat buffers."""

    def __init__(self) -> None:
        super().__init__()
        self._flat: dict[tir.Buffer, tir.Buffer] = {}

    def flat(self, b: tir.Buffer) -> tir.Buffer:
        found = self._flat.get(b)
        if found is None:
            size = product(b.shape)
            found = tir.Buffer(b.name, b.data, b.dtype, (size,), (), None, b.scope, span=b.span)
            self._flat[b] = found
        return found

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        index = flat_index(e.buffer, self.visit_exprs(e.indices))
        return tir.BufferLoad(self.flat(e.buffer), (index,), e.dtype, e.span)

    def visit_Call(self, e: tir.Call) -> tir.PrimExpr:
        if e.op == "buffer_data" and isinstance(e.args[0], tir.BufferRegion):
            return e.args[0].buffer.data  # a view's `V.data`: the storage it shares
        return super().visit_Call(e)

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        index = flat_index(s.buffer, self.visit_exprs(s.indices))
        return tir.BufferStore(self.flat(s.buffer), self.visit_expr(s.value), (index,), s.span)

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> tir.Stmt:
        b = s.buffer
        if s.form == "decl_buffer" or b.elem_offset is not None:
            # A view: accesses already carry its offset; storage is only needed
            # when its data var is fresh, and then the extent covers the offset.
            # One laid over threads is refused even unused: its `local()` parts
            # would read as if one thread held it all.
            check_placeable(b)
            size = add(elem_offset_of(b), product(b.shape))
            flat = tir.Buffer(b.name, b.data, b.dtype, (size,), (), None, b.scope, span=b.span)
            return replace(s, buffer=flat)
        return replace(s, buffer=self.flat(b))


@dataclass(frozen=True)
class FlattenBuffers(PrimFuncPass):
    """Every buffer access of every prim function gets one flat int64 index."""

    name: str = "FlattenBuffers"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return _Flattener().visit_prim_func(func)
