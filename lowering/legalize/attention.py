"""Scaled dot-product attention.

`nn.attention` and `nn.attention_bias` as TVM's legalization writes them in TE:
heads folded into the batch by transpose and reshape, `batch_matmul` (NT then
NN), scaling, optional bias and causal mask, softmax, and the way back to
(batch, seq, heads, dim).

`nn.attention_var_len` has no legalization in TVM (it raises; only the CUTLASS /
flash-attention offload runs it). Here it is one IR-builder kernel computing
what the operator's documentation defines: sequence `b` is queries
`seqstart_q[b]:seqstart_q[b + 1]` attending to keys and values
`seqstart_k[b]:seqstart_k[b + 1]`, each head separately (grouped-query: query
head `h` reads key head `h // (heads_q // heads_k)`), the same scale and causal
masks as `nn.attention` (BottomRight shifts the diagonal by
`|len_q - len_kv|`, as TVM's `nn.attention` legalization does), and
`window_size` keeping the last `window_size` visible keys of each row (the
flash-attention window TVM's offload passes, `window_size - 1` to the left of
the diagonal). Softmax is computed in two passes over the visible keys (max,
then exponentials summed with the weighted values), accumulating in float32
for float16. Query rows outside every sequence, and rows that see no key, are
0. The offsets are checked before anything is read; `max_seqlen_q/k` are
launch hints for the GPU kernels and are not read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.broadcast import bcast_load
from tvmlite.lowering.legalize.extern import (
    at0,
    index_var,
    local_scalar,
    loop,
    seq,
    set0,
    static_dims,
)
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


def _share_heads(kb: te.KernelBuilder, x: te.Tensor, heads: tir.PrimExpr) -> te.Tensor:
    """Key or value heads repeated for a group of query heads each (head h reads
    head h // group)."""
    group = E.floordiv(heads, x.shape[2])

    def body(b: tir.Var, s: tir.Var, h: tir.Var, d: tir.Var) -> tir.PrimExpr:
        return x[b, s, E.floordiv(h, group), d]

    return kb.compute((x.shape[0], x.shape[1], heads, x.shape[3]), body, "T_repeat")


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
    if not sa.equal(k.shape[2], heads):  # grouped-query: TVM's TE cannot reshape these
        k, v = _share_heads(kb, k, heads), _share_heads(kb, v, heads)
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
        if mask == "BottomRight":  # TVM shifts by |seq - seq_kv|, whichever is longer
            offset = E.maximum(E.sub(seq_kv, seq), E.sub(seq, seq_kv))
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


def _offsets_check(starts: tir.Buffer, total: int, what: str) -> tir.Stmt:
    """Assert every sequence `b` of `starts` lies within `[0, total]`, in order."""
    b = index_var("b")
    lo, hi = (
        E.cast(tir.BufferLoad(starts, (at,), starts.dtype), E.INDEX) for at in (b, E.add(b, 1))
    )
    ok = E.logical_and(
        E.logical_and(E.binary("le", E.idx(0), lo), E.binary("le", lo, hi)),
        E.binary("le", hi, E.idx(total)),
    )
    message = f"R.nn.attention_var_len: {what} must be offsets rising within [0, {total}]"
    count = max(int(starts.shape[0].value) - 1, 0)  # type: ignore[attr-defined]
    return loop(b, count, tir.AssertStmt(ok, "RuntimeError", (message,)))


@dataclass(frozen=True)
class VarLenAttention:
    """The kernel of `nn.attention_var_len` over static shapes: queries
    (1, total_q, heads, dim), keys (1, total_kv, kv_heads, dim), values
    (1, total_kv, kv_heads, dim_v), `sequences` pairs of offsets."""

    q: tir.Buffer
    k: tir.Buffer
    v: tir.Buffer
    starts_q: tir.Buffer
    starts_k: tir.Buffer
    out: tir.Buffer
    scale: float
    mask: str | None
    window: int | None

    def dim(self, buf: tir.Buffer, axis: int) -> int:
        return int(buf.shape[axis].value)  # type: ignore[attr-defined]

    @property
    def acc_dtype(self) -> str:
        return "float32" if self.q.dtype == "float16" else self.q.dtype

    def body(self) -> tir.Stmt:
        total_q, heads, heads_k = self.dim(self.q, 1), self.dim(self.q, 2), self.dim(self.k, 2)
        sequences = max(self.dim(self.starts_q, 0) - 1, 0)
        t, h, d = index_var("t"), index_var("h"), index_var("d")
        zero = tir.BufferStore(self.out, E.const(0, self.out.dtype), (E.idx(0), t, h, d))
        clear = loop(t, total_q, loop(h, heads, loop(d, self.dim(self.v, 3), zero)))
        checks = [
            _offsets_check(self.starts_q, total_q, "seqstart_q"),
            _offsets_check(self.starts_k, self.dim(self.k, 1), "seqstart_k"),
        ]
        task = index_var("task")
        b, head = E.floordiv(task, heads), E.floormod(task, heads)
        rows = self.sequence(b, head, E.floordiv(head, heads // heads_k))
        return seq(clear, *checks, loop(task, sequences * heads, rows, tir.PARALLEL))

    def sequence(self, b: tir.PrimExpr, h: tir.PrimExpr, hk: tir.PrimExpr) -> tir.Stmt:
        """Every query row of sequence `b`, head `h` (key head `hk`)."""
        q0, q1, k0, k1 = (
            E.cast(tir.BufferLoad(buf, (at,), buf.dtype), E.INDEX)
            for buf in (self.starts_q, self.starts_k)
            for at in (b, E.add(b, 1))
        )
        len_q, len_k = tir.Var("len_q", E.INDEX), tir.Var("len_k", E.INDEX)
        i = index_var("i")
        row = self.row(E.add(q0, i), k0, i, len_q, len_k, h, hk)
        body = tir.For(i, E.idx(0), len_q, tir.SERIAL, row)
        return tir.LetStmt(len_q, E.sub(q1, q0), tir.LetStmt(len_k, E.sub(k1, k0), body))

    def visible(
        self, i: tir.PrimExpr, len_q: tir.PrimExpr, len_k: tir.PrimExpr
    ) -> tuple[tir.PrimExpr, tir.PrimExpr]:
        """The keys `[lo, hi)` that query row `i` of its sequence sees."""
        if self.mask is None:
            return E.idx(0), len_k
        shift = E.idx(0)
        if self.mask == "BottomRight":
            shift = E.maximum(E.sub(len_k, len_q), E.sub(len_q, len_k))
        last = E.add(i, shift)  # the diagonal
        hi = E.minimum(E.add(last, 1), len_k)
        if self.window is None:
            return E.idx(0), hi
        return E.maximum(E.sub(last, self.window - 1), E.idx(0)), hi

    def row(
        self,
        qt: tir.PrimExpr,
        k0: tir.PrimExpr,
        i: tir.PrimExpr,
        len_q: tir.PrimExpr,
        len_k: tir.PrimExpr,
        h: tir.PrimExpr,
        hk: tir.PrimExpr,
    ) -> tir.Stmt:
        """Output row `qt`, head `h`: softmax of the visible scores, times values."""
        acc = self.acc_dtype
        dim, dim_v = self.dim(self.q, 3), self.dim(self.v, 3)
        score, top, total = (local_scalar(n, acc) for n in ("score", "top", "total"))
        data = tir.Var("weighted", "handle", (acc, "local"))
        weighted = tir.Buffer("weighted", data, acc, (E.idx(dim_v),), scope="local")
        lo, hi = self.visible(i, len_q, len_k)
        j, d = index_var("j"), index_var("d")
        zero = E.idx(0)

        def load(
            buf: tir.Buffer, t: tir.PrimExpr, head: tir.PrimExpr, x: tir.PrimExpr
        ) -> tir.PrimExpr:
            return E.cast(tir.BufferLoad(buf, (zero, t, head, x), buf.dtype), acc)

        product = E.mul(load(self.q, qt, h, d), load(self.k, E.add(k0, j), hk, d))
        dot = seq(
            set0(score, E.const(0, acc)),
            loop(d, dim, set0(score, E.add(at0(score), product))),
            set0(score, E.mul(at0(score), E.const(self.scale, acc))),
        )
        keys = E.maximum(E.sub(hi, lo), E.idx(0))
        pass_max = tir.For(
            j, lo, keys, tir.SERIAL, seq(dot, set0(top, E.maximum(at0(top), at0(score))))
        )
        ex = tir.Var("e", acc)
        add_value = tir.BufferStore(
            weighted,
            E.add(
                tir.BufferLoad(weighted, (d,), acc), E.mul(ex, load(self.v, E.add(k0, j), hk, d))
            ),
            (d,),
        )
        accumulate = tir.LetStmt(
            ex,
            E.call("exp", acc, E.sub(at0(score), at0(top))),
            seq(set0(total, E.add(at0(total), ex)), loop(d, dim_v, add_value)),
        )
        pass_sum = tir.For(j, lo, keys, tir.SERIAL, seq(dot, accumulate))
        result = E.cast(E.div(tir.BufferLoad(weighted, (d,), acc), at0(total)), self.out.dtype)
        write = loop(d, dim_v, tir.BufferStore(self.out, result, (zero, qt, h, d)))
        return seq(
            *(tir.AllocBuffer(buf, "alloc_local") for buf in (score, top, total, weighted)),
            set0(top, E.min_value(acc)),
            set0(total, E.const(0, acc)),
            loop(d, dim_v, tir.BufferStore(weighted, E.const(0, acc), (d,))),
            pass_max,
            pass_sum,
            tir.IfThenElse(E.binary("lt", lo, hi), write),
        )


@register_legalize("relax.nn.attention_var_len")
def legalize_attention_var_len(ctx: LegalizeCtx) -> relax.Expr:
    q, k, v, starts_q, starts_k = ctx.args[:5]
    shapes = [getattr(si, "shape", None) for si in ctx.arg_sinfo[:5]]
    if not all(isinstance(sh, tuple) for sh in shapes):
        raise LegalizeUnsupported("attention_var_len over tensors of unknown shape")
    dims = [static_dims(sh, "attention_var_len") for sh in shapes]  # type: ignore[arg-type]
    scale_attr = ctx.attrs.get("scale")
    scale = float(scale_attr.value) if scale_attr is not None else 1 / math.sqrt(dims[0][3])
    mask, window = ctx.attrs.get("causal_mask"), ctx.attrs.get("window_size")

    def build(kb: te.KernelBuilder, *ins: te.Tensor) -> te.Tensor:
        def body(bufs: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            return VarLenAttention(*bufs, outs[0], scale, mask, window).body()

        outs = [("attention_var_len", ctx.out_shape(), ctx.out_dtype(), False)]
        return kb.extern("attention_var_len", outs, list(ins), body)[0]

    return ctx.call_te("attention_var_len", build, args=[q, k, v, starts_q, starts_k])
