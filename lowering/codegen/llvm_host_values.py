"""Relax values as the host code holds them, and struct info flattened into the
leaves that cross the C ABI.

Tuples exist only at compile time: a tuple is its fields, so a nested tuple of
tensors costs nothing at run time and `TupleGetItem` is a lookup. A tensor is a
pointer to its `DLTensor` (shape and data are read from it where needed), a
prim value is an SSA scalar, a shape is a list of int64 SSA values.

Where a value lives in memory the host code knows how to reach, it is held as a
reference instead of an SSA value, and loaded where code uses it (`resolve` of
the chunk being written): a parameter (`Arg`), a tensor in a frame slot
(`Slot`), a value homed across a chunk boundary (`Home`). A reference costs no
code until it is used, and kernel steps (`llvm_host_steps.py`) take tensors as
references without loading them at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from tvmlite.dsl import relax, tir


@dataclass(frozen=True)
class Arg:
    """The DLTensor* of flattened argument `index` of the entry."""

    index: int


@dataclass(frozen=True)
class Slot:
    """The DLTensor of the block in frame slot `index` (loaded where used: the
    slot is filled at run time, after the code that refers to it may begin)."""

    index: int


@dataclass(frozen=True, eq=False)
class Home:
    """Word `index` of the spill array, where a value that crossed a chunk
    boundary was stored; read back as `kind`."""

    index: int
    kind: ir.Type


Ref = Arg | Slot | Home


@dataclass(frozen=True)
class TensorVal:
    """`ptr` points at a DLTensor; `dtype` "void" and `ndim` -1 mean unknown.
    `dims` are the dims as SSA values when the code already has them (checked
    parameters, allocated outputs), so kernel calls need not reload and recheck;
    `data` likewise the address of the first element (`data + byte_offset`)."""

    ptr: ir.Value | Ref
    dtype: str
    ndim: int
    dims: tuple[ir.Value | Home, ...] | None = None
    data: ir.Value | Home | None = None


@dataclass(frozen=True)
class PrimVal:
    value: ir.Value | Home
    dtype: str


@dataclass(frozen=True)
class ShapeVal:
    dims: tuple[ir.Value | Home, ...]


@dataclass(frozen=True)
class TupleVal:
    fields: tuple[Val, ...]


Val = TensorVal | PrimVal | ShapeVal | TupleVal
UNIT = TupleVal(())


def val_leaves(val: Val) -> list[Val]:
    if isinstance(val, TupleVal):
        out: list[Val] = []
        for f in val.fields:
            out.extend(val_leaves(f))
        return out
    return [val]


Value = ir.Value | Ref


def map_val(val: Val, fn: Callable[[Value], Value]) -> Val:
    """`val` with `fn` applied to every value it holds (`val` itself when `fn`
    changes none: the common case, and cheap)."""
    if isinstance(val, TupleVal):
        fields = tuple(map_val(f, fn) for f in val.fields)
        return val if _same(fields, val.fields) else TupleVal(fields)
    if isinstance(val, PrimVal):
        value = fn(val.value)
        return val if value is val.value else PrimVal(value, val.dtype)
    if isinstance(val, ShapeVal):
        dims = tuple(fn(d) for d in val.dims)
        return val if _same(dims, val.dims) else ShapeVal(dims)
    ptr = fn(val.ptr)
    dims = None if val.dims is None else tuple(fn(d) for d in val.dims)
    data = None if val.data is None else fn(val.data)
    if ptr is val.ptr and data is val.data and (dims is None or _same(dims, val.dims or ())):
        return val
    return TensorVal(ptr, val.dtype, val.ndim, dims, data)


def _same(a: tuple, b: tuple) -> bool:
    return all(x is y for x, y in zip(a, b, strict=True))


def rebuild(sinfo: relax.StructInfo, flat: list[Val]) -> Val:
    """The inverse of `leaves`: consume `flat` front to back."""
    if isinstance(sinfo, relax.TupleStructInfo):
        return TupleVal(tuple(rebuild(f, flat) for f in sinfo.fields))
    return flat.pop(0)


def tensor_ndim(sinfo: relax.TensorStructInfo) -> int:
    if isinstance(sinfo.shape, tuple):
        return len(sinfo.shape)
    return sinfo.ndim


def known_dims(sinfo: relax.StructInfo) -> list[int] | None:
    """The dims of a tensor type whose shape is all constants (else None)."""
    if not isinstance(sinfo, relax.TensorStructInfo) or not isinstance(sinfo.shape, tuple):
        return None
    if sinfo.dtype == "void" or not all(isinstance(d, tir.IntImm) for d in sinfo.shape):
        return None
    return [d.value for d in sinfo.shape]  # type: ignore[union-attr]


def static_shape(sinfo: relax.TensorStructInfo) -> tuple[tir.PrimExpr, ...] | None:
    return sinfo.shape if isinstance(sinfo.shape, tuple) else None


def shape_text(e: tir.PrimExpr) -> str:
    """A dim as the user wrote it, for messages."""
    if isinstance(e, tir.IntImm):
        return str(e.value)
    if isinstance(e, tir.Var):
        return e.name
    if isinstance(e, tir.Cast):
        return shape_text(e.value)
    if isinstance(e, tir.BinaryOp):
        op = _OPS.get(e.kind)
        if op is None:
            return f"T.{e.kind}({shape_text(e.a)}, {shape_text(e.b)})"
        return f"{shape_text(e.a)} {op} {shape_text(e.b)}"
    return "?"


_OPS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%"}


def tuple_text(dims: list[str]) -> str:
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def free_vars(e: tir.PrimExpr, out: dict[tir.Var, None]) -> None:
    """TIR vars of a shape expression, in first-occurrence order."""
    if isinstance(e, tir.Var):
        out.setdefault(e)
    elif isinstance(e, tir.BinaryOp):
        free_vars(e.a, out)
        free_vars(e.b, out)
    elif isinstance(e, tir.Cast):
        free_vars(e.value, out)
    elif isinstance(e, tir.Select):
        free_vars(e.condition, out)
        free_vars(e.true_value, out)
        free_vars(e.false_value, out)
    elif isinstance(e, tir.Call):
        for a in e.args:
            free_vars(a, out)
