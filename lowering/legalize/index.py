"""Indexing: take, one_hot, gather_elements, gather_nd, meshgrid.

The gathers (take in mode "fast", gather_elements, gather_nd) read through
data-dependent indices TVM leaves unchecked; tvmlite first passes the index
tensor through an `<op>_index_check` kernel (`extern.checked_indices`), so the
gather kernels themselves stay as TVM builds them."""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import checked_indices
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize


def _axis(a: int, ndim: int) -> int:
    return a + ndim if a < 0 else a


def _dims(ctx: LegalizeCtx, arg: int) -> list[int | None]:
    """The dims of tensor argument `arg`, None where symbolic (or all unknown: [])."""
    shape = getattr(ctx.arg_sinfo[arg], "shape", None)
    if not isinstance(shape, tuple):
        return []
    return [v if isinstance(v := E.value_of(d), int) else None for d in shape]


def _dim(dims: list[int | None], axis: int) -> int | None:
    return dims[axis] if 0 <= axis < len(dims) else None


def _bound(index: tir.PrimExpr, dim: tir.PrimExpr, mode: str) -> tir.PrimExpr:
    """An index made safe the way `take`'s mode says (`fast` trusts it)."""
    if mode == "clip":
        return E.minimum(
            E.maximum(index, E.const(0, index.dtype)), E.cast(E.sub(dim, 1), index.dtype)
        )
    if mode == "wrap":
        return E.floormod(index, E.cast(dim, index.dtype))
    return index


@register_legalize("relax.take")
def legalize_take(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()
    mode = ctx.attrs.get("mode", "fast")
    xdims = _dims(ctx, 0)
    axis_attr = ctx.attrs.get("axis")
    axis = _axis(axis_attr or 0, len(xdims)) if axis_attr is not None else None
    args = ctx.args
    scalar = isinstance(args[1], relax.PrimValue)  # a 0-d index written as a scalar
    if mode not in ("clip", "wrap") and not scalar:  # "fast" reads unchecked in TVM
        extent = (xdims[0] if len(xdims) == 1 else None) if axis is None else _dim(xdims, axis)
        args = (args[0], checked_indices(ctx, "take", args[1], [(axis or 0, extent)]))

    def build(kb: te.KernelBuilder, x: te.Tensor, idx: te.Tensor | tir.PrimExpr) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            if axis is None:
                pick = idx if scalar else idx[ax]
                return x.load([_bound(pick, x.shape[0], mode)])
            ndim = 0 if scalar else idx.ndim
            pick = idx if scalar else idx.load(ax[axis : axis + ndim])
            index = [*ax[:axis], _bound(pick, x.shape[axis], mode), *ax[axis + ndim :]]
            return x.load(index)

        return kb.compute(shape, body, "T_take")

    return ctx.call_te("take", build, args=args)


@register_legalize("relax.one_hot")
def legalize_one_hot(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()
    dtype = ctx.out_dtype()
    on, off = (E.cast(ctx.k(a.value), dtype) for a in ctx.args[1:3])  # type: ignore[attr-defined]
    axis = _axis(ctx.attrs.get("axis", -1), len(shape))

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            rest = [v for d, v in enumerate(ax) if d != axis]
            hit = E.binary("eq", E.cast(x.load(rest), "int64"), ax[axis])
            return E.select(hit, on, off)

        return kb.compute(shape, body, "T_one_hot")

    return ctx.call_te("one_hot", build, args=ctx.args[:1])


@register_legalize("relax.gather_elements")
def legalize_gather_elements(ctx: LegalizeCtx) -> relax.Expr:
    xdims = _dims(ctx, 0)
    axis = _axis(ctx.attrs.get("axis", 0), len(xdims))
    checked = checked_indices(ctx, "gather_elements", ctx.args[1], [(axis, _dim(xdims, axis))])

    def build(kb: te.KernelBuilder, x: te.Tensor, idx: te.Tensor) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            index = list(ax)
            index[axis] = idx[ax]
            return x.load(index)

        return kb.compute(idx.shape, body, "T_gather_elements")

    return ctx.call_te("gather_elements", build, args=[ctx.args[0], checked])


@register_legalize("relax.gather_nd")
def legalize_gather_nd(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()
    batch = ctx.attrs.get("batch_dims", 0)
    xdims, idims = _dims(ctx, 0), _dims(ctx, 1)
    m = idims[-1] if idims and isinstance(idims[-1], int) else 0
    axes = [(batch + j, _dim(xdims, batch + j)) for j in range(m)]
    checked = checked_indices(ctx, "gather_nd", ctx.args[1], axes) if axes else ctx.args[1]

    def build(kb: te.KernelBuilder, x: te.Tensor, idx: te.Tensor) -> te.Tensor:
        # TOPI moves the index-tuple axis first, then gathers.
        perm = [idx.ndim - 1, *range(idx.ndim - 1)]
        tshape = [idx.shape[p] for p in perm]

        def tbody(*ax: tir.Var) -> tir.PrimExpr:
            index: list[tir.PrimExpr] = [E.idx(0)] * idx.ndim
            for o, p in enumerate(perm):
                index[p] = ax[o]
            return idx.load(index)

        t = kb.compute(tshape, tbody, "T_transpose")
        m = tshape[0].value  # type: ignore[attr-defined]
        outer = idx.ndim - 1

        def body(*ax: tir.Var) -> tir.PrimExpr:
            picks = [t.load([E.idx(j), *ax[:outer]]) for j in range(m)]
            return x.load([*ax[:batch], *picks, *ax[outer:]])

        return kb.compute(shape, body, "T_gather_nd")

    return ctx.call_te("te_gather_nd", build, args=[ctx.args[0], checked])


@register_legalize("relax.meshgrid")
def legalize_meshgrid(ctx: LegalizeCtx) -> relax.Expr:
    sinfo = ctx.out_sinfo
    n = len(sinfo.fields) if isinstance(sinfo, relax.TupleStructInfo) else 1
    shape = ctx.out_shape(0)
    xy = ctx.attrs.get("indexing", "ij") == "xy"

    def build(kb: te.KernelBuilder, xs: list[te.Tensor]) -> list[te.Tensor]:
        outs = []
        for i in range(n):
            pos = (1 - i if i < 2 else i) if xy else i

            def body(*ax: tir.Var, t: te.Tensor = xs[i], p: int = pos) -> tir.PrimExpr:
                return t[ax[p]]

            outs.append(kb.compute(shape, body, "T_meshgrid"))
        return outs

    return ctx.call_te("meshgrid", build)
