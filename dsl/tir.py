"""TIR: the prim level. Scalar expressions, buffers, statements and `PrimFunc`.

Value nodes compare by value; `Var` and `Buffer` are identities (two vars named
`i` are different). Every node has an optional `span` that never takes part in
comparison; statements and functions also keep the user's comments, which never
do either. Nodes carry data only: the parser, printer, verifier and lowering
dispatch on the class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tvmlite.diagnostics import ParseError, Span, TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl.comments import Comments
from tvmlite.dsl.printable import Printable
from tvmlite.dsl.tir_layout import DEFAULT_LAYOUT, DefaultLayout, Layout

SPAN = field(default=None, compare=False, repr=False)
# what the user wrote around the node's lines (dsl/comments.py); never compared
COMMENTS = field(default=None, compare=False, repr=False)


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True, eq=False)
class PrimExpr:
    """Base of scalar (and vector) expressions; every one has a `dtype`."""


@dataclass(frozen=True, slots=True, eq=False)
class Var(PrimExpr):
    """A scalar variable. `pointee` is set for handle vars that point at typed data
    (`T.handle("float32", "global")`): (element dtype, storage scope)."""

    name: str
    dtype: str
    pointee: tuple[str, str] | None = None
    span: Span | None = SPAN


# The pointee of 0.27's `T.TensorMap()` vars: a CUDA tensor-map descriptor (TVM's
# PointerType(TensorMapType)), which only GPU code reads.
TENSOR_MAP = ("tensormap", "global")


def invalid(problem: str, span: Span | None, built_as: str) -> TVMLiteError:
    """The error for a node that breaks a constructor's invariant: located when the
    node came from text (it has a span), else naming the constructor and parameter."""
    if span is not None:
        return ParseError(problem, span)
    return TVMLiteError(f"{built_as}: {problem}")


def _check_immediate(kind: str, dtype: str, value: float, span: Span | None) -> None:
    """An immediate must fit its dtype, as TVM's IntImm/FloatImm constructors check."""
    problem = dt.range_error(dtype, value)
    if problem is not None:
        raise invalid(problem, span, f"tir.{kind}(dtype={dtype!r}, value=...)")


@dataclass(frozen=True, slots=True)
class IntImm(PrimExpr):
    """`value` fits `dtype` (checked on construction)."""

    dtype: str
    value: int
    span: Span | None = SPAN

    def __post_init__(self) -> None:
        _check_immediate("IntImm", self.dtype, self.value, self.span)


@dataclass(frozen=True, slots=True)
class FloatImm(PrimExpr):
    """`value` is a Python float (inf and nan allowed); compared bitwise via repr so
    that nan == nan and -0.0 != 0.0 structurally."""

    dtype: str
    value: float
    span: Span | None = SPAN

    def __post_init__(self) -> None:
        _check_immediate("FloatImm", self.dtype, self.value, self.span)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FloatImm)
            and self.dtype == other.dtype
            and repr(self.value) == repr(other.value)
        )

    def __hash__(self) -> int:
        return hash((self.dtype, repr(self.value)))


@dataclass(frozen=True, slots=True)
class StringImm(PrimExpr):
    value: str
    dtype: str = "handle"
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Cast(PrimExpr):
    dtype: str
    value: PrimExpr
    span: Span | None = SPAN


# Binary operator kinds. Arithmetic keeps the operand dtype; comparisons and
# logic give bool (with the operands' lanes).
ARITH_OPS = ("add", "sub", "mul", "div", "mod", "floordiv", "floormod", "min", "max")
COMPARE_OPS = ("eq", "ne", "lt", "le", "gt", "ge")
LOGIC_OPS = ("and", "or")


