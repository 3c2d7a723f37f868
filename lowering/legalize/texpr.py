"""Scalar expression builders for tensor expressions, with TVM's constant folding.

TVM folds constants while an expression is built (`x * 1` is `x`, `2 + 3` is
`5`), so the kernels it prints never show such terms. Building through these
helpers (which fold with `dsl/arith.py`) gives the same trees; building
`tir.BinaryOp` directly would not.
"""

from __future__ import annotations

from tvmlite.dsl import arith, tir
from tvmlite.dsl import dtype as dt

# `E.const` and `E.value_of` are part of the vocabulary legalization rules build with.
from tvmlite.dsl.arith import const, value_of  # noqa: F401

Expr = tir.PrimExpr | int | float | bool
INDEX = "int64"


def idx(value: Expr) -> tir.PrimExpr:
    """An index expression: Python ints become int64 immediates."""
    return as_expr(value, INDEX)


def as_expr(value: Expr, dtype: str) -> tir.PrimExpr:
    """`value` as an expression; Python numbers take `dtype`."""
    if isinstance(value, tir.PrimExpr):
        return value
    return const(value, dtype)


def _match(a: Expr, b: Expr) -> tuple[tir.PrimExpr, tir.PrimExpr]:
    """Give both operands one dtype the way TVM's BinaryOpMatchTypes does."""
    if not isinstance(a, tir.PrimExpr) and not isinstance(b, tir.PrimExpr):
        dtype = "float32" if isinstance(a, float) or isinstance(b, float) else "int32"
        return const(a, dtype), const(b, dtype)
    if not isinstance(a, tir.PrimExpr):
        return const(a, b.dtype), b  # type: ignore[union-attr]
    if not isinstance(b, tir.PrimExpr):
        return a, const(b, a.dtype)
    if a.dtype == b.dtype:
        return a, b
    if dt.is_float(a.dtype) and not dt.is_float(b.dtype):
        return a, cast(b, a.dtype)
    if dt.is_float(b.dtype) and not dt.is_float(a.dtype):
        return cast(a, b.dtype), b
    if dt.bits(a.dtype) >= dt.bits(b.dtype):
        return a, cast(b, a.dtype)
    return cast(a, b.dtype), b


def cast(e: Expr, dtype: str) -> tir.PrimExpr:
    """`T.Cast(dtype, e)`, folded for immediates and dropped when already `dtype`."""
    return arith.cast(dtype, as_expr(e, dtype))


def binary(kind: str, a: Expr, b: Expr) -> tir.PrimExpr:
    """A binary operation, with the folding `tvm::arith::TryConstFold` applies."""
    return arith.fold(kind, *_match(a, b))


def add(a: Expr, b: Expr) -> tir.PrimExpr:
    return binary("add", a, b)


def sub(a: Expr, b: Expr) -> tir.PrimExpr:
    return binary("sub", a, b)


def mul(a: Expr, b: Expr) -> tir.PrimExpr:
    return binary("mul", a, b)


def div(a: Expr, b: Expr) -> tir.PrimExpr:
    """True division on floats, truncating `T.Div` on integers."""
    return binary("div", a, b)


def floordiv(a: Expr, b: Expr) -> tir.PrimExpr:
    return binary("floordiv", a, b)


def floormod(a: Expr, b: Expr) -> tir.PrimExpr:
    return binary("floormod", a, b)


def truncmod(a: Expr, b: Expr) -> tir.PrimExpr:
    return binary("mod", a, b)


def minimum(a: Expr, b: Expr) -> tir.PrimExpr:
    return binary("min", a, b)


def maximum(a: Expr, b: Expr) -> tir.PrimExpr:
    return binary("max", a, b)


def logical_and(a: Expr, b: Expr) -> tir.PrimExpr:
    return tir.BinaryOp("and", as_expr(a, "bool"), as_expr(b, "bool"), "bool")


def logical_or(a: Expr, b: Expr) -> tir.PrimExpr:
    return tir.BinaryOp("or", as_expr(a, "bool"), as_expr(b, "bool"), "bool")


def logical_not(a: Expr) -> tir.PrimExpr:
    return tir.Not(as_expr(a, "bool"))


def select(cond: Expr, t: Expr, f: Expr) -> tir.PrimExpr:
    t, f = _match(t, f)
    return tir.Select(as_expr(cond, "bool"), t, f, t.dtype)


def if_then_else(cond: Expr, t: Expr, f: Expr) -> tir.PrimExpr:
    t, f = _match(t, f)
    return tir.Call(t.dtype, "if_then_else", (as_expr(cond, "bool"), t, f))


def call(op: str, dtype: str, *args: tir.PrimExpr) -> tir.PrimExpr:
    """An intrinsic call `T.<op>(args...)` returning `dtype`."""
    return tir.Call(dtype, op, tuple(args))


def max_value(dtype: str) -> tir.PrimExpr:
    """The largest value of `dtype` as an immediate (what `T.max_value` folds to)."""
    return const(_limits(dtype)[1], dtype)


def min_value(dtype: str) -> tir.PrimExpr:
    return const(_limits(dtype)[0], dtype)


def _limits(dtype: str) -> tuple[float, float]:
    found = dt.limits(dtype)
    if found is None:
        raise ValueError(f"no range known for {dtype}")
    return found
