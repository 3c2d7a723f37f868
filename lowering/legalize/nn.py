"""Neural-network activations and helpers built from several TOPI stages:
softmax, log_softmax, gelu, gelu_tanh, silu, selu, prelu, dropout (inference:
identity plus mask), pad (constant, reflect, replicate, circular) and
cross_entropy_with_logits."""

from __future__ import annotations

import math

from tvmlite.dsl import tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.padding import padded_load
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize


def _insert(ax: tuple[tir.Var, ...], axis: int, v: tir.PrimExpr) -> list[tir.PrimExpr]:
    return [*ax[:axis], v, *ax[axis:]]


def softmax_stages(kb: te.KernelBuilder, x: te.Tensor, axis: int, log: bool) -> te.Tensor:
    reduced = [s for d, s in enumerate(x.shape) if d != axis]

    def maxelem(*i: tir.Var) -> te.Reduce:
        k = te.reduce_axis(x.shape[axis], "k")
        return te.max_(x.load(_insert(i, axis, k.var)), k)

    m = kb.compute(reduced, maxelem, "T_softmax_maxelem", prefix="i")

    def shifted(i: tuple[tir.Var, ...]) -> tir.PrimExpr:
        return E.sub(x[i], m.load([v for d, v in enumerate(i) if d != axis]))

    ex = kb.compute(
        x.shape, lambda *i: E.call("exp", x.dtype, shifted(i)), "T_softmax_exp", prefix="i"
    )

    def expsum(*i: tir.Var) -> te.Reduce:
        k = te.reduce_axis(x.shape[axis], "k")
        return te.sum_(ex.load(_insert(i, axis, k.var)), k)

    s = kb.compute(reduced, expsum, "T_softmax_expsum", prefix="i")

    def norm(*i: tir.Var) -> tir.PrimExpr:
        total = s.load([v for d, v in enumerate(i) if d != axis])
        if log:
            return E.sub(shifted(i), E.call("log", x.dtype, total))
        return E.div(ex[i], total)

    name = "compute" if log else "T_softmax_norm"
    return kb.compute(x.shape, norm, name, prefix="i", annotations=(("axis", axis),))


def _softmax_rule(log: bool):  # noqa: ANN202 - returns a rule
    def rule(ctx: LegalizeCtx) -> tir.PrimExpr:
        def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
            axis = ctx.attrs.get("axis", -1)
            return softmax_stages(kb, x, axis + x.ndim if axis < 0 else axis, log)

        return ctx.call_te("log_softmax" if log else "softmax", build)

    rule.__name__ = "legalize_log_softmax" if log else "legalize_softmax"
    return rule


register_legalize("relax.nn.softmax")(_softmax_rule(False))
register_legalize("relax.nn.log_softmax")(_softmax_rule(True))


def _ew(kb: te.KernelBuilder, shape: tuple, fn, name: str, prefix: str = "ax") -> te.Tensor:  # noqa: ANN001
    return kb.compute(shape, fn, name, prefix=prefix)


@register_legalize("relax.nn.gelu")
def legalize_gelu(ctx: LegalizeCtx) -> tir.PrimExpr:
    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        d, sh = x.dtype, x.shape
        a = _ew(kb, sh, lambda *i: E.mul(x[i], E.const(math.sqrt(0.5), d)), "T_multiply")
        erf = _ew(kb, sh, lambda *i: E.call("erf", d, a[i]), "compute", "i")
        b = _ew(kb, sh, lambda *i: E.mul(erf[i], E.const(0.5, d)), "T_multiply")
        c = _ew(kb, sh, lambda *i: E.add(E.const(0.5, d), b[i]), "T_add")
        return _ew(kb, sh, lambda *i: E.mul(x[i], c[i]), "T_multiply")

    return ctx.call_te("gelu", build)


@register_legalize("relax.nn.gelu_tanh")
def legalize_gelu_tanh(ctx: LegalizeCtx) -> tir.PrimExpr:
    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        d = x.dtype

        def body(*i: tir.Var) -> tir.PrimExpr:
            v = x[i]
            cube = E.mul(E.mul(E.mul(E.const(0.044715, d), v), v), v)
            inner = E.mul(E.const(math.sqrt(2 / math.pi), d), E.add(v, cube))
            return E.mul(E.mul(E.const(0.5, d), v), E.add(E.const(1, d), E.call("tanh", d, inner)))

        return kb.compute(x.shape, body, "T_multiply")

    return ctx.call_te("gelu_tanh", build)


