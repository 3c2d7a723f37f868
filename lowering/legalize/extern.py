"""Helpers for kernels that TOPI writes with the IR builder (`te.extern`):
flat element positions, loops and local scalars, built as TVM prints them.

The IR builder addresses every buffer through a flat pointer; when TVM turns
the extern into a prim function the flat index of an N-d buffer becomes
`(i // stride0, i % stride0 // stride1, ..., i % last)`. Building through
these helpers keeps that form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import OpPatternKind, sinfo_of
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported

if TYPE_CHECKING:
    from tvmlite.lowering.legalize import te


Size = int | tir.PrimExpr  # a dim: an int, or the expression of a symbolic one


def static_dims(shape: Sequence[tir.PrimExpr], what: str) -> list[int]:
    """`shape` as Python ints; IR-builder kernels that need known extents."""
    found = dims(shape)
    if not all(isinstance(d, int) for d in found):
        raise LegalizeUnsupported(f"{what} with a symbolic shape")
    return found  # type: ignore[return-value]


def dims(shape: Sequence[tir.PrimExpr]) -> list[Size]:
    """`shape` as ints where constant, expressions where symbolic."""
    out: list[Size] = []
    for d in shape:
        value = E.value_of(d)
        out.append(value if isinstance(value, int) else d)
    return out


def times(a: Size, b: Size) -> Size:
    """`a * b`: an int when both are."""
    return a * b if isinstance(a, int) and isinstance(b, int) else E.mul(a, b)


def product(sizes: Sequence[Size]) -> Size:
    out: Size = 1
    for d in sizes:
        out = times(out, d)
    return out


def unflatten(buf: tir.Buffer, flat: tir.PrimExpr) -> list[tir.PrimExpr]:
    """The N-d indices of flat position `flat` in `buf`."""
    sizes = dims(buf.shape)
    if len(sizes) == 1:
        return [flat]
    strides = [product(sizes[d + 1 :]) for d in range(len(sizes))]
    out = [E.floordiv(flat, strides[0])]
    for d in range(1, len(sizes) - 1):
        out.append(E.floordiv(E.floormod(flat, strides[d - 1]), strides[d]))
    out.append(E.floormod(flat, sizes[-1]))
    return out


def load(buf: tir.Buffer, flat: tir.PrimExpr) -> tir.BufferLoad:
    return tir.BufferLoad(buf, tuple(unflatten(buf, flat)), buf.dtype)


def store(buf: tir.Buffer, value: tir.PrimExpr, flat: tir.PrimExpr) -> tir.BufferStore:
    return tir.BufferStore(buf, value, tuple(unflatten(buf, flat)))


def loop(
    var: tir.Var, extent: int | tir.PrimExpr, body: tir.Stmt, kind: str = tir.SERIAL
) -> tir.For:
    return tir.For(var, E.idx(0), E.idx(extent), kind, body)


def index_var(name: str = "v") -> tir.Var:
    return tir.Var(name, E.INDEX)


def local_scalar(name: str, dtype: str) -> tir.Buffer:
    """A one-element local buffer (`ib.allocate(dtype, (1,), scope="local")`)."""
    data = tir.Var(name, "handle", (dtype, "local"))
    return tir.Buffer(name, data, dtype, (E.idx(1),), scope="local")


def at0(buf: tir.Buffer) -> tir.BufferLoad:
    return tir.BufferLoad(buf, (E.idx(0),), buf.dtype)


def set0(buf: tir.Buffer, value: tir.PrimExpr) -> tir.BufferStore:
    return tir.BufferStore(buf, value, (E.idx(0),))


def seq(*stmts: tir.Stmt) -> tir.Stmt:
    return stmts[0] if len(stmts) == 1 else tir.SeqStmt(tuple(stmts))


def in_range(index: tir.PrimExpr, extent: Size) -> tir.PrimExpr:
    """`0 <= index < extent`, in `index`'s dtype."""
    lo = E.binary("le", E.const(0, index.dtype), index)
    return E.logical_and(lo, E.binary("lt", index, E.cast(E.idx(extent), index.dtype)))


