"""Unary elementwise operators: math intrinsics, predicates, casts, clip and the
activation functions that are one expression per element.

Kernel and block names follow TOPI: math ops are `tir_<op>` kernels with a
`compute` block over `i0, i1, ...`; the broadcast-style ones (`square`,
`logical_not`, `bitwise_not`) use `T_<op>` blocks over `ax0, ...`.
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize

Scalar = Callable[[tir.PrimExpr], tir.PrimExpr]


def unary_kernel(
    ctx: LegalizeCtx, kernel: str, fn: Scalar, block: str = "compute", prefix: str = "i"
) -> tir.PrimExpr:
    """`out[i] = fn(x[i])` as one kernel named `kernel`."""

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        return kb.compute(x.shape, lambda *i: fn(x[i]), block, prefix=prefix)

    return ctx.call_te(kernel, build, args=ctx.args[:1])


def _intrinsic(name: str) -> Scalar:
    def fn(x: tir.PrimExpr) -> tir.PrimExpr:
        return E.call(name, x.dtype, x)

    fn.__name__ = f"scalar_{name}"
    return fn


_MATH = (
    "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin",
    "acos", "atan", "asinh", "acosh", "atanh", "erf", "sigmoid", "floor", "ceil", "round",
    "trunc",
)  # fmt: skip


def _math_rule(name: str) -> Callable[[LegalizeCtx], tir.PrimExpr]:
    scalar = _intrinsic(name)

    def rule(ctx: LegalizeCtx) -> tir.PrimExpr:
        x = ctx.arg_sinfo[0]
        if name in ("floor", "ceil", "round", "trunc") and not dt.is_float(x.dtype):
            return unary_kernel(ctx, "tir_identity", _identity)
        return unary_kernel(ctx, f"tir_{name}", scalar)

    rule.__name__ = f"legalize_{name}"
    return rule


for _name in _MATH:
    register_legalize(f"relax.{_name}")(_math_rule(_name))


def _identity(x: tir.PrimExpr) -> tir.PrimExpr:
    return x


def _negative(x: tir.PrimExpr) -> tir.PrimExpr:
    return E.mul(x, E.const(-1, x.dtype))


def _abs(x: tir.PrimExpr) -> tir.PrimExpr:
    if dt.is_float(x.dtype):
        return E.call("fabs", x.dtype, x)
    if dt.is_uint(x.dtype):
        return x
    # TOPI compares in int64 and negates from an int32 zero; keep its exact tree.
    zero = tir.IntImm("int32", 0)
    return E.select(
        E.binary("le", E.const(0, "int64"), E.cast(x, "int64")),
        x,
        tir.BinaryOp("sub", E.cast(zero, x.dtype) if x.dtype != "int32" else zero, x, x.dtype),
    )


def _isnan(x: tir.PrimExpr) -> tir.PrimExpr:
    if not dt.is_float(x.dtype):
        return E.const(False, "bool")
    return E.call("isnan", "bool", x)


def _isinf(x: tir.PrimExpr) -> tir.PrimExpr:
    if not dt.is_float(x.dtype):
        return E.const(False, "bool")
    inf = E.const(float("inf"), x.dtype)
    return E.logical_and(E.binary("eq", E.call("fabs", x.dtype, x), inf), E.logical_not(_isnan(x)))


def _isfinite(x: tir.PrimExpr) -> tir.PrimExpr:
    if not dt.is_float(x.dtype):
        return E.const(True, "bool")
    inf = E.const(float("inf"), x.dtype)
    ne = E.binary("ne", E.call("fabs", x.dtype, x), inf)
    return E.logical_and(E.logical_or(ne, _isnan(x)), E.logical_not(_isnan(x)))


def _sign(x: tir.PrimExpr) -> tir.PrimExpr:
    zero = E.const(0, x.dtype)
    pos = E.select(E.binary("lt", zero, x), E.const(1, x.dtype), zero)
    return E.select(E.binary("lt", x, zero), E.const(-1, x.dtype), pos)


@register_legalize("relax.negative")
def legalize_negative(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_negative", _negative)


@register_legalize("relax.abs")
def legalize_abs(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_abs", _abs)


@register_legalize("relax.isnan")
def legalize_isnan(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_isnan", _isnan)


@register_legalize("relax.isinf")
def legalize_isinf(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_isinf", _isinf)


@register_legalize("relax.isfinite")
def legalize_isfinite(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_isfinite", _isfinite)


@register_legalize("relax.sign")
def legalize_sign(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_sign", _sign)


def _square(x: tir.PrimExpr) -> tir.PrimExpr:
    return E.mul(x, x)


def _logical_not(x: tir.PrimExpr) -> tir.PrimExpr:
    return E.logical_not(x)


def _bitwise_not(x: tir.PrimExpr) -> tir.PrimExpr:
    return E.call("bitwise_not", x.dtype, x)


@register_legalize("relax.square")
def legalize_square(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_square", _square, "T_multiply", "ax")


@register_legalize("relax.logical_not")
def legalize_logical_not(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_logical_not", _logical_not, "T_logical_not", "ax")


@register_legalize("relax.bitwise_not")
def legalize_bitwise_not(ctx: LegalizeCtx) -> tir.PrimExpr:
    return unary_kernel(ctx, "tir_bitwise_not", _bitwise_not, "T_bitwise_not", "ax")


@register_legalize("relax.astype")
def legalize_astype(ctx: LegalizeCtx) -> tir.PrimExpr:
    dtype = ctx.attrs["dtype"]

    def to(x: tir.PrimExpr) -> tir.PrimExpr:
        return E.cast(x, dtype)

    return unary_kernel(ctx, "cast", to)


def _prim(ctx: LegalizeCtx, i: int, dtype: str) -> tir.PrimExpr:
    """Argument `i` (a PrimValue) as an immediate of `dtype`."""
    value = ctx.args[i].value  # type: ignore[attr-defined]
    return E.cast(ctx.k(value), dtype)


def clip_kernel(ctx: LegalizeCtx, lo: tir.PrimExpr, hi: tir.PrimExpr) -> tir.PrimExpr:
    def clip(x: tir.PrimExpr) -> tir.PrimExpr:
        return E.maximum(E.minimum(x, hi), lo)

    return unary_kernel(ctx, "tir_clip", clip)


@register_legalize("relax.clip")
def legalize_clip(ctx: LegalizeCtx) -> tir.PrimExpr:
    dtype = ctx.arg_sinfo[0].dtype
    return clip_kernel(ctx, _prim(ctx, 1, dtype), _prim(ctx, 2, dtype))


@register_legalize("relax.nn.relu6")
def legalize_relu6(ctx: LegalizeCtx) -> tir.PrimExpr:
    dtype = ctx.arg_sinfo[0].dtype
    return clip_kernel(ctx, E.const(0, dtype), E.const(6, dtype))


@register_legalize("relax.nn.relu")
def legalize_relu(ctx: LegalizeCtx) -> tir.PrimExpr:
    def relu(x: tir.PrimExpr) -> tir.PrimExpr:
        zero = E.const(0, x.dtype) if x.dtype != "int32" else tir.IntImm("int32", 0)
        return E.maximum(x, zero)

    return unary_kernel(ctx, "relu", relu)


@register_legalize("relax.nn.leakyrelu")
def legalize_leakyrelu(ctx: LegalizeCtx) -> tir.PrimExpr:
    alpha = float(ctx.attrs["alpha"])

    def leaky(x: tir.PrimExpr) -> tir.PrimExpr:
        zero = E.const(0, x.dtype)
        return E.select(E.binary("lt", zero, x), x, E.mul(x, E.const(alpha, x.dtype)))

    return unary_kernel(ctx, "leaky_relu", leaky)


@register_legalize("relax.nn.softplus")
def legalize_softplus(ctx: LegalizeCtx) -> tir.PrimExpr:
    beta, threshold = float(ctx.attrs["beta"]), float(ctx.attrs["threshold"])

    def softplus(x: tir.PrimExpr) -> tir.PrimExpr:
        d = x.dtype
        bx = E.mul(x, E.const(beta, d))
        soft = E.div(E.call("log", d, E.add(E.const(1, d), E.call("exp", d, bx))), E.const(beta, d))
        return E.select(E.binary("lt", E.const(threshold, d), bx), x, soft)

    return unary_kernel(ctx, "softplus", softplus)