@register_legalize("relax.nn.silu")
def legalize_silu(ctx: LegalizeCtx) -> tir.PrimExpr:
    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        sig = _ew(kb, x.shape, lambda *i: E.call("sigmoid", x.dtype, x[i]), "compute", "i")
        return _ew(kb, x.shape, lambda *i: E.mul(x[i], sig[i]), "T_multiply")

    return ctx.call_te("silu", build)


@register_legalize("relax.nn.selu")
def legalize_selu(ctx: LegalizeCtx) -> tir.PrimExpr:
    alpha, scale = 1.6732632423543772, 1.0507009873554805

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        d, sh = x.dtype, x.shape
        pos = _ew(kb, sh, lambda *i: E.maximum(x[i], E.const(0, d)), "T_maximum")
        ex = _ew(kb, sh, lambda *i: E.call("exp", d, x[i]), "compute", "i")
        sub = _ew(kb, sh, lambda *i: E.sub(ex[i], E.const(1, d)), "T_subtract")
        mul = _ew(kb, sh, lambda *i: E.mul(E.const(alpha, d), sub[i]), "T_multiply")
        neg = _ew(kb, sh, lambda *i: E.minimum(E.const(0, d), mul[i]), "T_minimum")
        add = _ew(kb, sh, lambda *i: E.add(pos[i], neg[i]), "T_add")
        return _ew(kb, sh, lambda *i: E.mul(E.const(scale, d), add[i]), "T_multiply")

    return ctx.call_te("selu", build)


@register_legalize("relax.nn.prelu")
def legalize_prelu(ctx: LegalizeCtx) -> tir.PrimExpr:
    def build(kb: te.KernelBuilder, x: te.Tensor, alpha: te.Tensor) -> te.Tensor:
        axis = ctx.attrs.get("axis", 1)
        axis = axis + x.ndim if axis < 0 else axis

        def body(*i: tir.Var) -> tir.PrimExpr:
            v = x[i]
            return E.select(E.binary("lt", E.const(0, v.dtype), v), v, E.mul(v, alpha[i[axis]]))

        return kb.compute(x.shape, body, "compute", prefix="i")

    return ctx.call_te("prelu", build)


@register_legalize("relax.nn.dropout")
def legalize_dropout(ctx: LegalizeCtx) -> tir.PrimExpr:
    """Inference semantics: the data unchanged and a mask of ones."""

    def build(kb: te.KernelBuilder, x: te.Tensor) -> list[te.Tensor]:
        out = kb.compute(x.shape, lambda *i: x[i], "compute", prefix="i")
        mask = kb.compute(x.shape, lambda *i: E.const(1, x.dtype), "T_full_like")
        return [out, mask]

    return ctx.call_te("dropout", build)


def _pad_index(mode: str, i: tir.Var, before: int, n: tir.PrimExpr) -> tir.PrimExpr:
    if mode == "replicate":
        return E.maximum(E.idx(0), E.minimum(E.sub(n, 1), E.sub(i, before)))
    if mode == "circular":
        nv = E.value_of(n)
        off = (nv - before) % nv if isinstance(nv, int) else None
        if off == 0:
            return E.floormod(i, n)
        return E.floormod(E.add(i, off if off is not None else E.sub(n, before)), n)
    last = E.sub(n, 1)  # reflect
    dist = E.select(E.binary("le", E.idx(before), i), E.sub(i, before), E.sub(E.idx(before), i))
    inner = E.select(E.binary("le", dist, last), E.sub(last, dist), E.sub(dist, last))
    return E.sub(last, inner)


@register_legalize("relax.nn.pad")
def legalize_pad(ctx: LegalizeCtx) -> tir.PrimExpr:
    width = list(ctx.attrs["pad_width"])
    mode = ctx.attrs.get("pad_mode", "constant")
    value = float(ctx.attrs.get("pad_value", 0.0) or 0.0)
    shape = ctx.out_shape()
    names = {"constant": "pad", "reflect": "reflect_pad", "replicate": "replicate_pad",
             "circular": "circular_pad"}  # fmt: skip
    block = {"constant": "PadInput"}.get(mode, f"{mode.capitalize()}PadInput")

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        befores = [width[2 * d] for d in range(x.ndim)]
        afters = [width[2 * d + 1] for d in range(x.ndim)]

        def body(*i: tir.Var) -> tir.PrimExpr:
            if mode != "constant":
                return x.load(
                    [_pad_index(mode, v, b, n) for v, b, n in zip(i, befores, x.shape, strict=True)]
                )
            return padded_load(x, i, befores, afters, lambda: E.const(value, x.dtype))

        return kb.compute(shape, body, block, prefix="i")

    return ctx.call_te(names.get(mode, "pad"), build)


