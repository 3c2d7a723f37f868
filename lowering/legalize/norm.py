"""Normalizations: layer_norm, rms_norm, instance_norm, group_norm and inference
batch_norm, each with the stages TOPI builds (tuple sum-and-squares reductions
for instance and group norm, broadcast ops for batch_norm)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tvmlite.dsl import tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.broadcast import bcast_load, broadcast_shape
from tvmlite.lowering.legalize.manipulate import reshape_to
from tvmlite.lowering.legalize.reduce import norm_axes, reduce_over
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize

Scalar2 = Callable[[tir.PrimExpr, tir.PrimExpr], tir.PrimExpr]


def _reduced(x: te.Tensor, axes: list[int]) -> list[tir.PrimExpr]:
    return [s for d, s in enumerate(x.shape) if d not in axes]


def _sum_over(kb: te.KernelBuilder, x: te.Tensor, axes: list[int], fn, name: str) -> te.Tensor:  # noqa: ANN001
    """Sum of `fn(index, kept_axes)` over `axes`, kept axes first."""

    def body(*ax: tir.Var) -> te.Reduce:
        raxes = [te.reduce_axis(x.shape[d], f"k{d}") for d in axes]
        rmap = dict(zip(axes, raxes, strict=True))
        it = iter(ax)
        index = [rmap[d].var if d in rmap else next(it) for d in range(x.ndim)]
        return te.sum_(fn(index, ax), raxes)

    return kb.compute(_reduced(x, axes), body, name)


@register_legalize("relax.nn.layer_norm")
def legalize_layer_norm(ctx: LegalizeCtx) -> tir.PrimExpr:
    attrs = ctx.attrs
    eps = float(attrs.get("epsilon", 1e-5))

    def build(kb: te.KernelBuilder, x: te.Tensor, gamma: te.Tensor, beta: te.Tensor) -> te.Tensor:
        axes = norm_axes(attrs.get("axes"), x.ndim)
        d = x.dtype
        n: tir.PrimExpr = E.idx(1)
        for a in axes:
            n = E.mul(n, x.shape[a])
        count = E.cast(n, d)

        def keep(index: list[tir.PrimExpr]) -> list[tir.PrimExpr]:
            return [v for j, v in enumerate(index) if j not in axes]

        total = _sum_over(kb, x, axes, lambda idx, ax: x.load(idx), f"{x.name}_sum")
        mean = kb.compute(total.shape, lambda *ax: E.div(total[ax], count), f"{x.name}_mean")

        def sq(idx: list[tir.PrimExpr], ax: tuple) -> tir.PrimExpr:  # noqa: ARG001
            diff = E.sub(x.load(idx), mean.load(keep(idx)))
            return E.mul(diff, diff)

        var = _sum_over(kb, x, axes, sq, f"{x.name}_var_sum")

        def body(*ax: tir.Var) -> tir.PrimExpr:
            kept = keep(list(ax))
            inv = E.call("rsqrt", d, E.add(E.div(var.load(kept), count), E.const(eps, d)))
            out = E.mul(E.sub(x[ax], mean.load(kept)), inv)
            if attrs.get("scale", True):
                out = E.mul(out, gamma.load([ax[a] for a in axes]))
            if attrs.get("center", True):
                out = E.add(out, beta.load([ax[a] for a in axes]))
            return out

        return kb.compute(x.shape, body, "T_layer_norm")

    return ctx.call_te("layer_norm", build)


def _real_axes(axes: object, ndim: int) -> list[int]:
    return norm_axes(axes, ndim)  # type: ignore[arg-type]


@register_legalize("relax.nn.rms_norm")
def legalize_rms_norm(ctx: LegalizeCtx) -> tir.PrimExpr:
    """TOPI's rms_norm: computed in float32 between two casts."""
    attrs = ctx.attrs
    eps = float(attrs.get("epsilon", 1e-5))

    def build(kb: te.KernelBuilder, x: te.Tensor, w: te.Tensor) -> te.Tensor:
        axes = _real_axes(attrs.get("axes"), x.ndim)
        xf = kb.compute(x.shape, lambda *i: E.cast(x[i], "float32"), "T_cast")
        sq = kb.compute(x.shape, lambda *i: E.mul(xf[i], xf[i]), "T_multiply")
        total = reduce_over(kb, sq, axes, False, "sum")
        extent: tir.PrimExpr = E.const(1, "float32")
        for a in axes:
            extent = E.mul(extent, x.shape[a])
        kept = _reduced(x, axes)

        def inv(*i: tir.Var) -> tir.PrimExpr:
            return E.call("rsqrt", "float32", E.add(E.div(total[i], extent), E.const(eps, x.dtype)))

        rs = kb.compute(kept, inv, "rsqrt")
        wf = kb.compute(w.shape, lambda *i: E.cast(w[i], "float32"), "T_cast")

        def body(*i: tir.Var) -> tir.PrimExpr:
            outer = [v for d, v in enumerate(i) if d not in axes]
            inner = [v for d, v in enumerate(i) if d in axes]
            return E.mul(E.mul(rs.load(outer), xf[i]), wf.load(inner))

        out = kb.compute(x.shape, body, "T_rms_norm")
        return kb.compute(x.shape, lambda *i: E.cast(out[i], x.dtype), "T_cast")

    return ctx.call_te("rms_norm", build)


