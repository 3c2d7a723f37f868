"""TIR expressions as TVM prints them: literal forms, operator sugar only where
re-parsing rebuilds the identical node, and Python-precedence parentheses.

Each visit returns `(text, precedence)` so that a parent can decide on
parentheses the way TVM's Python doc printer does: a child of lower precedence
is wrapped, and so is a right operand of equal precedence."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.index_map import IndexMap
from tvmlite.dsl.tir_layout import DEFAULT_LAYOUT
from tvmlite.printer.literals import (
    dtype_text,
    float_text,
    is_special,
    special_text,
    string_text,
)
from tvmlite.printer.names import NameTable, dotted_identifier

# Python precedences (higher binds tighter), as in TVM's python_doc_printer.
OR, AND, NOT, CMP, BIT_OR, BIT_XOR, BIT_AND, SHIFT, ADD, MUL, UNARY, ATOM = (
    3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15,
)  # fmt: skip

# kind -> (python operator, precedence, explicit `T.` name used when sugar is unsafe)
SUGAR: dict[str, tuple[str, int, str]] = {
    "add": ("+", ADD, "Add"),
    "sub": ("-", ADD, "Sub"),
    "mul": ("*", MUL, "Mul"),
    "floordiv": ("//", MUL, "FloorDiv"),
    "floormod": ("%", MUL, "FloorMod"),
    "lt": ("<", CMP, "LT"),
    "le": ("<=", CMP, "LE"),
    "gt": (">", CMP, "GT"),
    "ge": (">=", CMP, "GE"),
    "eq": ("==", CMP, "EQ"),
    "ne": ("!=", CMP, "NE"),
    "and": ("and", AND, "And"),
    "or": ("or", OR, "Or"),
}
# Binary kinds that always print as a call.
CALL_FORM = {"mod": "truncmod", "min": "min", "max": "max"}
# Intrinsic calls that TVM prints as Python operators.
BITWISE = {
    "bitwise_and": ("&", BIT_AND),
    "bitwise_or": ("|", BIT_OR),
    "bitwise_xor": ("^", BIT_XOR),
    "shift_left": ("<<", SHIFT),
    "shift_right": (">>", SHIFT),
}
# Intrinsics whose result type is printed as their last argument.
DTYPE_LAST = frozenset({"tvm_struct_get"})
# Intrinsics whose result dtype is printed as their first argument.
DTYPE_FIRST = frozenset(
    {
        "call_extern",
        "call_pure_extern",
        "call_intrin",
        "call_llvm_intrin",
        "call_llvm_pure_intrin",
        "reinterpret",
        "type_annotation",
        "max_value",
        "min_value",
        "infinity",
        "vectorcombine",
        "get_active_lane_mask",
        "masked_load",
        "dp4a",
    }
)


def lanes_expr(lanes: int, dtype: str, index_dtype: str = "int32") -> tir.PrimExpr:
    """The lane count of a vector of `dtype`: `4`, or `T.vscale() * 4` when scalable."""
    count = tir.IntImm(index_dtype, lanes)
    if not dt.is_scalable(dtype):
        return count
    vscale = tir.Call("int32", "vscale", ())
    return tir.BinaryOp("mul", vscale, count, "int32")


def wrap(child: tuple[str, int], parent: int, same: bool = False) -> str:
    """Parenthesize `child` if it binds looser than `parent` (or equally, for
    right operands of left-associative operators)."""
    text, prec = child
    return f"({text})" if prec < parent or (same and prec == parent) else text


def int_const(e: tir.PrimExpr) -> int | None:
    return e.value if isinstance(e, tir.IntImm) else None


def float_const(e: tir.PrimExpr) -> float | None:
    return e.value if isinstance(e, tir.FloatImm) else None


def folds(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
    """Whether TVM's operator function would constant-fold `a <kind> b` (then the
    operator form would not re-parse to the same node)."""
    pa, pb, fa, fb = int_const(a), int_const(b), float_const(a), float_const(b)
    both = (pa is not None and pb is not None) or (fa is not None and fb is not None)
    xa = pa if pa is not None else fa
    xb = pb if pb is not None else fb
    if kind in ("and", "or"):
        return pa is not None or pb is not None
    if kind == "floormod":  # folded on index types; on unsigned ones only two immediates
        if a.dtype in ("int32", "int64"):
            return both or pa == 0 or pb == 1
        return both and a.dtype.startswith("uint")
    if both:
        return True
    if kind == "add":
        return xa == 0 or xb == 0
    if kind == "sub":
        return xb == 0
    if kind == "mul":
        return xa in (0, 1) or xb in (0, 1)
    if kind in ("div", "floordiv"):
        return xa == 0 or xb == 1
    return False


def add_folded(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """`a + b` with TVM's constant folding (slice ends and `(min, max)` domains
    are printed as `min + extent` built this way)."""
    pa, pb = int_const(a), int_const(b)
    if pa is not None and pb is not None:
        return tir.IntImm(a.dtype, pa + pb)
    if pa == 0:
        return b
    if pb == 0:
        return a
    return tir.BinaryOp("add", a, b, a.dtype)


def range_end(start: tir.PrimExpr, extent: tir.PrimExpr) -> tir.PrimExpr:
    """The printed end of a range. An extent kept as `stop - start` (as written,
    not simplified) prints as that `stop`, which re-parses to the same extent."""
    if isinstance(extent, tir.BinaryOp) and extent.kind == "sub" and same_expr(extent.b, start):
        return extent.a
    return add_folded(start, extent)


def mul_folded(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    pa, pb = int_const(a), int_const(b)
    if pa is not None and pb is not None:
        return tir.IntImm(a.dtype, pa * pb)
    if pa == 1:
        return b
    if pb == 1:
        return a
    return tir.BinaryOp("mul", a, b, a.dtype)


def first_as_text(pair: tuple[Any, Any]) -> str:
    return str(pair[0])


def same_expr(a: Any, b: Any) -> bool:
    """Structural equality with vars compared by identity (what TVM's
    ExprDeepEqual does for the `T.axis.remap` check)."""
    if a is b:
        return True
    if isinstance(a, tir.Var | tir.Buffer) or type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, tir.PrimExpr):
        return all(
            same_expr(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__ if f != "span"
        )
    return a == b


def iter_vars_of(e: Any) -> Iterator[tir.Var]:
    """Every Var occurrence in an expression, left to right."""
    if isinstance(e, tir.Var):
        yield e
    elif isinstance(e, tir.BufferLoad):
        for index in e.indices:
            yield from iter_vars_of(index)
    elif isinstance(e, tir.PrimExpr):
        for name in e.__dataclass_fields__:
            child = getattr(e, name)
            if isinstance(child, tir.PrimExpr):
                yield from iter_vars_of(child)
            elif isinstance(child, tuple):
                for item in child:
                    yield from iter_vars_of(item)


def type_text(var: tir.Var) -> str:
    """`T.int32`, `T.handle`, `T.handle("float32", "shared")`."""
    if var.pointee == tir.TENSOR_MAP:
        return "T.TensorMap()"
    if var.pointee is not None:
        elem, scope = var.pointee
        if elem == "void" and scope not in ("", "global"):  # TVM names no void element
            return f"T.handle(storage_scope={string_text(scope)})"
        elem = string_text(dtype_text(elem))
        return f"T.handle({elem}, {string_text(scope)})" if scope else f"T.handle({elem})"
    return f"T.{dtype_text(var.dtype)}"


def declaration_text(var: tir.Var) -> str:
    """The value of a free var's declaration: `T.int32()`, `T.handle()`, and a typed
    handle as TVM writes it, without a call (`T.handle("float32", "global")`)."""
    text = type_text(var)
    return text if text.endswith(")") else text + "()"


class ExprPrinter:
    """Prints PrimExprs. `declare` is called for a var that has no name yet
    (TVM defines such free vars with `n = T.int32()` before the statement), and
    `undefined_buffer` for a buffer that has none: the statement printer that
    holds this one sets both."""

    def __init__(self, dialect: str, names: NameTable) -> None:
        self.dialect = dialect
        self.names = names
        self.modern = dialect != "classic"
        self.relax_context = False
        self.inline: dict[int, str] = {}  # var id -> text such as `A.data`
        self.data_owner: dict[int, tir.Buffer] = {}  # data var id -> the buffer it is `.data` of
        # the function prints with `s_tir=True`: a buffer declared there without a
        # layout has none (elsewhere, the row-major one)
        self.s_tir = False
        self.module_name = "Module"  # the class a call to a module function names
        self.declare: Callable[[tir.Var], str] | None = None
        # a buffer used before any declaration; the statement printer declares it
        self.undefined_buffer: Callable[[tir.Buffer], str] = self.define_buffer

    def expr(self, e: tir.PrimExpr, relax_context: bool = False) -> str:
        saved, self.relax_context = self.relax_context, relax_context
        try:
            return self.doc(e)[0]
        finally:
            self.relax_context = saved

    def doc(self, e: Any) -> tuple[str, int]:
        visit = getattr(self, "visit_" + type(e).__name__, None)
        if visit is None:
            return self.value_text(e), ATOM
        return visit(e)

    def text(self, e: Any) -> str:
        return self.doc(e)[0]

    # ------------------------------------------------------------ leaves

    def visit_IntImm(self, e: tir.IntImm) -> tuple[str, int]:
        if e.dtype == "bool":
            return f"T.bool({bool(e.value)})", ATOM
        if e.dtype == "int32" or self.relax_context:
            return str(e.value), ATOM
        return f"T.{dtype_text(e.dtype)}({e.value})", ATOM

    def visit_FloatImm(self, e: tir.FloatImm) -> tuple[str, int]:
        dtype = dtype_text(e.dtype)
        if is_special(e.value):
            return f"T.{dtype}({special_text(e.value)})", ATOM
        return f"T.{dtype}({float_text(e.value)})", ATOM

    def visit_StringImm(self, e: tir.StringImm) -> tuple[str, int]:
        return string_text(e.value), ATOM

    def visit_Var(self, e: tir.Var) -> tuple[str, int]:
        owner = self.data_owner.get(id(e))
        if owner is not None and self.bare_scalar(owner):
            return f"{self.buffer_name(owner)}.source.data", ATOM
        if id(e) in self.inline:
            return self.inline[id(e)], ATOM
        name = self.names.get(e)
        if name is None:
            if self.relax_context or self.declare is None:
                return self.names.define(e, e.name), ATOM
            name = self.declare(e)
        return name, ATOM

    # ------------------------------------------------------------ operators

    def visit_BinaryOp(self, e: tir.BinaryOp) -> tuple[str, int]:
        a, b = self.doc(e.a), self.doc(e.b)
        if e.kind in CALL_FORM:
            return f"T.{CALL_FORM[e.kind]}({a[0]}, {b[0]})", ATOM
        if e.kind == "div":
            integer = dt.is_integer_like(e.a.dtype) and dt.is_integer_like(e.b.dtype)
            if integer or folds("div", e.a, e.b):
                return f"T.Div({a[0]}, {b[0]})", ATOM
            return f"{wrap(a, MUL)} / {wrap(b, MUL, True)}", MUL
        op, prec, name = SUGAR[e.kind]
        if e.a.dtype != e.b.dtype or folds(e.kind, e.a, e.b):
            return f"T.{name}({a[0]}, {b[0]})", ATOM
        return f"{wrap(a, prec)} {op} {wrap(b, prec, True)}", prec

    def visit_Not(self, e: tir.Not) -> tuple[str, int]:
        a = self.doc(e.a)
        if isinstance(e.a, tir.IntImm | tir.StringImm) and not a[0].startswith("T."):
            return f"T.Not({a[0]})", ATOM
        return f"not {wrap(a, NOT)}", NOT

    def visit_Cast(self, e: tir.Cast) -> tuple[str, int]:
        return f'T.Cast("{dtype_text(e.dtype)}", {self.text(e.value)})', ATOM

    def visit_Select(self, e: tir.Select) -> tuple[str, int]:
        args = ", ".join(self.text(x) for x in (e.condition, e.true_value, e.false_value))
        return f"T.Select({args})", ATOM

    def visit_Ramp(self, e: tir.Ramp) -> tuple[str, int]:
        lanes = self.lanes_text(e.lanes, e.dtype)
        return f"T.Ramp({self.text(e.base)}, {self.text(e.stride)}, {lanes})", ATOM

    def visit_Broadcast(self, e: tir.Broadcast) -> tuple[str, int]:
        return f"T.Broadcast({self.text(e.value)}, {self.lanes_text(e.lanes, e.dtype)})", ATOM

    def lanes_text(self, lanes: int, dtype: str) -> str:
        return self.text(lanes_expr(lanes, dtype)) if dt.is_scalable(dtype) else str(lanes)

    def visit_Shuffle(self, e: tir.Shuffle) -> tuple[str, int]:
        vectors = ", ".join(self.text(v) for v in e.vectors)
        indices = ", ".join(self.text(i) for i in e.indices)
        return f"T.Shuffle([{vectors}], [{indices}])", ATOM

    def visit_Let(self, e: tir.Let) -> tuple[str, int]:
        var = self.text(e.var)
        value = self.text(e.value)
        return f"T.Let({self.text(e.body)}, where={{{var}: {value}}})", ATOM

    def visit_Call(self, e: tir.Call) -> tuple[str, int]:
        if e.op in BITWISE and len(e.args) == 2:
            op, prec = BITWISE[e.op]
            a, b = self.doc(e.args[0]), self.doc(e.args[1])
            return f"{wrap(a, prec)} {op} {wrap(b, prec, True)}", prec
        if e.op == "bitwise_not" and len(e.args) == 1:
            return "~" + wrap(self.doc(e.args[0]), UNARY), UNARY
        if e.op == "buffer_data" and len(e.args) == 1 and isinstance(e.args[0], tir.BufferRegion):
            buffer = e.args[0].buffer  # a view's `V.data` (dsl/parse/tir/expr.py: data_of)
            source = ".source" if self.bare_scalar(buffer) else ""
            return f"{self.buffer_name(buffer)}{source}.data", ATOM
        if e.op == "cuda.func_call" and e.args:  # the source last, printed as a keyword
            args = [self.call_arg(a) for a in e.args[:-1]]
            args.append(f"source_code={self.call_arg(e.args[-1])}")
            if e.dtype != "void":
                args.append(f"return_type={self.result_type(e)}")
            return f"T.cuda.func_call({', '.join(args)})", ATOM
        args = [self.call_arg(a) for a in e.args]
        args += [f"{key}={self.value_text(value)}" for key, value in e.kwargs]
        if e.op.startswith(tir.GLOBAL_CALL):  # a module function, `Module.f(...)`
            return f"{self.module_name}.{e.op[len(tir.GLOBAL_CALL) :]}({', '.join(args)})", ATOM
        if e.op in DTYPE_FIRST:
            args.insert(0, self.result_type(e))
        elif e.op in DTYPE_LAST:
            args.append(self.result_type(e))
        return f"T.{dotted_identifier(e.op, 'the intrinsic')}({', '.join(args)})", ATOM

    def result_type(self, e: tir.Call) -> str:
        """The result type a call writes as an argument: a dtype string, or in 0.27 a
        handle type, `T.handle().ty` or `T.handle("int64", "global").ty`."""
        if not (self.modern and e.dtype == "handle"):
            return f'"{dtype_text(e.dtype)}"'
        if e.pointee is None:
            return "T.handle().ty"
        elem, scope = e.pointee
        return f"T.handle({string_text(dtype_text(elem))}, {string_text(scope)}).ty"

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tuple[str, int]:
        if self.scalar_access(e.buffer, e.indices):
            return self.buffer_name(e.buffer), ATOM
        return self.buffer_name(e.buffer) + self.indices(e.indices, slices=not self.modern), ATOM

    def bare_scalar(self, buffer: tir.Buffer) -> bool:
        """Whether the buffer's bare name is its one element: then 0.27 names the buffer
        itself `acc.source` (`acc.source.data`, a region `acc.source[0]`). TVM 0.27 does
        so for a `(1,)` buffer that has a layout."""
        if not (self.modern and tir.is_scalar_buffer(buffer)) or buffer.layout is None:
            return False
        return not (self.s_tir and buffer.layout == DEFAULT_LAYOUT)

    def scalar_access(self, buffer: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> bool:
        """Whether `buffer[indices]` prints as the bare name (`acc`, not `acc[0]`)."""
        if not self.bare_scalar(buffer) or len(indices) != 1:
            return False
        index = indices[0]
        return isinstance(index, tir.IntImm) and index.dtype == "int32" and index.value == 0

    # ------------------------------------------------------------ helpers

    def buffer_name(self, buffer: tir.Buffer) -> str:
        name = self.names.get(buffer)
        return name if name is not None else self.undefined_buffer(buffer)

    def define_buffer(self, buffer: tir.Buffer) -> str:
        """Names a buffer used before any declaration (expressions printed alone)."""
        return self.names.define(buffer, buffer.name)

    def indices(self, indices: tuple[tir.PrimExpr, ...], slices: bool) -> str:
        """`[i, j]`, `[()]` for 0-d; a constant-stride Ramp index prints as a
        slice where TVM does (stores always, loads in the classic printer)."""
        if not indices:
            return "[()]"
        parts = []
        for index in indices:
            if slices and isinstance(index, tir.Ramp) and isinstance(index.stride, tir.IntImm):
                parts.append(self.ramp_slice(index))
            else:
                parts.append(self.text(index))
        return "[" + ", ".join(parts) + "]"

    def ramp_slice(self, ramp: tir.Ramp) -> str:
        lanes = lanes_expr(ramp.lanes, ramp.dtype, ramp.stride.dtype)
        stop = add_folded(ramp.base, mul_folded(lanes, ramp.stride))
        text = f"{self.text(ramp.base)}:{self.text(stop)}"
        if int_const(ramp.stride) != 1:
            text += f":{self.text(ramp.stride)}"
        return text

    def call_arg(self, arg: Any) -> str:
        """An argument: an expression, or a tile operator's region or flag."""
        if isinstance(arg, tir.BufferRegion):
            return self.region(arg)
        if isinstance(arg, bool):  # a flag, bare in either dialect
            return str(arg)
        return self.text(arg) if isinstance(arg, tir.PrimExpr) else self.value_text(arg)

    def region(self, region: tir.BufferRegion) -> str:
        """`A[vi, 0:16]`: an extent-1 range prints as its index."""
        parts = []
        for rng in region.region:
            if int_const(rng.extent) == 1:
                parts.append(self.text(rng.min))
            else:
                stop = range_end(rng.min, rng.extent)
                parts.append(f"{self.text(rng.min)}:{self.text(stop)}")
        inner = ", ".join(parts) if parts else "()"
        source = ".source" if self.bare_scalar(region.buffer) else ""
        return f"{self.buffer_name(region.buffer)}{source}[{inner}]"

    def value_text(self, v: Any) -> str:
        """Attribute values (func_attr, sblock_attr, loop annotations): Python
        data, with bools spelled per dialect."""
        if isinstance(v, bool):
            return str(v) if self.modern else f"T.bool({v})"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return float_text(v)
        if isinstance(v, str):
            return string_text(v)
        if v is None:
            return "None"
        if isinstance(v, tir.PrimExpr):
            return self.text(v)
        if isinstance(v, tir.Buffer):
            return self.buffer_name(v)
        if isinstance(v, tir.BufferRegion):  # `T.hint(access=A[0:64])`
            return self.region(v)
        if isinstance(v, dict):
            return self.dict_text(tuple(v.items()))
        if isinstance(v, tir.AttrDict):
            return self.dict_text(v.items)
        if isinstance(v, IndexMap):  # a tile select's predicate, `lambda i: i < 2`
            return self.predicate_text(v)
        if isinstance(v, relax.Op):  # an operator as a value (a tile reduction's)
            return f"I.Op({string_text(v.name)})"
        if isinstance(v, tir.TargetAttr):
            host = "" if v.host is None else f", host={self.target_text(v.host)}"
            return f"T.target({self.target_text(v.config)}{host})"
        if isinstance(v, list | tuple):
            return "[" + ", ".join(self.value_text(x) for x in v) + "]"
        return string_text(str(v))

    def predicate_text(self, m: IndexMap) -> str:
        self.names.push()
        try:
            params = ", ".join(self.names.define(v, v.name) for v in m.initial_indices)
            return f"lambda {params}: {self.text(m.final_indices[0])}"
        finally:
            self.names.pop()

    def target_text(self, spec: tir.AttrDict | str) -> str:
        return string_text(spec) if isinstance(spec, str) else self.dict_text(spec.items)

    def dict_text(self, items: tuple[tuple[Any, Any], ...]) -> str:
        """`{"k": v}` with keys sorted, as TVM prints Map attributes."""
        pairs = sorted(items, key=first_as_text)
        return (
            "{" + ", ".join(f"{self.value_text(k)}: {self.value_text(v)}" for k, v in pairs) + "}"
        )
