"""Normalizations: layer_norm and rms_norm (TOPI's stage structure)."""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.reduce import norm_axes
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize


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
