"""Reductions: sum, mean, prod, max, min, variance, std, argmax/argmin and
collapse_sum. A reduction stage is named after its input (`x_red`), its
reduction axes `k<axis>`, its spatial axes `ax0, ...` over the output shape."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.broadcast import bcast_load
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize

Reducer = Callable[[tir.PrimExpr, Sequence[te.RAxis]], te.Reduce]
_REDUCERS: dict[str, Reducer] = {"sum": te.sum_, "max": te.max_, "min": te.min_, "prod": te.prod_}


def norm_axes(axis: Sequence[int] | int | None, ndim: int) -> list[int]:
    """Reduced axes, non-negative and sorted; None means all."""
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, int):
        axis = [axis]
    return sorted(a + ndim if a < 0 else a for a in axis)


def reduce_over(
    kb: te.KernelBuilder,
    x: te.Tensor,
    axes: Sequence[int],
    keepdims: bool,
    kind: str,
    name: str | None = None,
) -> te.Tensor:
    """Reduce `x` over `axes` with `kind` (sum, max, min, prod)."""
    out_shape = [
        E.idx(1) if d in axes else s for d, s in enumerate(x.shape) if keepdims or d not in axes
    ]

    def body(*ax: tir.Var) -> te.Reduce:
        raxes = [te.reduce_axis(x.shape[d], f"k{d}") for d in axes]
        index = _source_index(x.ndim, axes, keepdims, ax, raxes)
        return _REDUCERS[kind](x.load(index), raxes)

    return kb.compute(out_shape, body, name or f"{x.name}_red")


def _source_index(
    ndim: int, axes: Sequence[int], keepdims: bool, ax: Sequence[tir.Var], raxes: list[te.RAxis]
) -> list[tir.PrimExpr]:
    index: list[tir.PrimExpr] = []
    spatial = iter(ax)
    rit = iter(raxes)
    for d in range(ndim):
        if d in axes:
            index.append(next(rit).var)
            if keepdims:
                next(spatial)
        else:
            index.append(next(spatial))
    return index


def _count(x: te.Tensor, axes: Sequence[int], dtype: str) -> tir.PrimExpr:
    n: tir.PrimExpr = E.idx(1)
    for d in axes:
        n = E.mul(n, x.shape[d])
    return E.cast(n, dtype)


def divide_by(kb: te.KernelBuilder, t: te.Tensor, n: tir.PrimExpr) -> te.Tensor:
    return kb.compute(t.shape, lambda *ax: E.div(t[ax], n), "T_divide")


def _reduce_rule(kind: str) -> Callable[[LegalizeCtx], relax.Expr]:
    def rule(ctx: LegalizeCtx) -> relax.Expr:
        attrs = ctx.attrs

        def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
            axes = norm_axes(attrs.get("axis"), x.ndim)
            return reduce_over(kb, x, axes, bool(attrs.get("keepdims")), kind)

        return ctx.call_te(kind, build)

    rule.__name__ = f"legalize_{kind}"
    return rule


for _kind in _REDUCERS:
    register_legalize(f"relax.{_kind}")(_reduce_rule(_kind))


@register_legalize("relax.mean")
def legalize_mean(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        axes = norm_axes(attrs.get("axis"), x.ndim)
        total = reduce_over(kb, x, axes, bool(attrs.get("keepdims")), "sum")
        return divide_by(kb, total, _count(x, axes, x.dtype))

    return ctx.call_te("mean", build)


def variance_of(kb: te.KernelBuilder, x: te.Tensor, axes: list[int], keepdims: bool) -> te.Tensor:
    """TVM's two-pass variance: mean (kept dims), squared deviations, their mean."""
    n = _count(x, axes, x.dtype)
    mean = divide_by(kb, reduce_over(kb, x, axes, True, "sum"), n)
    shape = x.shape
    diff = kb.compute(shape, lambda *ax: E.sub(x[ax], bcast_load(mean, ax, shape)), "T_subtract")
    sq = kb.compute(shape, lambda *ax: E.mul(diff[ax], diff[ax]), "T_multiply")
    return divide_by(kb, reduce_over(kb, sq, axes, keepdims, "sum"), n)


