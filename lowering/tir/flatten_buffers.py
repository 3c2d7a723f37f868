"""FlattenBuffers: every buffer access becomes one int64 element index.

`A[i, j]` on a buffer with strides (s0, s1) and element offset o becomes
`A_flat[o + i*s0 + j*s1]`, where `A_flat` is a 1-D buffer over the same data var.
Compact buffers get row-major strides from their shape. Codegen then only sees
pointer + index; the original buffers stay in `buffer_map`, which is the calling
convention's business, not the body's.
"""

from __future__ import annotations

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering.tir import simplify as fold


def strides_of(b: tir.Buffer) -> tuple[tir.PrimExpr, ...]:
    """Element strides as int64 expressions: the declared ones, else row-major."""
    if b.strides:
        if len(b.strides) != len(b.shape):
            raise TVMLiteError(
                f"buffer '{b.name}' has {len(b.strides)} strides for {len(b.shape)} dims"
            )
        return tuple(fold.to_index(s) for s in b.strides)
    strides: list[tir.PrimExpr] = []
    running: tir.PrimExpr = tir.IntImm(fold.INDEX, 1)
    for dim in reversed(b.shape):
        strides.append(running)
        running = fold.mul(running, fold.to_index(dim))
    return tuple(reversed(strides))


def elem_offset_of(b: tir.Buffer) -> tir.PrimExpr:
    if b.elem_offset is None:
        return tir.IntImm(fold.INDEX, 0)
    return fold.to_index(b.elem_offset)


def flat_index(b: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> tir.PrimExpr:
    if len(indices) != len(b.shape):
        raise TVMLiteError(
            f"buffer '{b.name}' has {len(b.shape)} dims, accessed with {len(indices)}"
        )
    index = elem_offset_of(b)
    for i, stride in zip(indices, strides_of(b), strict=True):
        index = fold.add(index, fold.mul(fold.to_index(i), stride))
    return index


class FlattenBuffers(StmtExprMutator):
    """Rewrite accesses and allocations of one PrimFunc to flat buffers."""

    name = "FlattenBuffers"

    def __init__(self) -> None:
        super().__init__()
        self._flat: dict[tir.Buffer, tir.Buffer] = {}

    def flat(self, b: tir.Buffer) -> tir.Buffer:
        found = self._flat.get(b)
        if found is None:
            size = fold.product(b.shape)
            found = tir.Buffer(b.name, b.data, b.dtype, (size,), (), None, b.scope, span=b.span)
            self._flat[b] = found
        return found

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        index = flat_index(e.buffer, self.visit_exprs(e.indices))
        return tir.BufferLoad(self.flat(e.buffer), (index,), e.dtype, e.span)

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        index = flat_index(s.buffer, self.visit_exprs(s.indices))
        return tir.BufferStore(self.flat(s.buffer), self.visit_expr(s.value), (index,), s.span)

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> tir.Stmt:
        b = s.buffer
        if s.form == "decl_buffer" or b.elem_offset is not None:
            # A view: accesses already carry its offset; storage is only needed
            # when its data var is fresh, and then the extent covers the offset.
            size = fold.add(elem_offset_of(b), fold.product(b.shape))
            flat = tir.Buffer(b.name, b.data, b.dtype, (size,), (), None, b.scope, span=b.span)
            return replace(s, buffer=flat)
        return replace(s, buffer=self.flat(b))


def flatten_buffers(func: tir.PrimFunc) -> tir.PrimFunc:
    return FlattenBuffers().visit_prim_func(func)