def _tuple_sum(lhs: Sequence[tir.PrimExpr], rhs: Sequence[tir.PrimExpr]) -> list[tir.PrimExpr]:
    """TOPI's MakeTupleSumReducer: (sum x, sum x*x) in one pass."""
    return [E.add(lhs[0], rhs[0]), E.add(lhs[1], rhs[1])]


def sum_and_squares(
    kb: te.KernelBuilder, x: te.Tensor, axes: list[int], name: str
) -> tuple[te.Tensor, te.Tensor]:
    def body(*ax: tir.Var) -> te.Reduce:
        raxes = [te.reduce_axis(x.shape[d], f"k{d}") for d in axes]
        rmap = dict(zip(axes, raxes, strict=True))
        it = iter(ax)
        v = x.load([rmap[d].var if d in rmap else next(it) for d in range(x.ndim)])
        zero = E.const(0, x.dtype)
        return te.Reduce(_tuple_sum, (v, E.mul(v, v)), tuple(raxes), (zero, zero))

    s, s2 = kb.compute_multi(_reduced(x, axes), body, f"{name}_red_temp")
    return s, s2


def _moments(
    s: te.Tensor, s2: te.Tensor, kept: list[tir.PrimExpr], n: tir.PrimExpr
) -> tuple[tir.PrimExpr, tir.PrimExpr]:
    mean = E.div(s.load(kept), n)
    return mean, E.sub(E.div(s2.load(kept), n), E.mul(mean, mean))


def _extent(x: te.Tensor, axes: list[int]) -> tir.PrimExpr:
    n: tir.PrimExpr = E.const(1, x.dtype)
    for a in axes:
        n = E.mul(n, x.shape[a])
    return n


@register_legalize("relax.nn.instance_norm")
def legalize_instance_norm(ctx: LegalizeCtx) -> tir.PrimExpr:
    attrs = ctx.attrs
    eps = float(attrs.get("epsilon", 1e-5))

    def build(kb: te.KernelBuilder, x: te.Tensor, gamma: te.Tensor, beta: te.Tensor) -> te.Tensor:
        axes = _real_axes(attrs.get("axes"), x.ndim)
        c = attrs.get("channel_axis", 1)
        c = c + x.ndim if c < 0 else c
        s, s2 = sum_and_squares(kb, x, axes, x.name)
        n = _extent(x, axes)

        def body(*ax: tir.Var) -> tir.PrimExpr:
            mean, var = _moments(s, s2, [v for d, v in enumerate(ax) if d not in axes], n)
            out = E.mul(
                E.sub(x[ax], mean), E.call("rsqrt", x.dtype, E.add(var, E.const(eps, x.dtype)))
            )
            if attrs.get("scale", True):
                out = E.mul(out, gamma[ax[c]])
            if attrs.get("center", True):
                out = E.add(out, beta[ax[c]])
            return out

        return kb.compute(x.shape, body, "T_instance_norm")

    return ctx.call_te("instance_norm", build)


