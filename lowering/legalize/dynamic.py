"""Operators whose output size depends on the data: nonzero.

TVM runs nonzero through a packed VM builtin that allocates its result. Here
it is native, in two kernels: the first counts the non-zero elements into a
1-element int64 tensor, `LegalizeCtx.emit_shape` turns that count into a new
symbolic dim `num_nonzero` (`R.tensor_to_shape` + `R.match_cast`), and the
second, allocated with that dim, walks the input in row-major order and writes
the coordinates of each non-zero element. It writes only while its position is
below the allocated length, so it cannot store out of bounds whatever it is
given. A 0-d input is read as a 1-element vector (TVM's builtin calls
`np.atleast_1d`), so its result has one row.
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops.context import tensor_sinfo
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import (
    at0,
    index_var,
    local_scalar,
    loop,
    product,
    seq,
    set0,
    static_dims,
    unflatten,
)
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize


def _nonzero_at(data: tir.Buffer, i: tir.PrimExpr) -> tir.PrimExpr:
    """Whether the element at flat position `i` of `data` is not zero."""
    x = tir.BufferLoad(data, tuple(unflatten(data, i)) if data.shape else (), data.dtype)
    return E.binary("ne", x, E.const(0, x.dtype)) if x.dtype != "bool" else x


@register_legalize("relax.nonzero")
def legalize_nonzero(ctx: LegalizeCtx) -> relax.Expr:
    x_arg = ctx.args[0]

    def count(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        # An IR-builder loop rather than a sum: a reduction's init never runs
        # over an empty input.
        dims = static_dims(x.shape, "nonzero")

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            (data,), (out,) = ins, outs
            i = index_var("i")
            bump = tir.IfThenElse(_nonzero_at(data, i), set0(out, E.add(at0(out), E.idx(1))), None)
            return seq(set0(out, E.idx(0)), loop(i, product(dims), bump))

        outs = [("count", (E.idx(1),), "int64", False)]
        return kb.extern("count_nonzero", outs, [x], body)[0]

    counted = ctx.emit(
        ctx.call_te(
            "count_nonzero",
            count,
            args=[x_arg],
            out_sinfo=tensor_sinfo((E.idx(1),), "int64"),
        )
    )
    (n,) = ctx.emit_shape(counted, ["num_nonzero"])
    sinfo = ctx.arg_sinfo[0]
    rows = max(len(sinfo.shape), 1)  # type: ignore[union-attr]

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        dims = static_dims(x.shape, "nonzero")
        size = tir.Var("num_nonzero", "int64")

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            (data,), (out,) = ins, outs
            pos = local_scalar("pos", "int64")
            i = index_var("i")
            at = unflatten(data, i) if dims else []
            found = seq(
                *(
                    tir.BufferStore(out, E.cast(a, "int64"), (E.idx(d), at0(pos)))
                    for d, a in enumerate(at or [i])
                ),
                set0(pos, E.add(at0(pos), E.idx(1))),
            )
            room = E.binary("lt", at0(pos), size)
            test = E.logical_and(_nonzero_at(data, i), room)
            walk = loop(i, product(dims), tir.IfThenElse(test, found, None))
            return seq(tir.AllocBuffer(pos, "alloc_local"), set0(pos, E.idx(0)), walk)

        outs = [("nonzero", (E.idx(rows), size), "int64", False)]
        return kb.extern("nonzero", outs, [x], body)[0]

    out_sinfo = tensor_sinfo((E.idx(rows), n), "int64")
    return ctx.call_te("nonzero", build, args=[x_arg], out_sinfo=out_sinfo)