@register_legalize("relax.variance")
def legalize_variance(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        axes = norm_axes(attrs.get("axis"), x.ndim)
        return variance_of(kb, x, axes, bool(attrs.get("keepdims")))

    return ctx.call_te("variance", build)


@register_legalize("relax.std")
def legalize_std(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        axes = norm_axes(attrs.get("axis"), x.ndim)
        var = variance_of(kb, x, axes, bool(attrs.get("keepdims")))
        return kb.compute(
            var.shape, lambda *i: E.call("sqrt", x.dtype, var[i]), "compute", prefix="i"
        )

    return ctx.call_te("std", build)


def _arg_combiner(better: str) -> te.Combiner:
    """(index, value) pairs: keep lhs when strictly better, or equal with a smaller index."""

    def combine(lhs: Sequence[tir.PrimExpr], rhs: Sequence[tir.PrimExpr]) -> list[tir.PrimExpr]:
        li, lv = lhs
        ri, rv = rhs
        keep = E.logical_or(
            E.binary(better, lv, rv),
            E.logical_and(E.binary("eq", lv, rv), E.binary("lt", li, ri)),
        )
        return [E.select(keep, li, ri), E.select(E.binary(better, lv, rv), lv, rv)]

    combine.__name__ = f"arg_{better}"
    return combine


def arg_reduce(
    kb: te.KernelBuilder, x: te.Tensor, axis: int | None, keepdims: bool, op: str
) -> te.Tensor:
    axes = norm_axes(axis, x.ndim)
    shape = [
        E.idx(1) if d in axes else s for d, s in enumerate(x.shape) if keepdims or d not in axes
    ]
    better = "gt" if op == "argmax" else "lt"
    start = E.min_value(x.dtype) if op == "argmax" else E.max_value(x.dtype)

    def body(*ax: tir.Var) -> te.Reduce:
        raxes = [te.reduce_axis(x.shape[d], f"k{d}") for d in axes]
        index = x.load(_source_index(x.ndim, axes, keepdims, ax, raxes))
        flat: tir.PrimExpr = raxes[0].var
        for r in raxes[1:]:
            flat = E.add(E.mul(flat, r.extent), r.var)
        identity = (E.const(-1, "int64"), start)
        return te.Reduce(_arg_combiner(better), (flat, index), tuple(raxes), identity)

    idx, _ = kb.compute_multi(shape, body, f"{x.name}_red_temp")
    return kb.compute(shape, lambda *ax: idx[ax], f"{x.name}_red")


def _arg_rule(op: str) -> Callable[[LegalizeCtx], relax.Expr]:
    def rule(ctx: LegalizeCtx) -> relax.Expr:
        attrs = ctx.attrs

        def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
            return arg_reduce(kb, x, attrs.get("axis"), bool(attrs.get("keepdims")), op)

        return ctx.call_te(op, build)

    rule.__name__ = f"legalize_{op}"
    return rule


register_legalize("relax.argmax")(_arg_rule("argmax"))
register_legalize("relax.argmin")(_arg_rule("argmin"))


def collapse_sum(kb: te.KernelBuilder, x: te.Tensor, target: Sequence[tir.PrimExpr]) -> te.Tensor:
    """Sum `x` down to `target` (the inverse of broadcasting)."""
    lead = x.ndim - len(target)
    axes = [
        d for d in range(x.ndim) if d < lead or (_one(target[d - lead]) and not _one(x.shape[d]))
    ]
    keep = [d for d in range(lead, x.ndim) if d in axes]

    def body(*ax: tir.Var) -> te.Reduce:
        raxes = [te.reduce_axis(x.shape[d], f"k{d}") for d in axes]
        rmap = dict(zip(axes, raxes, strict=True))
        index = [rmap[d].var if d in rmap else ax[d - lead] for d in range(x.ndim)]
        return te.sum_(x.load(index), raxes)

    del keep
    return kb.compute(target, body, f"{x.name}_red")


def _one(d: tir.PrimExpr) -> bool:
    return isinstance(d, tir.IntImm) and d.value == 1


@register_legalize("relax.collapse_sum_like")
def legalize_collapse_sum_like(ctx: LegalizeCtx) -> relax.Expr:
    target = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        return collapse_sum(kb, x, target)

    return ctx.call_te("collapse_sum", build, args=ctx.args[:1])


@register_legalize("relax.collapse_sum_to")
def legalize_collapse_sum_to(ctx: LegalizeCtx) -> relax.Expr:
    target = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor, _shape: object) -> te.Tensor:
        return collapse_sum(kb, x, target)

    return ctx.call_te("collapse_sum", build)
