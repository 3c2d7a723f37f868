"""Searching: bucketize, as TOPI's `searchsorted` IR-builder kernel (a binary
search per value in local scalars `lo`/`hi`, one parallel loop)."""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import (
    Size,
    at0,
    dims,
    index_var,
    load,
    local_scalar,
    loop,
    product,
    seq,
    set0,
    store,
)
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize


def binary_search(
    sorted_seq: tir.Buffer,
    offset: tir.PrimExpr,
    search_range: Size,
    value: tir.PrimExpr,
    right: bool,
    dtype: str,
) -> tuple[list[tir.Stmt], tir.PrimExpr]:
    """Statements finding the insertion point of `value`, and the result."""
    lo, hi = local_scalar("lo", dtype), local_scalar("hi", dtype)
    mid = E.add(at0(lo), E.call("shift_right", dtype, E.sub(at0(hi), at0(lo)), E.const(1, dtype)))
    current = load(sorted_seq, E.add(offset, mid))
    cond = E.binary("le" if right else "lt", current, value)
    step = tir.IfThenElse(cond, set0(lo, E.add(mid, E.const(1, dtype))), set0(hi, mid))
    stmts: list[tir.Stmt] = [
        tir.AllocBuffer(lo, "alloc_local"),
        tir.AllocBuffer(hi, "alloc_local"),
        set0(lo, E.const(0, dtype)),
        set0(hi, E.cast(E.idx(search_range), dtype)),
        tir.While(E.binary("lt", at0(lo), at0(hi)), step),
    ]
    return stmts, at0(lo)


@register_legalize("relax.bucketize")
def legalize_bucketize(ctx: LegalizeCtx) -> relax.Expr:
    right = bool(ctx.attrs.get("right"))
    dtype = "int32" if ctx.attrs.get("out_int32") else "int64"

    def build(kb: te.KernelBuilder, boundaries: te.Tensor, x: te.Tensor) -> te.Tensor:
        bshape, vshape = dims(boundaries.shape), dims(x.shape)

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            sorted_seq, values = ins
            (out,) = outs
            i = index_var()
            offset: tir.PrimExpr = E.idx(0)
            if len(bshape) > 1:
                offset = E.mul(E.floordiv(i, vshape[-1]), bshape[-1])
            stmts, result = binary_search(
                sorted_seq, offset, bshape[-1], load(values, i), right, dtype
            )
            inner = seq(*stmts, store(out, result, i))
            return loop(i, product(vshape), inner, tir.PARALLEL)

        outs = [("searchsorted", x.shape, dtype, True)]
        return kb.extern("searchsorted", outs, [boundaries, x], body)[0]

    return ctx.call_te("searchsorted", build, args=[ctx.args[1], ctx.args[0]])
