"""Layout changes: `R.layout_transform` with a `T.index_map`.

TVM builds a copy kernel and rewrites its output with `transform_layout`: the
kernel loops over the *output* layout and reads the input at the inverse of the
index map, `T.if_then_else(padding, pad_value, x[...])` where the output
overhangs the input. The inverse comes from the tiling `dsl/index_map.py`
reads: each fused input `F` is rebuilt from its splits (`F = sum(o_k * lower_k)`)
and cut back into its vars (`v_k = F // stride_k % dim_k`); an output position
is padding when some rebuilt `F` reaches past the input (`total <= F`), and
then the input is not read at all. Kernels are named as TVM names them
(`te_layout_transform`, `te_layout_transform_with_pad`); an output axis keeps
the name of the input index it copies, others are `axis<k>`.
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.dsl.index_map import IndexMap, IndexMapError, Layout, analyze
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize


def _axis_names(index_map: IndexMap) -> list[str]:
    return [
        e.name if isinstance(e, tir.Var) else f"axis{k}"
        for k, e in enumerate(index_map.final_indices)
    ]


def _inverse(
    ctx: LegalizeCtx, layout: Layout, index_map: IndexMap, out: tuple[tir.Var, ...]
) -> tuple[dict[tir.Var, tir.PrimExpr], list[tir.PrimExpr]]:
    """The input index of each input var at output position `out`, and the
    conditions that make the position padding."""
    dims = dict(zip(index_map.initial_indices, ctx.arg_sinfo[0].shape, strict=True))  # type: ignore[union-attr]
    found: dict[tir.Var, tir.PrimExpr] = {}
    padding: list[tir.PrimExpr] = []
    for group in layout.groups:
        fused: tir.PrimExpr = E.idx(0)
        for pos, split in zip(group.outputs, group.splits, strict=True):
            fused = E.add(fused, E.mul(out[pos], split.lower))
        if group.padded:
            padding.append(E.binary("le", ctx.k(group.total), fused))
        for k, (var, stride) in enumerate(zip(group.fused.vars, group.fused.strides, strict=True)):
            index = E.floordiv(fused, stride)
            found[var] = index if k == 0 else E.floormod(index, ctx.k(dims[var]))
    return found, padding


@register_legalize("relax.layout_transform")
def legalize_layout_transform(ctx: LegalizeCtx) -> relax.Expr:
    index_map = ctx.attrs["index_map"]
    sinfo = ctx.arg_sinfo[0]
    if not isinstance(sinfo, relax.TensorStructInfo) or not isinstance(sinfo.shape, tuple):
        raise LegalizeUnsupported("layout_transform of a tensor of unknown shape")
    try:
        layout = analyze(index_map, sinfo.shape)
    except IndexMapError as err:
        raise LegalizeUnsupported(f"layout_transform: {err}") from None
    pad = ctx.attrs.get("pad_value")
    name = "te_layout_transform_with_pad" if layout.padded else "te_layout_transform"
    shape = tuple(ctx.k(d) for d in layout.shape)

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        fill = E.cast(pad if pad is not None else 0, x.dtype)

        def body(*out: tir.Var) -> tir.PrimExpr:
            at, padding = _inverse(ctx, layout, index_map, out)
            value = x.load([at[v] for v in index_map.initial_indices])
            if not padding:
                return value
            cond = padding[0]
            for c in padding[1:]:
                cond = E.logical_or(cond, c)
            return E.if_then_else(cond, fill, value)

        return kb.compute(shape, body, name, names=_axis_names(index_map))

    return ctx.call_te(name, build)
