"""Scatters and advanced indexing: scatter_elements, scatter_nd, index_put,
slice_scatter, index_tensor.

The scatters are TOPI IR-builder kernels (`te.extern`): an opaque
`*_generic` block that copies the data, then stores the updates through
flat indices, serial where updates may collide. slice_scatter and
index_tensor are ordinary TE stages (index_tensor's index tensors first go
through `index_tensor_index_check` kernels, see `extern.checked_indices`).
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.broadcast import bcast_load, broadcast_shape
from tvmlite.lowering.legalize.extern import (
    Size,
    checked_indices,
    dims,
    index_check,
    index_var,
    load,
    loop,
    pragma_seq,
    product,
    reduce_value,
    seq,
    store,
    times,
)
from tvmlite.lowering.legalize.manipulate import reshape_to
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize


def _copy(data: tir.Buffer, out: tir.Buffer, kind: str) -> tir.For:
    v = index_var()
    return loop(v, product(dims(data.shape)), store(out, load(data, v), v), kind)


@register_legalize("relax.scatter_elements")
def legalize_scatter_elements(ctx: LegalizeCtx) -> relax.Expr:
    """TOPI's scatter_elements: one parallel loop over the positions outside
    `axis`, a serial loop along it (negative indices wrap once)."""
    mode = ctx.attrs.get("reduction", "update")

    def build(kb: te.KernelBuilder, x: te.Tensor, idx: te.Tensor, upd: te.Tensor) -> te.Tensor:
        axis = ctx.attrs.get("axis", 0)
        axis = axis + x.ndim if axis < 0 else axis
        shape, ishape = dims(x.shape), dims(idx.shape)
        axis_range, after = shape[axis], product(shape[axis + 1 :])
        before_stride = times(axis_range, after)
        ind_axis, ind_before = ishape[axis], product(ishape[:axis])
        ind_after = product(ishape[axis + 1 :])
        ind_before_stride = times(ind_axis, ind_after)

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            data, indices, updates = ins
            (out,) = outs
            fused, k = index_var(), index_var()
            i, j = E.floordiv(fused, ind_after), E.floormod(fused, ind_after)
            pre1 = E.add(E.mul(i, ind_before_stride), j)
            pre2 = E.add(E.mul(i, before_stride), j)
            index1 = E.add(pre1, E.mul(k, ind_after))
            k_new = load(indices, index1)
            negative = E.binary("lt", k_new, E.const(0, k_new.dtype))
            shifted = E.add(k_new, E.mul(negative, E.idx(axis_range)))
            index2 = E.add(pre2, E.mul(shifted, after))
            value = reduce_value(mode, load(out, index2), load(updates, index1))
            check = index_check("scatter_elements", axis, shifted, axis_range)
            inner = loop(k, ind_axis, seq(check, store(out, value, index2)))
            scatter = loop(fused, times(ind_before, ind_after), inner, tir.PARALLEL)
            return seq(pragma_seq(), _copy(data, out, tir.PARALLEL), scatter)

        outs = [("out_buf", x.shape, x.dtype, False)]
        return kb.extern("scatter_elements_generic", outs, [x, idx, upd], body)[0]

    return ctx.call_te("scatter_elements", build)


@register_legalize("relax.scatter_nd")
def legalize_scatter_nd(ctx: LegalizeCtx) -> relax.Expr:
    """TVM transposes the index tuples to the front, then runs TOPI's scatter_nd."""
    mode = ctx.attrs.get("reduction", "update")

    def build(kb: te.KernelBuilder, x: te.Tensor, idx: te.Tensor, upd: te.Tensor) -> te.Tensor:
        n = idx.ndim
        perm = list(range(n))
        perm[0], perm[-1] = n - 1, 0

        def tbody(*ax: tir.Var) -> tir.PrimExpr:
            index: list[tir.PrimExpr] = [E.idx(0)] * n
            for out_axis, p in enumerate(perm):
                index[p] = ax[out_axis]
            return idx.load(index)

        tidx = kb.compute([idx.shape[p] for p in perm], tbody, "T_transpose")
        dshape, ishape = dims(x.shape), dims(tidx.shape)
        if not isinstance(ishape[0], int):
            raise LegalizeUnsupported("scatter_nd with index tuples of symbolic length")
        fused_indices = product(ishape[1:])
        fused_updates = product(dims(upd.shape)[n - 1 :])

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            data, indices, updates = ins
            (out,) = outs
            i, j = index_var(), index_var()
            offset: Size
            offset, index = fused_updates, j
            checks: list[tir.Stmt] = []
            for m in reversed(range(ishape[0])):
                pick = load(indices, E.add(i, E.mul(E.idx(m), fused_indices)))
                checks.insert(0, index_check("scatter_nd", m, pick, dshape[m]))
                index = E.add(index, E.mul(offset, pick))
                offset = times(offset, dshape[m])
            src = load(updates, E.add(E.mul(i, fused_updates), j))
            value = reduce_value(mode, load(out, index), src)
            inner = loop(j, fused_updates, store(out, value, index), tir.PARALLEL)
            scatter = loop(i, fused_indices, seq(*checks, inner))
            return seq(pragma_seq(), _copy(data, out, tir.SERIAL), scatter)

        outs = [("out_buf", x.shape, x.dtype, False)]
        return kb.extern("scatter_nd_generic", outs, [x, tidx, upd], body)[0]

    return ctx.call_te("scatter_nd", build)


