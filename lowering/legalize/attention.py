"""Scaled dot-product attention (`nn.attention`, `nn.attention_bias`) as TVM's
legalization writes it in TE: heads folded into the batch by transpose and
reshape, `batch_matmul` (NT then NN), scaling, optional bias and causal mask,
softmax, and the way back to (batch, seq, heads, dim)."""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.broadcast import bcast_load
from tvmlite.lowering.legalize.manipulate import reshape_to
from tvmlite.lowering.legalize.nn import softmax_stages
from tvmlite.lowering.legalize.reduce import reduce_over
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize


def transpose(kb: te.KernelBuilder, x: te.Tensor, perm: list[int]) -> te.Tensor:
    def body(*ax: tir.Var) -> tir.PrimExpr:
        index: list[tir.PrimExpr] = [E.idx(0)] * x.ndim
        for out_axis, p in enumerate(perm):
            index[p] = ax[out_axis]
        return x.load(index)

    return kb.compute([x.shape[p] for p in perm], body, "T_transpose")


def batch_matmul(kb: te.KernelBuilder, a: te.Tensor, b: te.Tensor, transpose_b: bool) -> te.Tensor:
    """`topi.nn.batch_matmul` for equal batch sizes; `b` is a layout-free input."""
    n = b.shape[1] if transpose_b else b.shape[2]
    shape = (a.shape[0], a.shape[1], n)

    def body(bb: tir.Var, i: tir.Var, j: tir.Var) -> te.Reduce:
        k = te.reduce_axis(a.shape[2], "k")
        rhs = b[bb, j, k.var] if transpose_b else b[bb, k.var, j]
        return te.sum_(E.mul(a[bb, i, k.var], rhs), [k])

    name = "T_batch_matmul_NT" if transpose_b else "T_batch_matmul_NN"
    free = (("layout_free_placeholders", (b.buffer,)),)
    return kb.compute(shape, body, name, names=["b", "i", "j"], annotations=free)


def _ewise(kb: te.KernelBuilder, a: te.Tensor, rhs: object, kind: str, name: str) -> te.Tensor:
    def body(*ax: tir.Var) -> tir.PrimExpr:
        return E.binary(kind, a[ax], bcast_load(rhs, ax, a.shape))  # type: ignore[arg-type]

    return kb.compute(a.shape, body, name)


def _causal_softmax(kb: te.KernelBuilder, p: te.Tensor, offset: tir.PrimExpr) -> te.Tensor:
    """Softmax over the visible keys (`k <= q + offset`) only, as TVM's legalization
    computes it: masked scores are filled with the dtype's minimum so they never win
    the max, and masked again after the exp so they get zero weight in the sum."""

    def visible(i: tuple[tir.Var, ...]) -> tir.PrimExpr:
        return E.binary("le", i[-1], E.add(i[-2], offset))

    def tril(*i: tir.Var) -> tir.PrimExpr:
        return E.select(visible(i), p[i], E.min_value(p.dtype))

    masked = kb.compute(p.shape, tril, "trilu", prefix="i")
    top = reduce_over(kb, masked, [2], True, "max")
    shifted = kb.compute(
        p.shape, lambda *i: E.sub(masked[i], top[i[0], i[1], E.idx(0)]), "T_subtract"
    )

    def masked_exp(*i: tir.Var) -> tir.PrimExpr:
        ex = E.call("exp", p.dtype, shifted[i])
        return E.select(visible(i), ex, E.const(0, p.dtype))

    ex = kb.compute(p.shape, masked_exp, "compute", prefix="i")
    total = reduce_over(kb, ex, [2], True, "sum")
    return kb.compute(p.shape, lambda *i: E.div(ex[i], total[i[0], i[1], E.idx(0)]), "T_divide")


def attention_compute(
    kb: te.KernelBuilder,
    q: te.Tensor,
    k: te.Tensor,
    v: te.Tensor,
    bias: te.Tensor | None,
    attrs: dict,
) -> te.Tensor:
    batch, seq, heads, dim = q.shape
    seq_kv, dim_v = v.shape[1], v.shape[3]
    bh = E.mul(batch, heads)
    qr = reshape_to(kb, transpose(kb, q, [0, 2, 1, 3]), (bh, seq, dim))
    kr = reshape_to(kb, transpose(kb, k, [0, 2, 1, 3]), (bh, seq_kv, dim))
    p = batch_matmul(kb, qr, kr, True)
    scale = attrs.get("scale")
    if scale is not None:
        value = scale.value if isinstance(scale, tir.FloatImm) else float(scale)
        p = _ewise(kb, p, E.const(value, p.dtype), "mul", "T_multiply")
    else:
        root = E.call("sqrt", p.dtype, E.cast(dim, p.dtype))
        p = _ewise(kb, p, root, "div", "T_divide")
    if bias is not None:
        p4 = reshape_to(kb, p, (batch, heads, seq, seq_kv))
        shape4 = p4.shape

        def add_bias(*ax: tir.Var) -> tir.PrimExpr:
            return E.add(p4[ax], bcast_load(bias, ax, shape4))

        p = reshape_to(kb, kb.compute(shape4, add_bias, "T_add"), (bh, seq, seq_kv))
    mask = attrs.get("causal_mask")
    if mask is None:
        s = softmax_stages(kb, p, 2, False)
    else:
        offset: tir.PrimExpr = E.idx(0)
        if mask == "BottomRight":
            offset = E.sub(seq_kv, seq)
        s = _causal_softmax(kb, p, offset)
    vr = reshape_to(kb, transpose(kb, v, [0, 2, 1, 3]), (bh, seq_kv, dim_v))
    o = batch_matmul(kb, s, vr, False)
    return transpose(kb, reshape_to(kb, o, (batch, heads, seq, dim_v)), [0, 2, 1, 3])


def _rule(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs
    if attrs.get("window_size") is not None:
        raise LegalizeUnsupported("attention with a window size")

    def build(kb: te.KernelBuilder, q: te.Tensor, k: te.Tensor, v: te.Tensor,
              bias: te.Tensor | None = None) -> te.Tensor:  # fmt: skip
        return attention_compute(kb, q, k, v, bias, attrs)

    return ctx.call_te("attention", build)


@register_legalize("relax.nn.attention")
def legalize_attention(ctx: LegalizeCtx) -> relax.Expr:
    return _rule(ctx)


@register_legalize("relax.nn.attention_bias")
def legalize_attention_bias(ctx: LegalizeCtx) -> relax.Expr:
    return _rule(ctx)