@register_legalize("relax.nn.cross_entropy_with_logits")
def legalize_cross_entropy(ctx: LegalizeCtx) -> tir.PrimExpr:
    def build(kb: te.KernelBuilder, x: te.Tensor, y: te.Tensor) -> te.Tensor:
        d = x.dtype
        prod = kb.compute(x.shape, lambda *i: E.mul(x[i], y[i]), "T_multiply")

        def total() -> te.Reduce:
            raxes = [te.reduce_axis(s, f"k{j}") for j, s in enumerate(x.shape)]
            return te.sum_(prod.load([r.var for r in raxes]), raxes)

        red = kb.compute((), total, "T_multiply_red")
        neg = kb.compute((), lambda: E.mul(red[()], E.const(-1, d)), "T_multiply")
        if x.ndim == 1:
            return neg
        return kb.compute((), lambda: E.div(neg[()], E.cast(x.shape[0], d)), "T_divide")

    return ctx.call_te("cross_entropy_with_logits", build)


@register_legalize("relax.nn.nll_loss")
def legalize_nll_loss(ctx: LegalizeCtx) -> tir.PrimExpr:
    """Negative log-likelihood: `-w[t] * pred[n, t, ...]` per target (0 where
    ignored), then summed, or divided by the summed weights for `mean`. The loads
    sit in a lazy `if_then_else` (TVM's Select reads `pred[n, ignore_index]`, out
    of bounds, for ignored targets)."""
    reduction = ctx.attrs.get("reduction", "mean")
    ignore = int(ctx.attrs.get("ignore_index", -100))

    def build(kb: te.KernelBuilder, pred: te.Tensor, target: te.Tensor,
              weight: te.Tensor | None = None) -> te.Tensor:  # fmt: skip
        d = pred.dtype

        def picked(ax: tuple[tir.Var, ...]) -> tuple[tir.PrimExpr, tir.PrimExpr, tir.PrimExpr]:
            t = target[ax]
            keep = E.binary("ne", t, E.const(ignore, t.dtype))
            index = [t] if pred.ndim == 1 else [ax[0], t, *ax[1:]]
            w = weight[t] if weight is not None else E.const(1, d)
            return keep, pred.load(index), w

        def loss(*ax: tir.Var) -> tir.PrimExpr:
            keep, p, w = picked(ax)
            return E.if_then_else(keep, E.mul(E.mul(p, w), E.const(-1, d)), E.const(0, d))

        def wsum(*ax: tir.Var) -> tir.PrimExpr:
            keep, _, w = picked(ax)
            return E.if_then_else(keep, w, E.const(0, d))

        losses = kb.compute(target.shape, loss, "nll_loss")
        if reduction == "none":
            return losses

        def total(t: te.Tensor) -> te.Tensor:
            if not t.shape:  # one target (1-d predictions): nothing to sum, as TVM's
                return t

            def body() -> te.Reduce:
                raxes = [te.reduce_axis(s, f"k{j}") for j, s in enumerate(t.shape)]
                return te.sum_(t.load([r.var for r in raxes]), raxes)

            return kb.compute((), body, f"{t.name}_red")

        summed = total(losses)
        if reduction == "sum":
            return summed
        weights = total(kb.compute(target.shape, wsum, "nll_weights"))
        return kb.compute((), lambda: E.div(summed[()], weights[()]), "T_divide")

    return ctx.call_te("nll_loss", build)


@register_legalize("relax.nn.pixel_shuffle")
def legalize_pixel_shuffle(ctx: LegalizeCtx) -> tir.PrimExpr:
    """(N, C*r*r, H, W) -> (N, C, H*r, W*r)."""
    r = int(ctx.attrs["upscale_factor"])
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            *lead, c, h, w = ax
            channel = E.add(E.mul(c, r * r), E.add(E.mul(E.floormod(h, r), r), E.floormod(w, r)))
            return x.load([*lead, channel, E.floordiv(h, r), E.floordiv(w, r)])

        return kb.compute(shape, body, "PixelShuffle")

    return ctx.call_te("pixel_shuffle", build)


__all__ = ["softmax_stages"]