@register_legalize("relax.index_put")
def legalize_index_put(ctx: LegalizeCtx) -> relax.Expr:
    """Copy the data, then store (or accumulate) the values at the broadcast
    index tuples, serially so repeated indices accumulate."""
    accumulate = bool(ctx.attrs.get("accumulate"))

    def build(
        kb: te.KernelBuilder, x: te.Tensor, idxs: list[te.Tensor], vals: te.Tensor
    ) -> te.Tensor:
        bshape = broadcast_shape([t.shape for t in idxs])
        xshape, lead = dims(x.shape), dims(bshape)
        rest = xshape[len(idxs) :]
        count, inner = product(lead), product(rest)
        vshape = dims(vals.shape)
        full = [*lead, *rest]

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            data, *indices, values = ins
            (out,) = outs
            i, j = index_var(), index_var()
            pos = [
                E.floormod(E.floordiv(i, product(lead[d + 1 :])), lead[d]) for d in range(len(lead))
            ]
            flat: tir.PrimExpr = E.idx(0)
            checks: list[tir.Stmt] = []
            for d, buf in enumerate(indices):
                bdims = dims(buf.shape)
                off = len(lead) - len(bdims)
                at = [
                    E.idx(0) if b == 1 and lead[off + q] != 1 else pos[off + q]
                    for q, b in enumerate(bdims)
                ]
                sub = tir.BufferLoad(buf, tuple(at), buf.dtype)
                sub = E.cast(
                    E.add(
                        sub,
                        E.mul(
                            E.binary("lt", sub, E.const(0, sub.dtype)),
                            E.cast(E.idx(xshape[d]), sub.dtype),
                        ),
                    ),
                    E.INDEX,
                )
                checks.append(index_check("index_put", d, sub, xshape[d]))
                flat = E.add(E.mul(flat, xshape[d]), sub)
            flat = E.add(E.mul(flat, inner), j)
            vpos = [
                *pos,
                *(
                    E.floormod(E.floordiv(j, product(rest[d + 1 :])), rest[d])
                    for d in range(len(rest))
                ),
            ]
            voff = len(full) - len(vshape)
            vat = [
                E.idx(0) if b == 1 and full[voff + q] != 1 else vpos[voff + q]
                for q, b in enumerate(vshape)
            ]
            value = tir.BufferLoad(values, tuple(vat), values.dtype)
            if accumulate:
                value = E.add(load(out, flat), value)
            scatter = loop(i, count, seq(*checks, loop(j, inner, store(out, value, flat))))
            return seq(_copy(data, out, tir.PARALLEL), scatter)

        outs = [("out_buf", x.shape, x.dtype, False)]
        return kb.extern("index_put_generic", outs, [x, *idxs, vals], body)[0]

    return ctx.call_te("index_put", build)


