"""Operators whose output size depends on the data: nonzero, dynamic_strided_slice.

Both run in two kernels around `LegalizeCtx.emit_shape`: the first computes
the output's dims into a 1-d int64 tensor, `R.tensor_to_shape` + `R.match_cast`
bind them to new symbolic vars, and the second, allocated with those vars,
fills the output.

dynamic_strided_slice is TVM's legalization: `shape_func` computes each
axis's length from `begin`/`end`/`strides` (TVM's canonicalization: a negative
index counts from the end, then it is clamped to `[0, extent]`, or to
`[-1, extent - 1]` for a negative stride), and `dynamic_strided_slice` reads
`x[begin' + i * stride]`. Two cases TVM leaves to fail differently are defined
here: a zero stride raises (TVM divides by it), and an empty range such as
`5:2:1` gives length 0 where TVM computes a negative length and fails to
allocate (NumPy gives an empty slice too).

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
from tvmlite.dsl.ops import OpPatternKind
from tvmlite.dsl.ops.context import tensor_sinfo
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import (
    at0,
    dims,
    index_var,
    local_scalar,
    loop,
    product,
    seq,
    set0,
    unflatten,
)
from tvmlite.lowering.legalize.registry import (
    LegalizeCtx,
    LegalizeUnsupported,
    register_legalize,
)


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
        sizes = dims(x.shape)

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            (data,), (out,) = ins, outs
            i = index_var("i")
            bump = tir.IfThenElse(_nonzero_at(data, i), set0(out, E.add(at0(out), E.idx(1))), None)
            return seq(set0(out, E.idx(0)), loop(i, product(sizes), bump))

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
        sizes = dims(x.shape)
        size = tir.Var("num_nonzero", "int64")

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            (data,), (out,) = ins, outs
            pos = local_scalar("pos", "int64")
            i = index_var("i")
            at = unflatten(data, i) if sizes else []
            found = seq(
                *(
                    tir.BufferStore(out, E.cast(a, "int64"), (E.idx(d), at0(pos)))
                    for d, a in enumerate(at or [i])
                ),
                set0(pos, E.add(at0(pos), E.idx(1))),
            )
            room = E.binary("lt", at0(pos), size)
            test = E.logical_and(_nonzero_at(data, i), room)
            walk = loop(i, product(sizes), tir.IfThenElse(test, found, None))
            return seq(tir.AllocBuffer(pos, "alloc_local"), set0(pos, E.idx(0)), walk)

        outs = [("nonzero", (E.idx(rows), size), "int64", False)]
        return kb.extern("nonzero", outs, [x], body)[0]

    out_sinfo = tensor_sinfo((E.idx(rows), n), "int64")
    return ctx.call_te("nonzero", build, args=[x_arg], out_sinfo=out_sinfo)


def _slice_start(index: tir.PrimExpr, extent: tir.PrimExpr, stride: tir.PrimExpr) -> tir.PrimExpr:
    """TVM's canonical begin (or end) of a slice along an axis of `extent`."""
    zero, one = E.idx(0), E.idx(1)
    backward = E.binary("lt", stride, zero)
    lo = E.select(backward, E.idx(-1), zero)
    hi = E.select(backward, E.sub(extent, one), extent)
    index = E.select(E.binary("lt", index, zero), E.add(index, extent), index)
    return E.minimum(E.maximum(index, lo), hi)


def _slice_length(
    begin: tir.PrimExpr, end: tir.PrimExpr, stride: tir.PrimExpr, extent: tir.PrimExpr
) -> tir.PrimExpr:
    """`len(range(begin', end', stride))`: ceildiv of the span by the step, at least 0."""
    b, e = _slice_start(begin, extent, stride), _slice_start(end, extent, stride)
    backward = E.binary("lt", stride, E.idx(0))
    span = E.select(backward, E.sub(b, e), E.sub(e, b))
    step = E.select(backward, E.mul(stride, E.idx(-1)), stride)
    ceil = E.floordiv(E.sub(E.add(span, step), E.idx(1)), step)
    return E.maximum(ceil, E.idx(0))


ZERO_STRIDE = "R.dynamic_strided_slice: strides must not be zero, axis"


@register_legalize("relax.dynamic_strided_slice")
def legalize_dynamic_strided_slice(ctx: LegalizeCtx) -> relax.Expr:
    shape = getattr(ctx.arg_sinfo[0], "shape", None)
    if not isinstance(shape, tuple):
        raise LegalizeUnsupported("dynamic_strided_slice of a tensor of unknown shape")
    ndim = len(shape)

    def entry(t: te.Tensor, d: int) -> tir.PrimExpr:
        return E.cast(t.load([E.idx(d)]), E.INDEX)

    def shape_func(
        kb: te.KernelBuilder, x: te.Tensor, b: te.Tensor, e: te.Tensor, s: te.Tensor
    ) -> te.Tensor:
        # The bounds' lengths are asserted when not known here; then one statement
        # per axis (its extent is known here), each asserting its stride first: a
        # zero stride would divide by zero.
        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            _, begin, end, strides = (te.Tensor(buf) for buf in ins)
            stmts = [
                tir.AssertStmt(
                    E.binary("eq", t.shape[0], E.idx(ndim)),
                    "RuntimeError",
                    (f"R.dynamic_strided_slice: {name} needs {ndim} entries, one per axis",),
                )
                for name, t in (("begin", begin), ("end", end), ("strides", strides))
                if E.value_of(t.shape[0]) != ndim
            ]
            for d in range(ndim):
                stride = entry(strides, d)
                nonzero = E.binary("ne", stride, E.idx(0))
                stmts.append(tir.AssertStmt(nonzero, "RuntimeError", (f"{ZERO_STRIDE} {d}",)))
                length = _slice_length(entry(begin, d), entry(end, d), stride, x.shape[d])
                stmts.append(tir.BufferStore(outs[0], length, (E.idx(d),)))
            return seq(*stmts) if stmts else tir.Evaluate(tir.IntImm("int32", 0))

        outs = [("T_shape_func_strided_slice_dynamic", (E.idx(ndim),), E.INDEX, False)]
        return kb.extern("shape_func", outs, [x, b, e, s], body)[0]

    lengths = ctx.emit(
        ctx.call_te(
            "shape_func",
            shape_func,
            out_sinfo=tensor_sinfo((E.idx(ndim),), E.INDEX),
            kind=OpPatternKind.kOpaque,
        )
    )
    dims = ctx.emit_shape(lengths, ["s"] * ndim)

    def build(
        kb: te.KernelBuilder, x: te.Tensor, b: te.Tensor, e: te.Tensor, s: te.Tensor
    ) -> te.Tensor:
        out_shape = [tir.Var("s", E.INDEX) for _ in range(ndim)]

        def body(*ax: tir.Var) -> tir.PrimExpr:
            at = [
                E.add(_slice_start(entry(b, d), x.shape[d], entry(s, d)), E.mul(a, entry(s, d)))
                for d, a in enumerate(ax)
            ]
            return x.load(at)

        return kb.compute(out_shape, body, "T_strided_slice_dynamic")

    out_sinfo = tensor_sinfo(dims, ctx.out_dtype())
    return ctx.call_te("dynamic_strided_slice", build, out_sinfo=out_sinfo)
