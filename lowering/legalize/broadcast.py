"""Broadcasting helpers: how an input of a broadcast op is indexed by the output's
axes (TOPI's rule: align from the right, dims of extent 1 read index 0), and
what to do when the result's shape is unknown because two symbolic dims cannot
be proved equal (`s` and `T.min(s, 512)`: BERT's position ids sliced to the
sequence): the operands are matched (`R.match_cast`, checked at run time) to
the shape the result must then have."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import sinfo_of
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx

Operand = te.Tensor | tir.PrimExpr


def _is_one(d: tir.PrimExpr) -> bool:
    return isinstance(d, tir.IntImm) and d.value == 1


def bcast_load(
    t: Operand, axes: Sequence[tir.Var], out_shape: Sequence[tir.PrimExpr]
) -> tir.PrimExpr:
    """`t` read at the output position `axes` (an immediate is itself)."""
    if not isinstance(t, te.Tensor):
        return t
    offset = len(axes) - t.ndim
    index = []
    for d, dim in enumerate(t.shape):
        out_dim = out_shape[offset + d]
        index.append(E.idx(0) if _is_one(dim) and not _is_one(out_dim) else axes[offset + d])
    return t[tuple(index)]


def broadcast_shape(shapes: Sequence[Sequence[tir.PrimExpr]]) -> tuple[tir.PrimExpr, ...]:
    """The broadcast of `shapes` (symbolic dims must agree or be 1)."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[tir.PrimExpr] = []
    for i in range(ndim):
        dim: tir.PrimExpr = E.idx(1)
        for s in shapes:
            j = i - (ndim - len(s))
            if j >= 0 and not _is_one(s[j]):
                dim = s[j]
        out.append(dim)
    return tuple(out)


def with_agreeing_shapes(ctx: LegalizeCtx) -> LegalizeCtx:
    """`ctx` itself when its result has a known shape; else, when every tensor
    operand's shape is known, the same call on operands cast (`R.match_cast`)
    to agree axis by axis, and the result of the shape they then broadcast to.
    On each axis the dims other than 1 must be equal at run time; the one kept
    is a plain symbolic dim where there is one (`s` over `T.min(s, 512)`)."""
    sinfo = ctx.out_sinfo
    if not isinstance(sinfo, relax.TensorStructInfo) or isinstance(sinfo.shape, tuple):
        return ctx
    shapes = []
    for arg in ctx.args:
        arg_sinfo = sinfo_of(arg)
        if not isinstance(arg_sinfo, relax.TensorStructInfo):
            continue
        if not isinstance(arg_sinfo.shape, tuple):
            return ctx
        shapes.append(arg_sinfo.shape)
    ndim = max((len(s) for s in shapes), default=0)
    chosen: list[tir.PrimExpr] = []
    for i in range(ndim):
        dims = [s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0]
        wide = [d for d in dims if not _is_one(d)] or [E.idx(1)]
        chosen.append(next((d for d in wide if isinstance(d, tir.Var)), wide[0]))
    args = []
    for arg in ctx.args:
        arg_sinfo = sinfo_of(arg)
        if not isinstance(arg_sinfo, relax.TensorStructInfo):
            args.append(arg)
            continue
        assert isinstance(arg_sinfo.shape, tuple)
        rank = len(arg_sinfo.shape)
        want = tuple(
            d if _is_one(d) else chosen[ndim - rank + k] for k, d in enumerate(arg_sinfo.shape)
        )
        if want == arg_sinfo.shape:
            args.append(arg)
            continue
        cast = relax.TensorStructInfo(want, arg_sinfo.dtype, rank)
        args.append(ctx.table.emit_match_cast(arg, cast, "lv"))
    call = dataclasses.replace(ctx.call, args=tuple(args))
    out = relax.TensorStructInfo(tuple(chosen), sinfo.dtype, ndim)
    return LegalizeCtx(call, ctx.op, out, ctx.table)
