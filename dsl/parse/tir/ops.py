"""TIR typing rules used while parsing: literals that wait for a dtype, operand
type matching, casts and the small linear simplifier behind extents.

These mirror what TVM's script parser gets from Python operator overloading
(`_auto_broadcast`, `BinaryOpMatchTypes`, `tvm::cast`) so that a parsed text
builds the same nodes as TVM would, without evaluating any Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tvmlite.diagnostics import ParseError, Span
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.arith import const_int

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True, slots=True)
class Lit:
    """A Python literal (`2`, `0.5`, `True`) whose dtype comes from its context."""

    value: int | float | bool
    span: Span | None = None


Value = tir.PrimExpr | Lit


def literal_kind(value: float | bool) -> str:
    if isinstance(value, bool):
        return "bool"
    return "int" if isinstance(value, int) else "float"


def default_dtype(lit: Lit) -> str:
    """bool -> bool, int -> int32 (int64 when it does not fit), float -> float32."""
    kind = literal_kind(lit.value)
    if kind == "int":
        return "int32" if INT32_MIN <= int(lit.value) <= INT32_MAX else "int64"
    return "bool" if kind == "bool" else "float32"


def make_const(value: float | bool, dtype: str, span: Span | None = None) -> tir.PrimExpr:
    """An immediate; a vector dtype gives a Broadcast of the scalar immediate.
    A value the dtype cannot hold is a located error (see `tir.IntImm`)."""
    lanes = dt.lanes(dtype)
    elem = dt.element_of(dtype)
    if dt.is_float(elem):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond every float
            raise ParseError(f"value {value} is out of range for {elem}", span) from None
        scalar: tir.PrimExpr = tir.FloatImm(elem, number, span)
    elif dt.is_bool(elem):
        scalar = tir.IntImm(elem, int(bool(value)), span)
    else:
        scalar = tir.IntImm(elem, int(value), span)
    return scalar if lanes == 1 else tir.Broadcast(scalar, lanes, dtype, span)


def materialize(value: Value, dtype: str | None = None) -> tir.PrimExpr:
    """A literal as an immediate of `dtype` (if it suits the literal) or its default."""
    if not isinstance(value, Lit):
        return value
    kind = literal_kind(value.value)
    if dtype is not None and dtype != "handle" and dt.is_valid(dtype):
        elem = dt.element_of(dtype)
        if kind != "float" or dt.is_float(elem):
            return make_const(value.value, elem, value.span)
    return make_const(value.value, default_dtype(value), value.span)


def adopt(lit: Lit, other: tir.PrimExpr) -> tir.PrimExpr:
    """TVM's `_auto_broadcast`: a literal takes the scalar dtype of the other operand."""
    elem = dt.element_of(other.dtype)
    kind = literal_kind(lit.value)
    if other.dtype == "handle":
        return materialize(lit)
    if kind in ("int", "bool") and (dt.is_integer_like(elem) or dt.is_float(elem)):
        if kind == "int" and dt.is_integer_like(elem) and dt.range_error(elem, lit.value):
            # TVM makes such a literal int64 and promotes the other operand to it.
            return materialize(lit)
        return make_const(lit.value, elem, lit.span)
    if kind == "float" and dt.is_float(elem):
        return make_const(lit.value, elem, lit.span)
    return materialize(lit)


# Folding literal arithmetic computes what TVM's parser gets from Python; beyond
# this many bits no dtype can hold the result, so it is refused before computing it.
_FOLD_BITS = 1100


class LiteralError(Exception):
    """Raised by `fold_literals`; the parser turns it into a located error."""


def fold_literals(op: str, a: float, b: float) -> float:
    """`a op b` on two number literals (`2**31`, `4 * 4`), as Python computes it
    when TVM's parser evaluates the text: `op` is `+ - * // % **`."""
    try:
        if op == "**":
            if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
                if b * (abs(a).bit_length() - 1) > _FOLD_BITS:
                    raise LiteralError(f"{a} ** {b} is too large for any dtype")
            result = a**b
        elif op == "+":
            result = a + b
        elif op == "-":
            result = a - b
        elif op == "*":
            result = a * b
        elif op == "//":
            result = a // b
        else:
            result = a % b
    except ZeroDivisionError:
        raise LiteralError(f"division by zero in {a} {op} {b}") from None
    except OverflowError:
        raise LiteralError(f"{a} {op} {b} is too large for any dtype") from None
    if isinstance(result, complex):
        raise LiteralError(f"{a} ** {b} is not a real number")
    if isinstance(result, int) and result.bit_length() > _FOLD_BITS:
        raise LiteralError(f"{a} {op} {b} is too large for any dtype")
    return result


