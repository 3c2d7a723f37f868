"""Symbolic sizes: torch.export's sympy symbols as TIR vars, and the arithmetic TVM's
Python operators do on TIR scalars (`s0 + 1` when a model computes with sizes).

A dim `torch.export.Dim("batch")` becomes the symbol torch names it (`s77`), which is
the TIR var's name, as in TVM's import; a derived dim (`2 * s0`, `s0 + 1`) becomes the
TIR expression. The operators fold constants the way TVM's `tvm::add`/`mul`/...
do before building a node (both sides immediate, or an identity such as `x + 0`)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import sympy

from tvmlite.dsl import tir

INDEX = "int64"


def from_sympy(expr: Any, symbols: dict[str, tir.Var]) -> tuple[str, tir.PrimExpr | None]:
    """(name, expression) of a shape symbol: a plain symbol gives (its name, None)
    (the caller makes the var); a sum or product of symbols and integers gives its
    TIR expression and a descriptive name (`s0___1` for s0 + 1, `s0_2` for 2 * s0),
    or None when it holds anything else."""
    if isinstance(expr, sympy.Symbol) or not isinstance(expr, (sympy.Add, sympy.Mul)):
        return str(expr), None
    combine = add if isinstance(expr, sympy.Add) else mul
    result: tir.PrimExpr | None = None
    for arg in expr.args:
        if isinstance(arg, sympy.Integer):
            term: tir.PrimExpr | None = tir.IntImm(INDEX, int(arg))
        elif isinstance(arg, sympy.Symbol):
            term = symbols.setdefault(str(arg), tir.Var(str(arg), INDEX))
        else:
            term = from_sympy(arg, symbols)[1]
        if term is None:
            return str(expr), None
        result = term if result is None else combine(result, term)
    name = str(expr)
    if isinstance(result, tir.BinaryOp) and result.kind in ("add", "mul"):
        for const, var in ((result.a, result.b), (result.b, result.a)):
            if isinstance(const, tir.IntImm) and isinstance(var, tir.Var):
                sep = "___" if result.kind == "add" else "_"
                name = f"{var.name}{sep}{const.value}"
                break
    return name, result


def dim_of(size: Any, symbols: dict[str, tir.Var]) -> tir.PrimExpr:
    """A tensor dim from torch.export's metadata: an int, or a SymInt's TIR form."""
    if isinstance(size, int):
        return tir.IntImm(INDEX, size)
    node = size.node
    expr = node.expr if hasattr(node, "expr") else node
    name, derived = from_sympy(expr, symbols)
    if derived is not None:
        return derived
    return symbols.setdefault(name, tir.Var(name, INDEX))


# ---------------------------------------------------------------- TIR arithmetic


def _imm(value: Any, like: tir.PrimExpr) -> tir.PrimExpr:
    if isinstance(value, tir.PrimExpr):
        return value
    if isinstance(value, bool):
        return tir.IntImm("bool", int(value))
    if isinstance(value, int):
        dtype = like.dtype if not like.dtype.startswith("float") else INDEX
        return tir.IntImm(dtype if dtype != "bool" else INDEX, value)
    return tir.FloatImm(like.dtype if like.dtype.startswith("float") else "float32", value)


def _value(e: tir.PrimExpr) -> int | float | None:
    return e.value if isinstance(e, (tir.IntImm, tir.FloatImm)) else None


def _binary(kind: str, fold: Callable[[Any, Any], Any], a: Any, b: Any) -> tir.PrimExpr:
    if not isinstance(a, tir.PrimExpr):
        a = _imm(a, b)
    b = _imm(b, a)
    x, y = _value(a), _value(b)
    if x is not None and y is not None and (kind not in ("floordiv", "floormod") or y != 0):
        folded = fold(x, y)
        return (tir.IntImm if isinstance(folded, int) else tir.FloatImm)(a.dtype, folded)
    if kind == "add" and y == 0:
        return a
    if kind == "add" and x == 0:
        return b
    if kind == "sub" and y == 0:
        return a
    if kind == "mul" and (y == 1 or x == 0):
        return a
    if kind == "mul" and (x == 1 or y == 0):
        return b
    if kind == "floordiv" and y == 1:
        return a
    return tir.BinaryOp(kind, a, b, a.dtype)


def add(a: Any, b: Any) -> tir.PrimExpr:
    return _binary("add", operator.add, a, b)


def sub(a: Any, b: Any) -> tir.PrimExpr:
    return _binary("sub", operator.sub, a, b)


def mul(a: Any, b: Any) -> tir.PrimExpr:
    return _binary("mul", operator.mul, a, b)


def floordiv(a: Any, b: Any) -> tir.PrimExpr:
    return _binary("floordiv", operator.floordiv, a, b)


def floormod(a: Any, b: Any) -> tir.PrimExpr:
    return _binary("floormod", operator.mod, a, b)


def compare(kind: str, a: Any, b: Any) -> tir.PrimExpr:
    """`a < b` and friends on TIR scalars: a bool expression (folded when constant)."""
    fold = {
        "lt": operator.lt,
        "le": operator.le,
        "gt": operator.gt,
        "ge": operator.ge,
        "eq": operator.eq,
        "ne": operator.ne,
    }[kind]
    if not isinstance(a, tir.PrimExpr):
        a = _imm(a, b)
    b = _imm(b, a)
    x, y = _value(a), _value(b)
    if x is not None and y is not None:
        return tir.IntImm("bool", int(fold(x, y)))
    return tir.BinaryOp(kind, a, b, "bool")