@register_legalize("relax.nn.group_norm")
def legalize_group_norm(ctx: LegalizeCtx) -> tir.PrimExpr:
    """TOPI's group_norm: reshape channels into (groups, size), normalize, reshape back."""
    attrs = ctx.attrs
    eps = float(attrs.get("epsilon", 1e-5))
    groups = int(attrs["num_groups"])

    def build(kb: te.KernelBuilder, x: te.Tensor, gamma: te.Tensor, beta: te.Tensor) -> te.Tensor:
        c = attrs.get("channel_axis", 1)
        c = c + x.ndim if c < 0 else c
        size = E.floordiv(x.shape[c], groups)
        shape = (*x.shape[:c], E.idx(groups), size, *x.shape[c + 1 :])
        xr = reshape_to(kb, x, shape)
        g = reshape_to(kb, gamma, (E.idx(groups), size))
        b = reshape_to(kb, beta, (E.idx(groups), size))
        axes = sorted([c + 1] + [a if a < c else a + 1 for a in _real_axes(attrs["axes"], x.ndim)])
        s, s2 = sum_and_squares(kb, xr, axes, x.name)
        n = _extent(xr, axes)

        def body(*ax: tir.Var) -> tir.PrimExpr:
            mean, var = _moments(s, s2, [v for d, v in enumerate(ax) if d not in axes], n)
            out = E.mul(
                E.sub(xr[ax], mean), E.call("rsqrt", x.dtype, E.add(var, E.const(eps, x.dtype)))
            )
            if attrs.get("scale", True):
                out = E.mul(out, g[ax[c], ax[c + 1]])
            if attrs.get("center", True):
                out = E.add(out, b[ax[c], ax[c + 1]])
            return out

        out = kb.compute(shape, body, "T_group_norm")
        return reshape_to(kb, out, x.shape)

    return ctx.call_te("group_norm", build)


@register_legalize("relax.nn.batch_norm")
def legalize_batch_norm(ctx: LegalizeCtx) -> tir.PrimExpr:
    """TOPI's batch_norm. Inference normalizes by the moving statistics and
    returns them unchanged; training normalizes by the batch statistics and
    returns the moving ones updated with `momentum`."""
    attrs = ctx.attrs
    training = bool(attrs.get("training"))
    momentum = float(attrs.get("momentum", 0.1))
    eps = float(attrs.get("epsilon", 1e-5))

    def build(
        kb: te.KernelBuilder,
        x: te.Tensor,
        gamma: te.Tensor,
        beta: te.Tensor,
        mean: te.Tensor,
        var: te.Tensor,
    ) -> list[te.Tensor]:
        axis = attrs.get("axis", 1)
        axis = axis + x.ndim if axis < 0 else axis
        shape = tuple(x.shape[d] if d == axis else E.idx(1) for d in range(x.ndim))

        def ewise(a: te.Tensor, fn: Scalar2, rhs: te.Tensor | tir.PrimExpr, name: str) -> te.Tensor:
            out = broadcast_shape([a.shape, rhs.shape if isinstance(rhs, te.Tensor) else ()])

            def body(*ax: tir.Var) -> tir.PrimExpr:
                return fn(bcast_load(a, ax, out), bcast_load(rhs, ax, out))

            return kb.compute(out, body, name)

        if training:
            axes = [d for d in range(x.ndim) if d != axis]
            count = E.cast(_extent(x, axes), x.dtype)
            bmean = ewise(reduce_over(kb, x, axes, False, "sum"), E.div, count, "T_divide")
            m = reshape_to(kb, bmean, shape)
            diff = ewise(x, E.sub, m, "T_subtract")
            sq = ewise(diff, E.mul, diff, "T_multiply")
            bvar = ewise(reduce_over(kb, sq, axes, False, "sum"), E.div, count, "T_divide")
        else:
            m = reshape_to(kb, mean, shape)
        out = ewise(x, E.sub, m, "T_subtract")
        vr = reshape_to(kb, bvar, shape) if training else reshape_to(kb, var, shape)
        v = ewise(vr, E.add, E.const(eps, x.dtype), "T_add")
        sd = kb.compute(shape, lambda *i: E.call("sqrt", x.dtype, v[i]), "compute", prefix="i")
        out = ewise(out, E.div, sd, "T_divide")
        if attrs.get("scale", True):
            out = ewise(out, E.mul, reshape_to(kb, gamma, shape), "T_multiply")
        if attrs.get("center", True):
            out = ewise(out, E.add, reshape_to(kb, beta, shape), "T_add")
        if training:
            keep, new = E.const(1 - momentum, x.dtype), E.const(momentum, x.dtype)
            moved = []
            for old, batch in ((mean, bmean), (var, bvar)):
                a = ewise(old, E.mul, keep, "T_multiply")
                b = ewise(batch, E.mul, new, "T_multiply")
                moved.append(ewise(a, E.add, b, "T_add"))
            return [out, *moved]
        one = E.const(1, x.dtype)
        return [out, ewise(mean, E.mul, one, "T_multiply"), ewise(var, E.mul, one, "T_multiply")]

    return ctx.call_te("batch_norm", build)