def index_check(op: str, axis: int, index: tir.PrimExpr, extent: Size) -> tir.AssertStmt:
    """The assert tvmlite puts before a store or load at a data-dependent index
    (TVM does not check; an out-of-range index would write or read out of bounds):
    `R.<op>: index out of range for axis <axis>`. The kind is RuntimeError, the one
    the classic `assert cond, "msg"` form prints and parses back as."""
    message = f"R.{op}: {INDEX_CHECK_TEXT} {axis}"
    return tir.AssertStmt(in_range(index, extent), "RuntimeError", (message,))


INDEX_CHECK_TEXT = "index out of range for axis"


def is_index_check(s: tir.Stmt) -> bool:
    """Whether `s` is an assert `index_check` made (a tvmlite addition TVM lacks)."""
    return (
        isinstance(s, tir.AssertStmt) and len(s.message) == 1 and INDEX_CHECK_TEXT in s.message[0]
    )


def checked_indices(
    ctx: LegalizeCtx, op: str, arg: relax.Expr, axes: Sequence[tuple[int, int | None]]
) -> relax.Expr:
    """`arg` (an index tensor a gather reads through) passed through a separate
    `<op>_index_check` kernel, bound before the gather: it copies the indices and
    asserts each is in range (`index_check`), so the gather's own TE kernel stays
    as TVM builds it and runs only after the check. The element at flat position
    `p` is checked against `axes[p % len(axes)]` ((axis, extent) pairs; gather_nd
    cycles through the tuple's axes). With a symbolic shape or extent the check is
    left out and `arg` is returned as it is (the gather then reads unchecked, as
    in TVM)."""
    extents = [e for _, e in axes]
    sinfo = sinfo_of(arg)
    shape = getattr(sinfo, "shape", None)
    if not isinstance(shape, tuple) or not all(isinstance(e, int) for e in extents):
        return arg
    dims = [E.value_of(d) for d in shape]
    if not all(isinstance(d, int) for d in dims):
        return arg
    name = f"{op}_index_check"

    def build(kb: te.KernelBuilder, idx: te.Tensor) -> te.Tensor:
        k = len(axes)
        count = product(dims) // k  # type: ignore[arg-type]

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            (src,), (dst,) = ins, outs
            i = index_var("i")
            stmts: list[tir.Stmt] = []
            for j, (axis, extent) in enumerate(axes):
                flat = E.add(E.mul(i, k), j) if k > 1 else i
                at = tuple(unflatten(src, flat)) if dims else ()
                value = tir.BufferLoad(src, at, src.dtype)
                stmts.append(index_check(op, axis, value, extent))  # type: ignore[arg-type]
                stmts.append(tir.BufferStore(dst, value, at))
            return loop(i, count, seq(*stmts))

        outs = [("out_buf", idx.shape, idx.dtype, False)]
        return kb.extern(name, outs, [idx], body)[0]

    return ctx.emit(
        ctx.call_te(name, build, args=[arg], out_sinfo=sinfo, kind=OpPatternKind.kOpaque)
    )


def pragma_seq() -> tir.AttrStmt:
    """`T.attr(0, "pragma_scope", "seq")` in its flat form (scoping what follows)."""
    return tir.AttrStmt(tir.IntImm("int32", 0), "pragma_scope", tir.StringImm("seq"), None)


def reduce_value(mode: str, old: tir.PrimExpr, new: tir.PrimExpr) -> tir.PrimExpr:
    """The stored value of a scatter with reduction `mode`."""
    if mode == "update":
        return new
    if mode == "add":
        return E.add(old, new)
    if mode == "mul":
        return E.mul(old, new)
    if mode == "min":
        return E.minimum(old, new)
    if mode == "max":
        return E.maximum(old, new)
    raise LegalizeUnsupported(f"scatter reduction {mode!r}")
