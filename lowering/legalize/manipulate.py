"""Shape manipulation: transpose, reshape (and flatten), expand_dims, squeeze,
concat, split, tile, repeat, flip, broadcast_to, strided_slice.

All are TOPI injective kernels with one `T_<op>` block over `ax0, ...`
(`expand_dims` uses TOPI's `i0, ...`); reshape indices go through the
canonical index form so they print as TVM's simplifier leaves them.
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.broadcast import bcast_load
from tvmlite.lowering.legalize.canon import ravel, unravel
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize


def _axis(a: int, ndim: int) -> int:
    return a + ndim if a < 0 else a


def reshape_to(kb: te.KernelBuilder, x: te.Tensor, shape: tuple[tir.PrimExpr, ...]) -> te.Tensor:
    def body(*ax: tir.Var) -> tir.PrimExpr:
        return x.load(unravel(ravel(tuple(ax), shape), x.shape))

    return kb.compute(shape, body, "T_reshape")


def _reshape_rule(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        return reshape_to(kb, x, shape)

    return ctx.call_te("reshape", build, args=ctx.args[:1])


for _name in ("relax.reshape", "relax.flatten", "relax.nn.batch_flatten"):
    register_legalize(_name)(_reshape_rule)


@register_legalize("relax.permute_dims")
def legalize_permute_dims(ctx: LegalizeCtx) -> relax.Expr:
    axes = ctx.attrs.get("axes")

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        perm = list(range(x.ndim))[::-1] if axes is None else [_axis(a, x.ndim) for a in axes]
        shape = [x.shape[p] for p in perm]

        def body(*ax: tir.Var) -> tir.PrimExpr:
            index: list[tir.PrimExpr] = [E.idx(0)] * x.ndim
            for out_axis, p in enumerate(perm):
                index[p] = ax[out_axis]
            return x.load(index)

        return kb.compute(shape, body, "T_transpose")

    return ctx.call_te("transpose", build)


@register_legalize("relax.expand_dims")
def legalize_expand_dims(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()
    new = {_axis(a, len(shape)) for a in ctx.attrs["axis"]}

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        def body(*i: tir.Var) -> tir.PrimExpr:
            return x.load([v for d, v in enumerate(i) if d not in new])

        return kb.compute(shape, body, "expand_dims", prefix="i")

    return ctx.call_te("expand_dims", build)


@register_legalize("relax.squeeze")
def legalize_squeeze(ctx: LegalizeCtx) -> relax.Expr:
    axis = ctx.attrs.get("axis")
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        if axis is None:
            gone = {d for d, s in enumerate(x.shape) if isinstance(s, tir.IntImm) and s.value == 1}
        else:
            gone = {_axis(a, x.ndim) for a in axis}

        def body(*ax: tir.Var) -> tir.PrimExpr:
            it = iter(ax)
            return x.load([E.idx(0) if d in gone else next(it) for d in range(x.ndim)])

        return kb.compute(shape, body, "T_squeeze")

    return ctx.call_te("squeeze", build)


@register_legalize("relax.concat")
def legalize_concat(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()
    axis = _axis(ctx.attrs.get("axis") or 0, len(shape))

    def build(kb: te.KernelBuilder, xs: list[te.Tensor]) -> te.Tensor:
        offsets: list[tir.PrimExpr] = [E.idx(0)]
        for t in xs[:-1]:
            offsets.append(E.add(offsets[-1], t.shape[axis]))

        def body(*ax: tir.Var) -> tir.PrimExpr:
            def at(i: int) -> tir.PrimExpr:
                index = list(ax)
                index[axis] = E.sub(ax[axis], offsets[i])
                return xs[i].load(index)

            out = at(0)
            for i in range(1, len(xs)):
                out = E.if_then_else(E.binary("le", offsets[i], ax[axis]), at(i), out)
            return out

        return kb.compute(shape, body, "T_concat")

    return ctx.call_te("concatenate", build)


@register_legalize("relax.split")
def legalize_split(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs
    sinfo = ctx.out_sinfo
    n = len(sinfo.fields) if isinstance(sinfo, relax.TupleStructInfo) else 1
    shapes = [ctx.out_shape(i) for i in range(n)]
    axis = _axis(attrs["axis"], len(shapes[0]))
    spec = attrs["indices_or_sections"]
    by_sections = isinstance(spec, int)
    if not by_sections and any(b < a for a, b in zip((0, *spec), spec, strict=False)):
        # TOPI refuses them too ("split_indices must be sorted")
        raise LegalizeUnsupported("R.split with split points that are negative or decreasing")

    def build(kb: te.KernelBuilder, x: te.Tensor) -> list[te.Tensor]:
        outs, start = [], E.idx(0)
        for shape in shapes:

            def body(*ax: tir.Var, begin: tir.PrimExpr = start) -> tir.PrimExpr:
                index = list(ax)
                index[axis] = E.add(ax[axis], begin)
                return x.load(index)

            name = "T_split_sections" if by_sections else "T_split"
            outs.append(kb.compute(shape, body, name))
            start = E.add(start, shape[axis])
        return outs

    return ctx.call_te("split", build)


@register_legalize("relax.tile")
def legalize_tile(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            lead = len(ax) - x.ndim
            return x.load([E.floormod(ax[lead + d], s) for d, s in enumerate(x.shape)])

        return kb.compute(shape, body, "T_tile")

    return ctx.call_te("tile", build)


@register_legalize("relax.repeat")
def legalize_repeat(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()
    repeats, axis = ctx.attrs["repeats"], ctx.attrs.get("axis")

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        src, ax_ = x, axis
        if axis is None:
            total: tir.PrimExpr = E.idx(1)
            for s in x.shape:
                total = E.mul(total, s)
            src, ax_ = reshape_to(kb, x, (total,)), 0
        a = _axis(ax_, src.ndim)

        def body(*ax: tir.Var) -> tir.PrimExpr:
            index = list(ax)
            index[a] = E.floordiv(ax[a], repeats)
            return src.load(index)

        return kb.compute(shape, body, "T_repeat")

    return ctx.call_te("repeat", build)


@register_legalize("relax.flip")
def legalize_flip(ctx: LegalizeCtx) -> relax.Expr:
    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        a = _axis(ctx.attrs["axis"], x.ndim)

        def body(*ax: tir.Var) -> tir.PrimExpr:
            index = list(ax)
            index[a] = E.sub(E.sub(x.shape[a], 1), ax[a])
            return x.load(index)

        return kb.compute(x.shape, body, "T_reverse_sequence")

    return ctx.call_te("flip", build)


@register_legalize("relax.broadcast_to")
def legalize_broadcast_to(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        return kb.compute(shape, lambda *ax: bcast_load(x, ax, shape), "T_broadcast_to")

    return ctx.call_te("broadcast_to", build, args=ctx.args[:1])


def _ints(expr: relax.Expr) -> list[int]:
    if isinstance(expr, relax.Tuple):
        vals = [f.value for f in expr.fields if isinstance(f, relax.PrimValue)]
    elif isinstance(expr, relax.ShapeExpr):
        vals = list(expr.values)
    else:
        raise LegalizeUnsupported("strided_slice bounds must be constants")
    if not all(isinstance(v, tir.IntImm) for v in vals):
        raise LegalizeUnsupported("strided_slice bounds must be constants")
    return [v.value for v in vals]


@register_legalize("relax.strided_slice")
def legalize_strided_slice(ctx: LegalizeCtx) -> relax.Expr:
    axes, begins = _ints(ctx.args[1]), _ints(ctx.args[2])
    strides = _ints(ctx.args[4]) if len(ctx.args) > 4 else [1] * len(axes)
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        starts: dict[int, tuple[tir.PrimExpr | int, int]] = {}
        for a, b, s in zip(axes, begins, strides, strict=True):
            a = _axis(a, x.ndim)
            dim = x.shape[a]
            if not isinstance(dim, tir.IntImm):
                if s < 0:
                    raise LegalizeUnsupported("strided_slice backwards over a symbolic axis")
                # the start clamped into [0, dim], as for a static axis, in TIR
                start = E.add(dim, b) if b < 0 else E.idx(b)
                starts[a] = (E.minimum(E.maximum(start, E.idx(0)), dim), s)
                continue
            b = b + dim.value if b < 0 else b
            b = min(max(b, 0), dim.value) if s > 0 else min(max(b, -1), dim.value - 1)
            starts[a] = (b, s)

        def body(*ax: tir.Var) -> tir.PrimExpr:
            index: list[tir.PrimExpr] = list(ax)
            for a, (b, s) in starts.items():
                if s < 0:
                    index[a] = E.sub(b, E.mul(ax[a], -s))
                else:
                    index[a] = E.add(E.mul(ax[a], s), b)
            return x.load(index)

        return kb.compute(shape, body, "T_strided_slice_with_axes")

    return ctx.call_te("strided_slice", build, args=ctx.args[:1])


@register_legalize("relax.stack")
def legalize_stack(ctx: LegalizeCtx) -> relax.Expr:
    shape = ctx.out_shape()
    axis = _axis(ctx.attrs.get("axis") or 0, len(shape))

    def build(kb: te.KernelBuilder, xs: list[te.Tensor]) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            rest = [v for d, v in enumerate(ax) if d != axis]
            out = xs[0].load(rest)
            for i in range(1, len(xs)):
                out = E.if_then_else(E.binary("eq", ax[axis], E.idx(i)), xs[i].load(rest), out)
            return out

        return kb.compute(shape, body, "T_stack")

    return ctx.call_te("stack", build)


@register_legalize("relax.reverse_sequence")
def legalize_reverse_sequence(ctx: LegalizeCtx) -> relax.Expr:
    """Reverse the first `seq_lengths[b]` elements along `seq_axis` of each batch."""

    def build(kb: te.KernelBuilder, x: te.Tensor, lengths: te.Tensor) -> te.Tensor:
        seq, batch = (_axis(ctx.attrs[a], x.ndim) for a in ("seq_axis", "batch_axis"))

        def body(*ax: tir.Var) -> tir.PrimExpr:
            n = E.cast(lengths[ax[batch]], "int64")
            n = E.minimum(E.maximum(n, E.idx(1)), x.shape[seq])
            index = list(ax)
            index[seq] = E.select(E.binary("lt", ax[seq], n), E.sub(E.sub(n, 1), ax[seq]), ax[seq])
            return x.load(index)

        return kb.compute(x.shape, body, "T_reverse_sequence")

    return ctx.call_te("reverse_sequence", build)
