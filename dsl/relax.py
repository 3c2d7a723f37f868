"""Relax: the graph level. Struct info, expressions, bindings and `Function`.

Shapes inside struct info are TIR `PrimExpr`s (int64), so symbolic dimensions
are ordinary TIR vars shared between a function's signature and its body.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tvmlite.diagnostics import Span
from tvmlite.dsl import tir
from tvmlite.dsl.comments import Comments
from tvmlite.dsl.printable import Printable

SPAN = field(default=None, compare=False, repr=False)
# what the user wrote around the node's lines (dsl/comments.py); never compared
COMMENTS = field(default=None, compare=False, repr=False)


# ---------------------------------------------------------------- struct info


@dataclass(frozen=True, slots=True, eq=False)
class StructInfo:
    """Base of struct info (the static type-and-shape of a Relax value)."""


@dataclass(frozen=True, slots=True)
class ObjectStructInfo(StructInfo):
    """Anything (`R.Object` classic, `R.Any` 0.27)."""

    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class StringStructInfo(ObjectStructInfo):
    """A string (`R.str("...")`): `I.StringType()` in 0.27, an object to everything
    that does not print it."""


@dataclass(frozen=True, slots=True)
class PrimStructInfo(StructInfo):
    """A scalar: `R.Prim("int64")` / `T.int64`; `value` when known (`R.Prim(value=n)`)."""

    dtype: str
    value: tir.PrimExpr | None = None
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class ShapeStructInfo(StructInfo):
    """`R.Shape([2, n])` (values known) or `R.Shape(ndim=k)`; ndim -1 = unknown."""

    values: tuple[tir.PrimExpr, ...] | None = None
    ndim: int = -1
    span: Span | None = SPAN

    def __post_init__(self) -> None:
        if self.values is not None:
            check_dims(self.values, self.span, "relax.ShapeStructInfo.values")


@dataclass(frozen=True, slots=True)
class TensorStructInfo(StructInfo):
    """`R.Tensor((2, n), dtype="float32")`. `shape` None = unknown (then `ndim`,
    -1 = unknown); a `Var` shape is a shape-typed Relax var. dtype "void" = unknown."""

    shape: tuple[tir.PrimExpr, ...] | Var | None = None
    dtype: str = "void"
    ndim: int = -1
    vdevice: str | None = None
    span: Span | None = SPAN

    def __post_init__(self) -> None:
        if isinstance(self.shape, tuple):
            check_dims(self.shape, self.span, "relax.TensorStructInfo.shape")


@dataclass(frozen=True, slots=True)
class DTensorStructInfo(TensorStructInfo):
    """`R.DTensor((128, 128), "float32", "mesh[0]", "S[0], R")`: a tensor of global
    shape `shape` distributed over a device mesh of the module's global infos,
    placed by `placement` (one "R" replica or "S[axis]" shard per mesh axis). The
    mesh and placement are kept as written; tvmlite builds for one CPU and refuses
    them there."""

    device_mesh: str = ""
    placement: str = ""


def check_dims(dims: tuple[tir.PrimExpr, ...], span: Span | None, where: str) -> None:
    """Raise at the first entry of a shape that `tir.dim_problem` refuses. A negative
    constant is kept, as TVM keeps one (`R.shape_to_tensor` of a shape of unknown
    rank is `R.Tensor((-1,))`); `lower`/`build` refuse it in a tensor's shape."""
    for k, dim in enumerate(dims):
        problem = tir.dim_problem(dim)
        if problem is not None:
            raise tir.invalid(problem, dim.span or span, f"{where}[{k}]")


@dataclass(frozen=True, slots=True)
class TupleStructInfo(StructInfo):
    fields: tuple[StructInfo, ...]
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class FuncStructInfo(StructInfo):
    """`R.Callable((params...), ret, purity)`; params None = opaque callable."""

    params: tuple[StructInfo, ...] | None
    ret: StructInfo
    purity: bool = True
    span: Span | None = SPAN


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True, eq=False)
class Expr:
    """Base of Relax expressions."""


@dataclass(frozen=True, slots=True, eq=False)
class Var(Expr):
    name: str
    struct_info: StructInfo
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True, eq=False)
class DataflowVar(Var):
    """A var local to a dataflow block (not listed in `R.output`)."""