@dataclass(frozen=True, slots=True)
class BinaryOp(PrimExpr):
    """`kind` is one of ARITH_OPS, COMPARE_OPS or LOGIC_OPS. `div` is TIR's Div
    (truncating on integers, true division on floats); `mod` is truncmod."""

    kind: str
    a: PrimExpr
    b: PrimExpr
    dtype: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Not(PrimExpr):
    a: PrimExpr
    dtype: str = "bool"
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Select(PrimExpr):
    """Both branches evaluated; `T.if_then_else` is a `Call` instead."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Ramp(PrimExpr):
    base: PrimExpr
    stride: PrimExpr
    lanes: int
    dtype: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Shuffle(PrimExpr):
    """`T.Shuffle([a, b], [0, 1])`: the lanes of the concatenated `vectors` picked by
    `indices`, one result lane per index."""

    vectors: tuple[PrimExpr, ...]
    indices: tuple[PrimExpr, ...]
    dtype: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Broadcast(PrimExpr):
    value: PrimExpr
    lanes: int
    dtype: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Let(PrimExpr):
    """`T.Let(body, where={var: value})`."""

    var: Var
    value: PrimExpr
    body: PrimExpr
    dtype: str
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class Call(PrimExpr):
    """An intrinsic or extern call. `op` is the intrinsic's name as written after
    `T.` (`exp`, `if_then_else`, `call_extern`, `max_value`, `reinterpret`, ...).
    `args` are expressions; for tirx tile operators also buffer regions, Python bools
    and lists (`T.tile.gemm(C[0:8, 0:8], A[0:8, 0:4], B[0:4, 0:8], C[0:8, 0:8], False,
    False, T.float32(1.0), T.float32(0.0))`, `T.tile.sum(B[0:8], A[0:8, 0:4], [1],
    False)`), and `kwargs` their keyword options (`workspace={"C": C_sbuf}`), attribute
    values (see AttrDict). An `op` of `GLOBAL_CALL + name` calls the module's prim
    function `name` (`Module.add(a, b)`), typed by its return annotation. `pointee` is
    what a handle result points at, when its type says (0.27's
    `T.reinterpret(T.handle("uint64", "shared").ty, x)`: (element dtype, scope))."""

    dtype: str
    op: str
    args: tuple[PrimExpr, ...]
    span: Span | None = SPAN
    kwargs: tuple[tuple[str, Any], ...] = ()
    pointee: tuple[str, str] | None = None


GLOBAL_CALL = "@"  # prefix of the op of a call to a module function


@dataclass(frozen=True, slots=True)
class BufferLoad(PrimExpr):
    """`indices` are integers (checked on construction)."""

    buffer: Buffer
    indices: tuple[PrimExpr, ...]
    dtype: str
    span: Span | None = SPAN

    def __post_init__(self) -> None:
        _check_indices(self.buffer, self.indices, self.span, "BufferLoad")


# ---------------------------------------------------------------- buffers


@dataclass(frozen=True, slots=True, eq=False)
class Buffer:
    """A typed multi-dimensional view over `data` (a handle var).

    `strides` is empty for a compact row-major buffer; `elem_offset` is None for
    offset 0 and may be a var when the buffer is matched against a region.
    """

    name: str
    data: Var
    dtype: str
    shape: tuple[PrimExpr, ...]
    strides: tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr | None = None
    scope: str = "global"
    align: int = 0
    offset_factor: int = 0
    span: Span | None = SPAN
    layout: Layout | DefaultLayout | None = DEFAULT_LAYOUT  # tirx (dsl/tir_layout.py)
    allocated_addr: tuple[PrimExpr, ...] = ()  # tirx: addresses fixed by an allocator

    def __post_init__(self) -> None:
        for k, dim in enumerate(self.shape):
            problem = dim_problem(dim)
            if problem is not None:
                raise invalid(
                    problem, dim.span or self.span, f"tir.Buffer({self.name!r}).shape[{k}]"
                )


def is_scalar_buffer(buffer: Buffer) -> bool:
    """A buffer of shape `(1,)` (int32), of any dtype (vectors too, as in TVM 0.27) and
    no alignment of its own: 0.27 reads and writes its one element by the buffer's bare
    name (`acc = acc + A[i]`), and `acc: T.float32` allocates a local one."""
    return (
        buffer.align in (0, 64)
        and len(buffer.shape) == 1
        and isinstance(buffer.shape[0], IntImm)
        and buffer.shape[0].dtype == "int32"
        and buffer.shape[0].value == 1
    )


def dim_problem(dim: PrimExpr) -> str | None:
    """Why `dim` cannot be a shape dimension: not a scalar integer. A negative constant
    is kept as written (TVM prints such Relax shapes and TIR buffers); `lower` and
    `build` refuse it."""
    if dim.dtype not in _DIM_DTYPES:
        return f"a shape dimension must be an integer, got {dim.dtype}"
    return None


_DIM_DTYPES = frozenset(f"{code}{bits}" for code in ("int", "uint") for bits in (8, 16, 32, 64))


def is_index_dtype(dtype: str) -> bool:
    """Whether a value of `dtype` can index a buffer: a scalar or vector integer
    (bool too, as in TVM); a float index would reach the code generator."""
    return dtype in _DIM_DTYPES or dt.is_integer_like(dt.element_of(dtype))


def _check_indices(
    buffer: Buffer, indices: tuple[PrimExpr, ...], span: Span | None, kind: str
) -> None:
    for k, index in enumerate(indices):
        if not is_index_dtype(index.dtype):
            problem = f"a buffer index must be an integer, got {index.dtype}"
            raise invalid(problem, index.span or span, f"tir.{kind}({buffer.name!r}).indices[{k}]")


@dataclass(frozen=True, slots=True)
class Range:
    """`[min, min + extent)`."""

    min: PrimExpr
    extent: PrimExpr
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class BufferRegion:
    buffer: Buffer
    region: tuple[Range, ...]
    span: Span | None = SPAN


@dataclass(frozen=True, slots=True)
class MatchBufferRegion:
    """`B = T.match_buffer(A[0:4, i], (4,))` inside a block."""

    buffer: Buffer
    source: BufferRegion
    span: Span | None = SPAN


# Iter-var kinds of blocks and loops.
SPATIAL, REDUCE, SCAN, OPAQUE, THREAD = "spatial", "reduce", "scan", "opaque", "thread"


@dataclass(frozen=True, slots=True)
class IterVar:
    var: Var
    dom: Range
    kind: str
    thread_tag: str = ""
    span: Span | None = SPAN


# ---------------------------------------------------------------- attribute values


@dataclass(frozen=True, slots=True)
class AttrDict:
    """A dict literal nested in an attribute value (`{"op_attrs": {"axis": 0}}`),
    kept apart from a list of pairs so that it prints back as a dict. Iterates over
    its (key, value) pairs, so `dict(value)` reads it."""

    items: tuple[tuple[str, Any], ...]

    def __iter__(self) -> Any:
        return iter(self.items)


@dataclass(frozen=True, slots=True)
class TargetAttr:
    """`T.target({...})` as an attribute value: the target's configuration as
    printed (kind, keys, host, ...); tvmlite builds for its own target and only
    carries this one. TVM's API also takes a target by name, `T.target("cuda",
    host="llvm")` (`config` the name, `host` the host's name or configuration); TVM
    prints the configuration its registry fills in, which tvmlite does not know, so
    such a target prints as written."""

    config: AttrDict | str
    host: AttrDict | str | None = None


@dataclass(frozen=True, slots=True)
class CommReducer:
    """`T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)])`, the node of a
    "reduce_scope" attribute: `result` combines `lhs` with `rhs` (one var each per
    reduced value; the lambda defines them) and `identity` is its neutral value."""

    lhs: tuple[Var, ...]
    rhs: tuple[Var, ...]
    result: tuple[PrimExpr, ...]
    identity: tuple[PrimExpr, ...]


# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True, eq=False)
class Stmt:
    """Base of statements."""


@dataclass(frozen=True, slots=True)
class BufferStore(Stmt):
    """`indices` are integers (checked on construction)."""

    buffer: Buffer
    value: PrimExpr
    indices: tuple[PrimExpr, ...]
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS

    def __post_init__(self) -> None:
        _check_indices(self.buffer, self.indices, self.span, "BufferStore")


@dataclass(frozen=True, slots=True)
class LetStmt(Stmt):
    """Immutable binding scoped over `body` (classic `x: T.f32 = v`, 0.27 `T.let[...]`)."""

    var: Var
    value: PrimExpr
    body: Stmt
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class Bind(Stmt):
    """0.27 flat binding (`x: T.float32 = v`, `T.bind(v)`): defines `var` for the
    statements after it in the enclosing sequence."""

    var: Var
    value: PrimExpr
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


# The key of TVM 0.27's `T.hint(...)` directive (an AttrStmt whose node is an AttrDict).
HINT = "tirx_hint"
# `@T.prim_func(persistent=True)`: TVM's attribute (kept under the classic prefix)
PERSISTENT = "tir.persistent_kernel"

# tirx scope-id builtins: (parent scope, scope whose ids are defined), as TVM's ScopeIdDef
SCOPE_IDS = {
    "cluster_id": ("kernel", "cluster"),
    "cta_id": ("kernel", "cta"),
    "cta_id_in_cluster": ("cluster", "cta"),
    "cta_id_in_pair": ("cluster", "cta_pair"),
    "warpgroup_id": ("cta", "warpgroup"),
    "warp_id": ("cta", "warp"),
    "warp_id_in_wg": ("warpgroup", "warp"),
    "lane_id": ("warp", "thread"),
    "thread_id": ("cta", "thread"),
    "thread_id_in_wg": ("warpgroup", "thread"),
}


@dataclass(frozen=True, slots=True)
class ScopeIdDef(Stmt):
    """tirx `bx, by = T.cta_id([8, 4])`: `vars` are the ids of the execution scope
    `kind` (a key of SCOPE_IDS) within its parent, one per extent. `extents` is None
    when deferred (`T.cta_id()`, one var; TVM infers it when lowering), `preferred`
    the optional preferred extents (`T.cta_id_in_cluster([2, 1], preferred=[2, 2])`).
    Flat, as `Bind`: the vars are defined for the rest of the enclosing sequence."""

    kind: str
    vars: tuple[Var, ...]
    extents: tuple[PrimExpr, ...] | None
    preferred: tuple[PrimExpr, ...] | None = None
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class AttrStmt(Stmt):
    """`T.attr(node, key, value)`; `body` None for the 0.27 flat form, which scopes
    over the rest of the enclosing sequence."""

    node: Any
    key: str
    value: PrimExpr
    body: Stmt | None
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class AssertStmt(Stmt):
    """`assert cond, "msg"` (classic) / `assert cond, ("Kind", ["part", ...])` (0.27).
    A part may be an integer expression (a tvmlite extension, what checked builds
    use): its value where the assert fails is written into the message."""

    condition: PrimExpr
    error_kind: str
    message: tuple[str | PrimExpr, ...]
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


# Loop kinds, named as after `T.` (`range`/`T.grid` are serial).
SERIAL, PARALLEL, VECTORIZED, UNROLLED, THREAD_BINDING = (
    "serial",
    "parallel",
    "vectorized",
    "unroll",
    "thread_binding",
)


@dataclass(frozen=True, slots=True)
class For(Stmt):
    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: str
    body: Stmt
    thread: str = ""
    annotations: tuple[tuple[str, Any], ...] = ()
    step: PrimExpr | None = None
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS

    def __post_init__(self) -> None:
        # Bounds wider than the loop var would be truncated to it (an int32 var with
        # extent 2**31 never runs), so they must share its dtype, as in TVM.
        want = self.loop_var.dtype
        if want not in _DIM_DTYPES:
            problem = f"a loop variable must be an integer, got {want}"
            raise invalid(
                problem, self.loop_var.span or self.span, f"tir.For({self.loop_var.name!r})"
            )
        for name in ("min", "extent", "step"):
            bound = getattr(self, name)
            if bound is not None and bound.dtype != want:
                problem = f"the loop bound {name} is {bound.dtype}, its var is {want}"
                where = f"tir.For({self.loop_var.name!r}).{name}"
                raise invalid(problem, bound.span or self.span, where)


@dataclass(frozen=True, slots=True)
class While(Stmt):
    condition: PrimExpr
    body: Stmt
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class Break(Stmt):
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class Continue(Stmt):
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class SeqStmt(Stmt):
    seq: tuple[Stmt, ...]
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class Evaluate(Stmt):
    value: PrimExpr
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class Return(Stmt):
    value: PrimExpr
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class AllocBuffer(Stmt):
    """Flat statement-level allocation, scoping over the rest of the sequence.

    `form` records the spelling: `alloc_buffer` (0.27 statement form), `alloc_local`,
    `alloc_shared`, `decl_buffer` (a view, no storage of its own unless `data` is
    fresh). `annotations` are TVM's (`{"buffer_data_alignment": 64}`), kept as data.
    `source` is the view a `decl_buffer` is declared over when that is itself a view
    (`C = B.local()` with `B = A.view(...)`): TVM 0.27 keeps such chains, and the
    printer names the view rather than the buffer owning the data. Nothing lowers
    through it: `buffer.data` is the storage either way.
    `data_value` is a `decl_buffer` over the pointer an expression computes
    (`data=T.address_of(A[4])`): `buffer.data` is a fresh var bound to it here."""

    buffer: Buffer
    form: str = "alloc_buffer"
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS
    annotations: tuple[tuple[str, Any], ...] = ()
    source: Buffer | None = None
    data_value: PrimExpr | None = None


@dataclass(frozen=True, slots=True)
class Block(Stmt):
    name: str
    iter_vars: tuple[IterVar, ...]
    reads: tuple[BufferRegion, ...]
    writes: tuple[BufferRegion, ...]
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: tuple[Buffer, ...] = ()
    match_buffers: tuple[MatchBufferRegion, ...] = ()
    annotations: tuple[tuple[str, Any], ...] = ()
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(frozen=True, slots=True)
class BlockRealize(Stmt):
    """A block instance: `iter_values` bind the block's iter vars; `predicate` is
    `T.where`."""

    iter_values: tuple[PrimExpr, ...]
    predicate: PrimExpr
    block: Block
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


# ---------------------------------------------------------------- functions


@dataclass(frozen=True, slots=True, eq=False, repr=False)  # Printable's one-line repr
class PrimFunc(Printable):
    """`params` are scalar or handle vars; `buffer_map` maps a handle param to the
    buffer it is viewed as (`T.Buffer` annotations and `T.match_buffer`). `attrs`
    keys use the classic `tir.` prefix (`tir.noalias`); `global_symbol` is present
    for public functions. `s_tir` is the 0.27 flag for schedulable (block) TIR.
    `ret_type` is a dtype or None for void. `dialect` is the spelling of the text a lone
    function was parsed from (a module keeps its own): never compared."""

    params: tuple[Var, ...]
    buffer_map: tuple[tuple[Var, Buffer], ...]
    body: Stmt
    ret_type: str | None = None
    attrs: tuple[tuple[str, Any], ...] = ()
    s_tir: bool = False
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS
    dialect: str | None = field(default=None, compare=False, repr=False)

    def attr(self, key: str, default: Any = None) -> Any:
        return dict(self.attrs).get(key, default)


def seq(stmts: list[Stmt]) -> Stmt:
    """One statement from a list, flattening nested sequences."""
    flat: list[Stmt] = []
    for s in stmts:
        flat.extend(s.seq if isinstance(s, SeqStmt) else (s,))
    return flat[0] if len(flat) == 1 else SeqStmt(tuple(flat))
