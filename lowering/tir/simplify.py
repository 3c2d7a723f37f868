"""Constant folding for the index arithmetic the lowering passes build.

Flattening and match_buffer views produce sums of products of shapes, strides and
indices, most of them constants. Folding them here keeps the lowered TIR readable
(`--emit tir`) and the LLVM input small; LLVM would fold them too, but only after
we paid for printing and parsing them. The helpers also know how a `Ramp` combines
with scalars, which is how vector indices survive flattening.
"""

from __future__ import annotations

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace

INDEX = "int64"


def _int(e: tir.PrimExpr) -> int | None:
    return e.value if isinstance(e, tir.IntImm) and not dt.is_bool(e.dtype) else None


def _wrap(value: int, dtype: str) -> int:
    """Two's-complement wrap of a folded integer into `dtype`."""
    bits = dt.bits(dtype)
    value &= (1 << bits) - 1
    if dt.is_int(dtype) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def to_index(e: tir.PrimExpr) -> tir.PrimExpr:
    """`e` as int64 (the flat-index type), with the same lanes."""
    elem = dt.element_of(e.dtype)
    if elem == INDEX:
        return e
    if isinstance(e, tir.IntImm):
        return tir.IntImm(INDEX, e.value)
    if isinstance(e, tir.Ramp):
        return tir.Ramp(to_index(e.base), to_index(e.stride), e.lanes, f"{INDEX}x{e.lanes}")
    if isinstance(e, tir.Broadcast):
        return tir.Broadcast(to_index(e.value), e.lanes, f"{INDEX}x{e.lanes}")
    return tir.Cast(dt.with_lanes(INDEX, dt.lanes(e.dtype)), e)


def _broadcast(e: tir.PrimExpr, lanes: int) -> tir.PrimExpr:
    if dt.lanes(e.dtype) == lanes:
        return e
    return tir.Broadcast(e, lanes, dt.with_lanes(e.dtype, lanes))


def add(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    x, y = _int(a), _int(b)
    if x is not None and y is not None:
        return tir.IntImm(a.dtype, _wrap(x + y, a.dtype))
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
    x, y = _int(a), _int(b)
    if x is not None and y is not None:
        return tir.IntImm(a.dtype, _wrap(x * y, a.dtype))
    if x == 1:
        return b
    if y == 1:
        return a
    if isinstance(a, tir.Ramp) and dt.lanes(b.dtype) == 1:
        return tir.Ramp(mul(a.base, b), mul(a.stride, b), a.lanes, a.dtype)
    if isinstance(b, tir.Ramp) and dt.lanes(a.dtype) == 1:
        return tir.Ramp(mul(a, b.base), mul(a, b.stride), b.lanes, b.dtype)
    return _vector_op("mul", a, b)


def _vector_op(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    lanes = max(dt.lanes(a.dtype), dt.lanes(b.dtype))
    a, b = _broadcast(a, lanes), _broadcast(b, lanes)
    return tir.BinaryOp(kind, a, b, a.dtype)


def product(items: tuple[tir.PrimExpr, ...]) -> tir.PrimExpr:
    total: tir.PrimExpr = tir.IntImm(INDEX, 1)
    for item in items:
        total = mul(total, to_index(item))
    return total


_FOLD_INT = {
    "add": int.__add__,
    "sub": int.__sub__,
    "mul": int.__mul__,
    "min": min,
    "max": max,
}


class Simplify(StmtExprMutator):
    """Folds integer arithmetic on immediates and casts of immediates; leaves
    everything else (and every float) to LLVM, which knows IEEE rules better."""

    def visit_BinaryOp(self, e: tir.BinaryOp) -> tir.PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        x, y = _int(a), _int(b)
        fold = _FOLD_INT.get(e.kind)
        if x is not None and y is not None and dt.is_integer_like(e.dtype):
            if fold is not None:
                return tir.IntImm(e.dtype, _wrap(fold(x, y), e.dtype))
            if e.kind in ("floordiv", "floormod") and y != 0 and dt.is_int(e.dtype):
                value = x // y if e.kind == "floordiv" else x % y
                return tir.IntImm(e.dtype, _wrap(value, e.dtype))
        return replace(e, a=a, b=b)

    def visit_Cast(self, e: tir.Cast) -> tir.PrimExpr:
        value = self.visit_expr(e.value)
        x = _int(value)
        if x is not None and dt.is_integer_like(e.dtype) and not dt.is_bool(e.dtype):
            return tir.IntImm(e.dtype, _wrap(x, e.dtype))
        if value.dtype == e.dtype:
            return value
        return replace(e, value=value)