@dataclass(frozen=True, slots=True)
class GlobalVar(Expr):
    """A module-level function name (global: equal when the names are)."""

    name: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Op(Expr):
    """A registered operator, named as in TVM (`relax.add`, `relax.nn.conv2d`)."""

    name: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class ExternFunc(Expr):
    """`R.ExternFunc("symbol")`, or the symbol string of a packed call. `struct_info`:
    the function type a module-level extern declares (`R.ExternFunc("f", R.Callable(...))`);
    None is TVM's default, an impure callable of any arguments returning an object."""

    global_symbol: str
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS
    struct_info: StructInfo | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Constant(Expr):
    """A tensor constant. Scalars print as `R.const(v, "dtype")`; larger ones live in
    the module's metadata table. Compared by dtype, shape, bytes and struct info.
    `struct_info` is set only for a distributed constant (`R.dist.const(v,
    R.DTensor(...))`); otherwise the data's tensor is the constant's struct info.

    The data is held, not copied (a model's weights may be a memory map of their
    file): it must not be changed while the constant is in use."""

    data: np.ndarray
    span: Span | None = SPAN
    struct_info: StructInfo | None = None
    _digest: bytes | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def digest(self) -> bytes:
        """SHA-256 of the dtype, shape and bytes, computed once: comparing and
        hashing weights then reads them once, not once per comparison."""
        if self._digest is None:
            object.__setattr__(self, "_digest", array_digest(self.data))
        return self._digest  # type: ignore[return-value]

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Constant)
            and self.data.dtype == other.data.dtype
            and self.data.shape == other.data.shape
            and self.digest == other.digest
            and self.struct_info == other.struct_info
        )

    def __hash__(self) -> int:
        return hash(self.digest)


def array_digest(data: np.ndarray) -> bytes:
    """SHA-256 of an array's dtype, shape and bytes (read in place when it is
    contiguous)."""
    digest = hashlib.sha256(f"{data.dtype.str}{data.shape}".encode())
    contiguous = data if data.flags.c_contiguous else np.ascontiguousarray(data)
    digest.update(memoryview(contiguous.reshape(-1).view(np.uint8)))
    return digest.digest()


@dataclass(frozen=True, slots=True)
class Tuple(Expr):
    fields: tuple[Expr, ...]
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class TupleGetItem(Expr):
    tuple_value: Expr
    index: int
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class ShapeExpr(Expr):
    """`R.shape([2, n])`."""

    values: tuple[tir.PrimExpr, ...]
    span: Span | None = SPAN

    def __post_init__(self) -> None:
        check_dims(self.values, self.span, "relax.ShapeExpr.values")


@dataclass(frozen=True, slots=True)
class PrimValue(Expr):
    """A TIR scalar used as a Relax value (`R.prim_value(4)` / bare `T.int64(4)`)."""

    value: tir.PrimExpr
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class StringImm(Expr):
    """`R.str("...")`."""

    value: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class DataTypeImm(Expr):
    """`R.dtype("float16")`."""

    value: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """A call of an `Op`, a `GlobalVar`, an `ExternFunc` or a var holding a function.

    `attrs` holds the operator's attributes in schema order (every field, defaults
    included, as the registry lists them). `sinfo_args` is the explicit result
    struct info of calls that need it (`out_sinfo`/`out_ty` of call_tir is stored
    here; `sinfo_args`/`ty_args` of packed calls too)."""

    op: Expr
    args: tuple[Expr, ...]
    attrs: tuple[tuple[str, Any], ...] = ()
    sinfo_args: tuple[StructInfo, ...] = ()
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class If(Expr):
    condition: Expr
    true_branch: SeqExpr
    false_branch: SeqExpr
    span: Span | None = SPAN


# ---------------------------------------------------------------- bindings


@dataclass(frozen=True, slots=True)
class VarBinding:
    var: Var
    value: Expr
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class MatchCast:
    """`x = R.match_cast(value, sinfo)`: checks `value` against `struct_info` and
    binds any symbolic dims it introduces."""

    var: Var
    value: Expr
    struct_info: StructInfo
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


Binding = VarBinding | MatchCast


@dataclass(frozen=True, slots=True)
class BindingBlock:
    bindings: tuple[Binding, ...]
    is_dataflow: bool = False
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class SeqExpr(Expr):
    blocks: tuple[BindingBlock, ...]
    body: Expr
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True, eq=False, repr=False)  # Printable's one-line repr
class Function(Expr, Printable):
    """A graph function. `attrs` holds `R.func_attr` entries plus `global_symbol`
    for public functions; `is_pure` False prints `pure=False`. `dialect` is the
    spelling of the text a lone function was parsed from (a module keeps its own):
    never compared."""

    params: tuple[Var, ...]
    body: SeqExpr
    ret_struct_info: StructInfo
    is_pure: bool = True
    attrs: tuple[tuple[str, Any], ...] = ()
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS
    dialect: str | None = field(default=None, compare=False, repr=False)

    def attr(self, key: str, default: Any = None) -> Any:
        return dict(self.attrs).get(key, default)

    __repr__ = Printable.__repr__  # not Expr's field dump, which comes first in the MRO