@register_legalize("relax.index_tensor")
def legalize_index_tensor(ctx: LegalizeCtx) -> relax.Expr:
    """`x[i0, i1, ...]` with broadcast index tensors, as TOPI's advanced_index."""
    indices = ctx.args[1]
    sinfo = ctx.arg_sinfo[1]
    if not isinstance(sinfo, relax.TupleStructInfo):
        raise LegalizeUnsupported("index_tensor needs a tuple of index tensors")
    fields = [ctx.emit(relax.TupleGetItem(indices, i)) for i in range(len(sinfo.fields))]
    xshape = getattr(ctx.arg_sinfo[0], "shape", None) or ()
    xdims = [E.value_of(d) for d in xshape]
    fields = [
        checked_indices(ctx, "index_tensor", f, [(d, xdims[d] if d < len(xdims) else None)])
        for d, f in enumerate(fields)
    ]
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor, *idxs: te.Tensor) -> te.Tensor:
        bshape = broadcast_shape([t.shape for t in idxs])

        def body(*ax: tir.Var) -> tir.PrimExpr:
            lead, rest = ax[: len(bshape)], ax[len(bshape) :]
            picks = [bcast_load(t, lead, bshape) for t in idxs]
            return x.load([*picks, *rest])

        return kb.compute(shape, body, "advanced_index")

    return ctx.call_te("index_tensor", build, args=[ctx.args[0], *fields])


def _prim_int(expr: relax.Expr) -> tir.PrimExpr:
    if isinstance(expr, relax.PrimValue):
        return expr.value
    raise LegalizeUnsupported("slice_scatter bounds must be prim values")


@register_legalize("relax.slice_scatter")
def legalize_slice_scatter(ctx: LegalizeCtx) -> relax.Expr:
    """A mask of the strided slice along `axis`, the source taken at
    `(i - start + step - 1) // step`, and a `where`."""
    start, end, step = (ctx.k(_prim_int(a)) for a in ctx.args[2:5])

    def build(kb: te.KernelBuilder, x: te.Tensor, src: te.Tensor) -> te.Tensor:
        axis = ctx.attrs.get("axis", 0)
        axis = axis + x.ndim if axis < 0 else axis
        dim = x.shape[axis]
        one_d = (dim,)

        full = kb.compute(one_d, lambda i: E.const(True, "bool"), "T_full")
        ar = kb.compute(one_d, lambda i: tir.Cast("int64", i), "T_arange")
        i64 = "int64"
        ge = kb.compute(
            one_d, lambda i: E.binary("le", E.cast(start, i64), ar[i]), "T_greater_equal"
        )
        m1 = kb.compute(one_d, lambda i: E.logical_and(full[i], ge[i]), "T_logical_and")
        lt = kb.compute(one_d, lambda i: E.binary("lt", ar[i], E.cast(end, i64)), "T_less")
        m2 = kb.compute(one_d, lambda i: E.logical_and(m1[i], lt[i]), "T_logical_and")
        off = kb.compute(one_d, lambda i: E.sub(ar[i], E.cast(start, i64)), "T_subtract")
        md = kb.compute(one_d, lambda i: E.floormod(off[i], E.cast(step, i64)), "T_floor_mod")
        eq = kb.compute(one_d, lambda i: E.binary("eq", md[i], E.idx(0)), "T_equal")
        m3 = kb.compute(one_d, lambda i: E.logical_and(m2[i], eq[i]), "T_logical_and")
        bshape = [E.idx(1)] * x.ndim
        bshape[axis] = dim
        mr = reshape_to(kb, m3, tuple(bshape))
        mask = kb.compute(x.shape, lambda *ax: bcast_load(mr, ax, x.shape), "T_broadcast_to")
        s1 = kb.compute(one_d, lambda i: E.sub(ar[i], E.cast(start, i64)), "T_subtract")
        a1 = kb.compute(one_d, lambda i: E.add(s1[i], E.sub(E.cast(step, i64), 1)), "T_add")
        fd = kb.compute(one_d, lambda i: E.floordiv(a1[i], E.cast(step, i64)), "T_floor_divide")
        hi = E.sub(src.shape[axis], 1)  # the source's last row, so masked rows stay in bounds
        cl = kb.compute(
            one_d, lambda i: E.maximum(E.minimum(fd[i], hi), E.idx(0)), "compute", prefix="i"
        )

        def take(*ax: tir.Var) -> tir.PrimExpr:
            index = list(ax)
            index[axis] = cl[ax[axis]]
            return src.load(index)

        taken = kb.compute(x.shape, take, "T_take")

        def where(*ax: tir.Var) -> tir.PrimExpr:
            test = E.binary("lt", E.idx(0), E.cast(mask[ax], "int64"))
            return E.select(test, taken[ax], x[ax])

        return kb.compute(x.shape, where, "T_where")

    return ctx.call_te("slice_scatter", build, args=ctx.args[:2])
