"""Relax values as the host code holds them, and struct info flattened into the
leaves that cross the C ABI.

Tuples exist only at compile time: a tuple is its fields, so a nested tuple of
tensors costs nothing at run time and `TupleGetItem` is a lookup. A tensor is a
pointer to its `DLTensor` (shape and data are read from it where needed), a
prim value is an SSA scalar, a shape is a list of int64 SSA values.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from tvmlite.dsl import relax, tir


@dataclass(frozen=True)
class TensorVal:
    """`ptr` points at a DLTensor; `dtype` "void" and `ndim` -1 mean unknown.
    `dims` are the dims as SSA values when the code already has them (checked
    parameters, allocated outputs), so kernel calls need not reload and recheck."""

    ptr: ir.Value
    dtype: str
    ndim: int
    dims: tuple[ir.Value, ...] | None = None
    constant: bool = False  # module data: nothing may write it (R.call_tir_inplace)


@dataclass(frozen=True)
class PrimVal:
    value: ir.Value
    dtype: str


@dataclass(frozen=True)
class ShapeVal:
    dims: tuple[ir.Value, ...]


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


def rebuild(sinfo: relax.StructInfo, flat: list[Val]) -> Val:
    """The inverse of `leaves`: consume `flat` front to back."""
    if isinstance(sinfo, relax.TupleStructInfo):
        return TupleVal(tuple(rebuild(f, flat) for f in sinfo.fields))
    return flat.pop(0)


def tensor_ndim(sinfo: relax.TensorStructInfo) -> int:
    if isinstance(sinfo.shape, tuple):
        return len(sinfo.shape)
    return sinfo.ndim


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