def pair(a: Value, b: Value) -> tuple[tir.PrimExpr, tir.PrimExpr]:
    """Resolve literals of a binary operation against each other."""
    if isinstance(a, Lit) and isinstance(b, Lit):
        if literal_kind(a.value) == "float" or literal_kind(b.value) == "float":
            return make_const(a.value, "float32", a.span), make_const(b.value, "float32", b.span)
        return materialize(a), materialize(b)
    if isinstance(a, Lit):
        assert not isinstance(b, Lit)
        return adopt(a, b), b
    if isinstance(b, Lit):
        return a, adopt(b, a)
    return a, b


def cast(dtype: str, value: tir.PrimExpr, span: Span | None = None) -> tir.PrimExpr:
    """`tvm::cast`: folds immediates, broadcasts scalars to vectors, else a Cast."""
    if value.dtype == dtype:
        return value
    if dt.lanes(dtype) > 1 and dt.lanes(value.dtype) == 1:
        elem = cast(dt.element_of(dtype), value, span)
        return tir.Broadcast(elem, dt.lanes(dtype), dtype, span)
    if isinstance(value, tir.IntImm | tir.FloatImm) and dt.lanes(dtype) == 1:
        number: int | float = value.value
        if not dt.is_float(dtype):
            if not math.isfinite(number):
                return tir.Cast(dtype, value, span)
            number = int(number)
        return make_const(number, dtype, span)
    return tir.Cast(dtype, value, span)


class TypeMismatch(Exception):
    """Raised by `match_types`; the parser turns it into a located error."""


def match_types(a: tir.PrimExpr, b: tir.PrimExpr) -> tuple[tir.PrimExpr, tir.PrimExpr]:
    """TVM's `BinaryOpMatchTypes`: broadcast lanes, then promote within kinds."""
    if a.dtype == b.dtype:
        return a, b
    la, lb = dt.lanes(a.dtype), dt.lanes(b.dtype)
    if la == 1 and lb > 1:
        a = tir.Broadcast(a, lb, dt.with_lanes(a.dtype, lb), a.span)
    elif lb == 1 and la > 1:
        b = tir.Broadcast(b, la, dt.with_lanes(b.dtype, la), b.span)
    elif la != lb:
        raise TypeMismatch(f"cannot match types {a.dtype} and {b.dtype}")
    if a.dtype == b.dtype:
        return a, b
    ta, tb = dt.element_of(a.dtype), dt.element_of(b.dtype)
    if "handle" in (ta, tb):
        raise TypeMismatch(f"cannot match types {a.dtype} and {b.dtype}")
    fa, fb = dt.is_float(ta), dt.is_float(tb)
    if fa and fb or dt.code(ta) == dt.code(tb):
        wider = a.dtype if dt.bits(ta) >= dt.bits(tb) else b.dtype
        return cast(wider, a), cast(wider, b)
    if fa != fb:
        target = a.dtype if fa else b.dtype
        return cast(target, a), cast(target, b)
    if dt.is_bool(ta) or dt.is_bool(tb):
        target = b.dtype if dt.is_bool(ta) else a.dtype
        return cast(target, a), cast(target, b)
    # Mixed signed/unsigned: the wider wins, unsigned on a tie.
    if dt.bits(ta) != dt.bits(tb):
        wider = a.dtype if dt.bits(ta) > dt.bits(tb) else b.dtype
        return cast(wider, a), cast(wider, b)
    unsigned = a.dtype if dt.is_uint(ta) else b.dtype
    return cast(unsigned, a), cast(unsigned, b)


def result_dtype(kind: str, operand: str) -> str:
    if kind in tir.ARITH_OPS:
        return operand
    return dt.with_lanes("bool", dt.lanes(operand))


def binary(kind: str, a: Value, b: Value, span: Span | None = None) -> tir.BinaryOp:
    """A BinaryOp after literal adoption and type matching (may raise TypeMismatch)."""
    x, y = match_types(*pair(a, b))
    return tir.BinaryOp(kind, x, y, result_dtype(kind, x.dtype), span)


# ---------------------------------------------------------------- differences


def difference(stop: tir.PrimExpr, start: tir.PrimExpr, span: Span | None = None) -> tir.PrimExpr:
    """`stop - start`, folded to an immediate when the difference is constant
    (what TVM's analyzer does for `range(a, a + 4)` and slices `i:i + 4`)."""
    if isinstance(start, tir.IntImm) and start.value == 0:
        return stop
    x, y = match_types(stop, start)
    value = const_int(tir.BinaryOp("sub", x, y, x.dtype))
    if value is not None:
        return tir.IntImm(x.dtype, value, span)
    return tir.BinaryOp("sub", x, y, x.dtype, span)
