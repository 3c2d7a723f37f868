"""Math, bit and limit intrinsics of TIR (`T.exp`, `T.pow`, `T.abs`, `T.shift_left`,
`T.max_value`, `T.reinterpret`, ...), with the argument dtype rules TVM applies.

Also home of the builtin signature type shared with `tir/intrin`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.parse.tir.expr import ExprParser
from tvmlite.dsl.parse.tir.ops import Lit, Value, make_const, materialize
from tvmlite.grammar import syntax

FLOAT_UNARY = [
    "exp",
    "exp2",
    "exp10",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "sigmoid",
    "fabs",
    "round",
    "nearbyint",
]
FLOAT_BINARY = ["atan2", "hypot", "copysign", "nextafter"]


@dataclass(frozen=True, slots=True)
class Sig:
    """Positional arity (`max_args` None = unbounded) and accepted keywords; with
    `any_keywords`, others too (TVM's tile operators keep any keyword as a config)."""

    min_args: int
    max_args: int | None
    keywords: tuple[str, ...] = ()
    any_keywords: bool = False


Args = list[syntax.Node]
Kwargs = dict[str, syntax.Node]
Builtin = Callable[[ExprParser, str, syntax.Call, Args, Kwargs], Value]

# ---------------------------------------------------------------- math


def _float_operand(p: ExprParser, name: str, arg: syntax.Node) -> tir.PrimExpr:
    value = p.value(arg)
    expr = materialize(value, "float32") if isinstance(value, Lit) else value
    if not dt.is_float(dt.element_of(expr.dtype)):
        raise p.error(f"T.{name} expects a float argument, got {expr.dtype}", arg)
    return expr


def _math(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    x = _float_operand(p, name, args[0])
    return tir.Call(x.dtype, name, (x,), node.span)


def _rounding(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """floor/ceil/trunc of an integer is the integer itself (as in TVM)."""
    value = p.expr(args[0])
    if dt.is_integer_like(dt.element_of(value.dtype)):
        return value
    return tir.Call(value.dtype, name, (value,), node.span)


def _abs(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """TVM: fabs for floats, `Select(x >= 0, x, 0 - x)` for signed ints, x for unsigned."""
    x = p.expr(args[0])
    elem = dt.element_of(x.dtype)
    if dt.is_float(elem):
        return tir.Call(x.dtype, "fabs", (x,), node.span)
    if not dt.is_int(elem):
        return x
    zero = make_const(0, x.dtype, node.span)
    cond = tir.BinaryOp("ge", x, zero, dt.with_lanes("bool", dt.lanes(x.dtype)), node.span)
    neg = tir.BinaryOp("sub", zero, x, x.dtype, node.span)
    return tir.Select(cond, x, neg, x.dtype, node.span)


def _classify(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    x = _float_operand(p, name, args[0])
    return tir.Call(dt.with_lanes("bool", dt.lanes(x.dtype)), name, (x,), node.span)


def _bits(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    x = p.expr(args[0])
    if not dt.is_integer_like(dt.element_of(x.dtype)):
        raise p.error(f"T.{name} expects an integer argument, got {x.dtype}", args[0])
    # TVM counts leading zeros into an int32 whatever the argument's width
    dtype = dt.like_lanes("int32", x.dtype) if name == "clz" else x.dtype
    return tir.Call(dtype, name, (x,), node.span)


def _math2(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    if name == "pow":
        return p.power(p.value(args[0]), p.value(args[1]), node)
    x, y = p.matched(p.value(args[0]), p.value(args[1]), node)
    if name in FLOAT_BINARY and not dt.is_float(dt.element_of(x.dtype)):
        raise p.error(f"T.{name} expects float arguments, got {x.dtype}", node)
    return tir.Call(x.dtype, name, (x, y), node.span)


def _ldexp(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    x = _float_operand(p, name, args[0])
    return tir.Call(x.dtype, name, (x, p.expr(args[1])), node.span)


# TVM 0.27's node classes of the bitwise operators, callable as `T.BitwiseAnd(a, b)`
_BITWISE_NODES = {
    "BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor",
    "BitwiseNot": "bitwise_not", "LShift": "shift_left", "RShift": "shift_right",
}  # fmt: skip


def _bitwise(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    a = p.value(args[0])
    b = p.value(args[1]) if len(args) > 1 else None
    return p.bitwise(_BITWISE_NODES.get(name, name), a, b, node)


def _ceildiv(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.ceildiv(a, b)` is what TVM's API builds: `(a + b - 1) // b`."""
    a, b = p.matched(p.value(args[0]), p.value(args[1]), node)
    if not dt.is_integer_like(dt.element_of(a.dtype)):
        raise p.error(f"T.ceildiv expects integer operands, got {a.dtype}", node)
    one = make_const(1, a.dtype, node.span)
    top = tir.BinaryOp("sub", tir.BinaryOp("add", a, b, a.dtype, node.span), one, a.dtype)
    return tir.BinaryOp("floordiv", top, b, a.dtype, node.span)


def _limit(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.max_value/min_value/infinity(dtype)` are immediates in TVM, not calls."""
    dtype = p.dtype_arg(args[0])
    elem = dt.element_of(dtype)
    if name == "infinity":
        if not dt.is_float(elem):
            raise p.error(f"T.{name} is not defined for {dtype}", node)
        return make_const(math.inf, dtype, node.span)
    bounds = dt.limits(elem)
    if bounds is None:
        raise p.error(f"T.{name} does not know the range of {dtype}", node)
    return make_const(bounds[1] if name == "max_value" else bounds[0], dtype, node.span)


def _reinterpret(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """Kept whatever the sizes: TVM prints device intrinsics' operands packed into
    another width (`T.reinterpret("int32", A[tx, T.Ramp(0, 1, 4)])` of float16); a CPU
    build refuses a reinterpret that changes the size."""
    (dtype, pointee), value = p.type_arg(args[0]), p.expr(args[1])
    if dtype == value.dtype and dtype != "handle":
        return value  # as TVM folds a number's (not a string's, typed "handle" here)
    return tir.Call(dtype, "reinterpret", (value,), node.span, pointee=pointee)


def _infinite(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.isinf(x)` and `T.isfinite(x)` are what TVM's API builds of them (TVM prints
    neither): `T.fabs(x) == inf and not T.isnan(x)`, and `not isinf and not isnan`."""
    x = _float_operand(p, name, args[0])
    span, flag = node.span, dt.with_lanes("bool", dt.lanes(x.dtype))
    nan = tir.Call(flag, "isnan", (x,), span)
    inf = make_const(math.inf, x.dtype, span)
    magnitude = tir.Call(x.dtype, "fabs", (x,), span)
    equal = tir.BinaryOp("eq", magnitude, inf, flag, span)
    isinf = tir.BinaryOp("and", equal, tir.Not(nan, span=span), flag, span)
    if name == "isinf":
        return isinf
    return tir.BinaryOp("and", tir.Not(isinf, span=span), tir.Not(nan, span=span), flag, span)


MATH_BUILTINS: dict[str, tuple[Builtin, Sig]] = {
    "abs": (_abs, Sig(1, 1)),
    "floor": (_rounding, Sig(1, 1)),
    "ceil": (_rounding, Sig(1, 1)),
    "trunc": (_rounding, Sig(1, 1)),
    "isnan": (_classify, Sig(1, 1)),
    "isinf": (_infinite, Sig(1, 1)),
    "isfinite": (_infinite, Sig(1, 1)),
    "popcount": (_bits, Sig(1, 1)),
    "clz": (_bits, Sig(1, 1)),
    "pow": (_math2, Sig(2, 2)),
    "fmod": (_math2, Sig(2, 2)),
    "ldexp": (_ldexp, Sig(2, 2)),
    "shift_left": (_bitwise, Sig(2, 2)),
    "shift_right": (_bitwise, Sig(2, 2)),
    "bitwise_and": (_bitwise, Sig(2, 2)),
    "bitwise_or": (_bitwise, Sig(2, 2)),
    "bitwise_xor": (_bitwise, Sig(2, 2)),
    "bitwise_not": (_bitwise, Sig(1, 1)),
    **{name: (_bitwise, Sig(2, 2)) for name in _BITWISE_NODES},
    "BitwiseNot": (_bitwise, Sig(1, 1)),
    "ceildiv": (_ceildiv, Sig(2, 2)),
    "max_value": (_limit, Sig(1, 1)),
    "min_value": (_limit, Sig(1, 1)),
    "infinity": (_limit, Sig(1, 1)),
    "reinterpret": (_reinterpret, Sig(2, 2)),
}
MATH_BUILTINS.update({name: (_math, Sig(1, 1)) for name in FLOAT_UNARY})
MATH_BUILTINS.update({name: (_math2, Sig(2, 2)) for name in FLOAT_BINARY})
