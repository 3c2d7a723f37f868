"""Linear algebra: matmul (with batch broadcasting and out_dtype), linear
(decomposed into permute_dims, matmul and add, as TVM does), einsum."""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops.linalg import expand_ellipsis
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize


def matmul_compute(
    kb: te.KernelBuilder,
    a: te.Tensor,
    b: te.Tensor,
    shape: tuple[tir.PrimExpr, ...],
    dtype: str,
    transpose_b: bool = False,
    name: str = "matmul",
) -> te.Tensor:
    """TOPI's matmul: `i*` over the output, reduction `k`; 1-d operands are vectors.
    With `transpose_b`, `b` holds the second operand's last two axes swapped
    (`x @ w.T` reads w[..., j, k]: FuseTransposeMatmul's NT_matmul)."""
    k_extent = a.shape[-1]
    batch = len(shape) - (a.ndim > 1) - (b.ndim > 1)

    def bcast(t: te.Tensor, lead: list[tir.Var], nbatch: int) -> list[tir.PrimExpr]:
        axes = lead[len(lead) - nbatch :] if nbatch else []
        dims = t.shape[:nbatch]
        return [
            E.idx(0) if _one(d) and not _one(shape[len(lead) - nbatch + j]) else axes[j]
            for j, d in enumerate(dims)
        ]

    def body(*i: tir.Var) -> te.Reduce:
        k = te.reduce_axis(k_extent, "k")
        lead = list(i[:batch])
        ai = bcast(a, lead, a.ndim - 2) if a.ndim > 1 else []
        bi = bcast(b, lead, b.ndim - 2) if b.ndim > 1 else []
        rest = list(i[batch:])
        aidx = [*ai, rest.pop(0), k.var] if a.ndim > 1 else [k.var]
        bidx = [k.var]
        if b.ndim > 1:
            col = rest.pop(0)
            bidx = [*bi, col, k.var] if transpose_b else [*bi, k.var, col]
        prod = E.mul(E.cast(a.load(aidx), dtype), E.cast(b.load(bidx), dtype))
        return te.sum_(prod, [k])

    return kb.compute(shape, body, name, prefix="i")


def _one(d: tir.PrimExpr) -> bool:
    return isinstance(d, tir.IntImm) and d.value == 1


@register_legalize("relax.matmul")
def legalize_matmul(ctx: LegalizeCtx) -> relax.Expr:
    shape, dtype = ctx.out_shape(), ctx.out_dtype()

    def build(kb: te.KernelBuilder, a: te.Tensor, b: te.Tensor) -> te.Tensor:
        return matmul_compute(kb, a, b, shape, dtype)

    return ctx.call_te("matmul", build)


@register_legalize("relax.linear")
def legalize_linear(ctx: LegalizeCtx) -> relax.Expr:
    x, w = ctx.args[0], ctx.args[1]
    wt = ctx.emit(ctx.make_op("relax.permute_dims", w))
    out_dtype = ctx.attrs.get("out_dtype")
    y = ctx.make_op("relax.matmul", x, wt, out_dtype=out_dtype)
    if len(ctx.args) > 2:
        return ctx.make_op("relax.add", ctx.emit(y), ctx.args[2])
    return y


@register_legalize("relax.einsum")
def legalize_einsum(ctx: LegalizeCtx) -> relax.Expr:
    subscripts = ctx.attrs["subscripts"]
    shape = ctx.out_shape()
    lhs, arrow, out = subscripts.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if not arrow:
        raise LegalizeUnsupported("einsum without an output subscript")
    ranks = [len(s.shape) for s in ctx.arg_sinfo[0].fields]  # type: ignore[union-attr]
    terms, out = expand_ellipsis(terms, ranks, out)

    def build(kb: te.KernelBuilder, xs: list[te.Tensor]) -> te.Tensor:
        extents: dict[str, tir.PrimExpr] = {}
        for term, t in zip(terms, xs, strict=True):
            for c, d in zip(term, t.shape, strict=True):
                if c not in extents or E.value_of(extents[c]) == 1:
                    extents[c] = d
        reduced = sorted({c for term in terms for c in term} - set(out))

        def body(*ax: tir.Var) -> tir.PrimExpr | te.Reduce:
            env: dict[str, tir.PrimExpr] = dict(zip(out, ax, strict=True))
            raxes = [te.reduce_axis(extents[c], f"k{i}") for i, c in enumerate(reduced)]
            env.update({c: r.var for c, r in zip(reduced, raxes, strict=True)})
            prod: tir.PrimExpr | None = None
            for term, t in zip(terms, xs, strict=True):
                # a dim of 1 against a longer one broadcasts (ellipsis dims)
                index = [
                    E.idx(0) if E.value_of(d) == 1 and E.value_of(extents[c]) != 1 else env[c]
                    for c, d in zip(term, t.shape, strict=True)
                ]
                load = t.load(index)
                prod = load if prod is None else E.mul(prod, load)
            assert prod is not None
            return te.sum_(prod, raxes) if raxes else prod

        return kb.compute(shape, body, "T_einsum")

    return ctx.call_te("einsum", build)


@register_legalize("relax.outer")
def legalize_outer(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, a: te.Tensor, b: te.Tensor) -> te.Tensor:
        return kb.compute(shape, lambda i, j: E.mul(a[i], b[j]), "T_outer")

    return ctx.call_te("outer", build)
