"""Tensor creation: full/ones/zeros (and their `_like` forms), arange, triu/tril,
eye. Fill values that are constants are folded into the kernel, so these
kernels take no inputs (TVM's `T_full` kernels)."""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.dsl.analysis import free_vars
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize


def _fill_value(expr: relax.Expr, dtype: str) -> tir.PrimExpr:
    if isinstance(expr, relax.Constant) and expr.data.ndim == 0:
        return E.cast(
            E.const(expr.data.item(), "float64" if expr.data.dtype.kind == "f" else "int64"), dtype
        )
    if isinstance(expr, relax.PrimValue):
        return E.cast(expr.value, dtype)
    raise LegalizeUnsupported("fill value must be a scalar constant")


def fill_kernel(ctx: LegalizeCtx, name: str, value: tir.PrimExpr) -> relax.Expr:
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder) -> te.Tensor:
        return kb.compute(shape, lambda *ax: value, "T_full")

    return ctx.call_te(name, build, args=())


@register_legalize("relax.full")
def legalize_full(ctx: LegalizeCtx) -> relax.Expr:
    return fill_kernel(ctx, "full", _fill_value(ctx.args[1], ctx.out_dtype()))


@register_legalize("relax.full_like")
def legalize_full_like(ctx: LegalizeCtx) -> relax.Expr:
    return fill_kernel(ctx, "full", _fill_value(ctx.args[1], ctx.out_dtype()))


def _constant_rule(name: str, value: int):  # noqa: ANN202 - returns a rule
    def rule(ctx: LegalizeCtx) -> relax.Expr:
        return fill_kernel(ctx, name, E.const(value, ctx.out_dtype()))

    rule.__name__ = f"legalize_{name}"
    return rule


for _op, _kernel, _value in (
    ("ones", "ones", 1),
    ("ones_like", "ones", 1),
    ("zeros", "zeros", 0),
    ("zeros_like", "zeros", 0),
):
    register_legalize(f"relax.{_op}")(_constant_rule(_kernel, _value))


@register_legalize("relax.arange")
def legalize_arange(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()
    dtype = ctx.out_dtype()
    start, _end, step = (ctx.k(a.value) for a in ctx.args)  # type: ignore[attr-defined]

    def build(kb: te.KernelBuilder) -> te.Tensor:
        def body(ax0: tir.Var) -> tir.PrimExpr:
            return E.cast(E.add(E.mul(E.cast(ax0, start.dtype), step), start), dtype)

        return kb.compute(shape, body, "T_arange")

    return ctx.call_te("arange", build, args=())


def _trilu(ctx: LegalizeCtx, upper: bool) -> relax.Expr:
    k = ctx.args[1].value if len(ctx.args) > 1 else E.idx(0)  # type: ignore[attr-defined]
    k = ctx.k(k)

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        def body(*i: tir.Var) -> tir.PrimExpr:
            row, col = i[-2], i[-1]
            kv = E.value_of(k)
            if upper and isinstance(kv, int) and kv > 0:  # `i + 1 <= j` prints as `i < j`
                cond = E.binary("lt", E.add(row, kv - 1), col)
            elif upper:
                cond = E.binary("le", E.add(row, k), col)
            else:
                cond = E.binary("le", col, E.add(row, k))
            return E.select(cond, x[i], E.const(0, x.dtype))

        return kb.compute(x.shape, body, "trilu", prefix="i")

    return ctx.call_te("triu" if upper else "tril", build, args=ctx.args[:1])


@register_legalize("relax.triu")
def legalize_triu(ctx: LegalizeCtx) -> relax.Expr:
    return _trilu(ctx, True)


@register_legalize("relax.tril")
def legalize_tril(ctx: LegalizeCtx) -> relax.Expr:
    return _trilu(ctx, False)


def _prim_arg(ctx: LegalizeCtx, i: int) -> tir.PrimExpr:
    arg = ctx.args[i]
    if not isinstance(arg, relax.PrimValue):
        raise LegalizeUnsupported("expected a prim value")
    return ctx.k(arg.value)


def eye_kernel(ctx: LegalizeCtx, k: tir.PrimExpr, args: tuple) -> relax.Expr:
    shape, dtype = ctx.out_shape(), ctx.out_dtype()

    def build(kb: te.KernelBuilder, *_: object) -> te.Tensor:
        def body(i: tir.Var, j: tir.Var) -> tir.PrimExpr:
            on = E.binary("eq", E.add(i, E.cast(k, "int64")), j)
            return E.select(on, E.const(1, dtype), E.const(0, dtype))

        return kb.compute(shape, body, "T_eye")

    return ctx.call_te("eye", build, args=args)


@register_legalize("relax.eye")
def legalize_eye(ctx: LegalizeCtx) -> relax.Expr:
    return eye_kernel(ctx, _prim_arg(ctx, 2), ())


@register_legalize("relax.eye_like")
def legalize_eye_like(ctx: LegalizeCtx) -> relax.Expr:
    return eye_kernel(ctx, _prim_arg(ctx, 1), ())


@register_legalize("relax.hamming_window")
def legalize_hamming_window(ctx: LegalizeCtx) -> relax.Expr:
    """`alpha - beta * cos(2 pi n / N')`, N' = size if periodic else size - 1; [1.0] if size 1."""
    size, periodic, alpha, beta = (_prim_arg(ctx, i) for i in range(4))
    shape, dtype = ctx.out_shape(), ctx.out_dtype()

    def build(kb: te.KernelBuilder) -> te.Tensor:
        def body(i: tir.Var) -> tir.PrimExpr:
            n = E.cast(size, "float64")
            denom = E.select(E.binary("ne", E.cast(periodic, "int64"), E.idx(0)), n, E.sub(n, 1.0))
            denom = E.maximum(denom, E.const(1, "float64"))
            phase = E.div(E.mul(E.const(6.283185307179586, "float64"), E.cast(i, "float64")), denom)
            a, b = E.cast(alpha, "float64"), E.cast(beta, "float64")
            value = E.sub(a, E.mul(b, E.call("cos", "float64", phase)))
            # A one-point window is [1.0] (TVM's topi and torch special-case it).
            single = E.binary("eq", E.cast(size, "int64"), E.idx(1))
            return E.cast(E.select(single, E.const(1, "float64"), value), dtype)

        return kb.compute(shape, body, "T_hamming_window")

    return ctx.call_te("hamming_window", build, args=())


@register_legalize("relax.shape_to_tensor")
def legalize_shape_to_tensor(ctx: LegalizeCtx) -> relax.Expr:
    """The values of a shape as a 1-d int64 tensor (TVM runs a VM builtin): a kernel
    that takes the symbolic values as scalars and writes one per position."""
    arg = ctx.args[0]
    values = (
        arg.values
        if isinstance(arg, relax.ShapeExpr)
        else getattr(ctx.arg_sinfo[0], "values", None)
    )
    if values is None:
        raise LegalizeUnsupported("R.shape_to_tensor of a shape whose values are unknown")
    dims = [E.cast(ctx.k(v), "int64") for v in values]
    scalars = free_vars(dims)

    def build(kb: te.KernelBuilder) -> te.Tensor:
        def body(i: tir.Var) -> tir.PrimExpr:
            value = dims[-1]
            for k in range(len(dims) - 2, -1, -1):
                value = E.select(E.binary("eq", i, E.idx(k)), dims[k], value)
            return value

        return kb.compute((len(dims),), body, "shape_to_tensor")

    return ctx.call_te("shape_to_tensor", build, args=(), scalars=scalars)
