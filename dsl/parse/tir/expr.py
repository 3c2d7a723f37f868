"""TIR expressions from syntax nodes: names, literals, operators, buffer loads and
`T.*` calls (the call table lives in `parse_tir_intrin`).

Nothing is evaluated: Python literals stay `Lit` until an operand or the context
gives them a dtype, exactly where TVM's parser would have converted them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tvmlite.diagnostics import ParseError, did_you_mean
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.parse.scope import ParseContext, Scope
from tvmlite.dsl.parse.tir.ops import (
    Lit,
    LiteralError,
    TypeMismatch,
    Value,
    binary,
    cast,
    const_int,
    difference,
    fold_literals,
    make_const,
    match_types,
    materialize,
    pair,
)
from tvmlite.grammar import syntax

# Names that need Python to run; rejected wherever they appear.
META_BUILTINS = ("meta_var", "macro", "inline", "index_map", "iter_var")
# Looks like a dtype name, so a bad one gets "unknown dtype" rather than "unknown builtin".
DTYPE_LIKE = re.compile(r"^(?:u?int|b?float)\d+(?:_\w+)?(?:x\d+)?$")

_ARITH = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "floormod", "/": "div"}
_BITWISE = {
    "&": "bitwise_and",
    "|": "bitwise_or",
    "^": "bitwise_xor",
    "<<": "shift_left",
    ">>": "shift_right",
}
# Operators whose literal operands TVM's parser computes in Python (`2**31`, `4 * 4`).
_FOLDABLE = frozenset(["+", "-", "*", "//", "%", "**"])
_COMPARE = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


class ExprParser:
    """Turns expression nodes into PrimExprs against a `Scope`.

    `type_var_map` gives each module-level TypeVar one int64 var per function;
    `expired` remembers names whose scope closed, for a better message."""

    def __init__(self, ctx: ParseContext, scope: Scope) -> None:
        self.ctx = ctx
        self.scope = scope
        self.type_var_map: dict[str, tir.Var] = {}
        self.expired: set[str] = set()
        self._frame_names: list[list[str]] = []
        # a buffer region (`A[0:4]`, `A`) where a call takes one (`T.tile.*`): set by the
        # statement parser, whose buffer helper parses regions; None for expressions alone
        self.region: Callable[[syntax.Node], tir.BufferRegion] | None = None
        # tile operators' list arguments and keyword options (attribute values)
        self.attr_value: Callable[[syntax.Node], Any] | None = None
        # buffers declared over another buffer's storage (views): `V.data` names V's
        self.views: set[tir.Buffer] = set()

    # ------------------------------------------------------------ helpers

    def error(self, message: str, node: syntax.Node | None) -> ParseError:
        return self.ctx.error(message, node)

    def push(self) -> None:
        self.scope.push()
        self._frame_names.append([])

    def pop(self) -> None:
        self.scope.pop()
        for name in self._frame_names.pop():
            if self.scope.lookup(name) is None:
                self.expired.add(name)

    def define(self, name: str, value: Any) -> None:
        self.scope.define(name, value)
        self.expired.discard(name)
        if self._frame_names:
            self._frame_names[-1].append(name)

    def lookup(self, name: str, node: syntax.Node) -> Any:
        """The IR object bound to `name`, a function's TypeVar var, or a located error."""
        found = self.scope.lookup(name)
        if found is not None:
            return found
        if name in self.ctx.type_vars:
            var = self.type_var_map.get(name)
            if var is None:
                var = tir.Var(name, "int64", span=node.span)
                self.type_var_map[name] = var
            return var
        if name in self.expired:
            raise self.error(f"'{name}' is used outside its scope", node)
        visible = [*self.scope.names(), *self.ctx.type_vars]
        raise self.error(f"undefined name '{name}'{did_you_mean(name, visible, quote=True)}", node)

    def type_arg(self, node: syntax.Node) -> tuple[str, tuple[str, str] | None]:
        """A result type: a dtype, or 0.27's `T.handle("float32", "shared").ty` (a handle
        and what it points at)."""
        if _is_handle_type(node):
            assert isinstance(node, syntax.Attribute) and isinstance(node.value, syntax.Call)
            return "handle", self.pointee(node.value)
        return self.dtype_arg(node), None

    def pointee(self, call: syntax.Call) -> tuple[str, str] | None:
        """What `T.handle(dtype, storage_scope)` points at; None for a bare `T.handle()`."""
        kwargs = {kw.name: kw.value for kw in call.keywords}
        args = list(call.args)
        dtype_node = args[0] if args else kwargs.get("dtype")
        scope_node = args[1] if len(args) > 1 else kwargs.get("storage_scope")
        scope = self.str_arg(scope_node, "storage_scope") if scope_node is not None else "global"
        if dtype_node is None:
            return ("void", scope) if scope_node else None
        return self.dtype_arg(dtype_node), scope

    def dtype_arg(self, node: syntax.Node) -> str:
        """A dtype written as a string (`"float32"`) or as `T.float32`."""
        name = syntax.dotted(node)
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            text = node.value
        elif _is_handle_type(node):
            text = "handle"
        elif name is not None and name.startswith("T."):
            text = name[2:]
        else:
            raise self.error('expected a dtype string such as "float32"', node)
        if not dt.is_valid(text):
            raise self.error(dt.unknown(text), node)
        return text

    def str_arg(self, node: syntax.Node, what: str) -> str:
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return node.value
        raise self.error(f"{what} must be a string literal", node)

    def int_arg(self, node: syntax.Node, what: str) -> int:
        value = self.value(node)
        if isinstance(value, Lit) and literal_is_int(value):
            return int(value.value)
        if isinstance(value, tir.IntImm):
            return value.value
        raise self.error(f"{what} must be an integer constant", node)

    def integer(self, node: syntax.Node, what: str) -> Value:
        """The value of `node`, which must not be a float or bool literal: `what` (a
        loop bound, an index) is an integer. Checked before the literal gets a dtype,
        so that `range(1e308)` says so rather than that 1e308 overflows float32."""
        value = self.value(node)
        if isinstance(value, Lit) and not literal_is_int(value):
            raise self.error(f"{what} must be an integer, got {value.value!r}", node)
        return value

    def lanes_arg(self, node: syntax.Node, what: str) -> int:
        """A vector width: an integer constant from 1 to `dtype.MAX_LANES`."""
        return self.check_lanes(self.int_arg(node, what), node, what)

    def vector_lanes(self, node: syntax.Node, what: str) -> tuple[int, bool]:
        """(lanes, scalable) of a width: a constant, or `T.vscale() * 4` (scalable)."""
        value = self.value(node)
        k = scalable_lanes(value) if isinstance(value, tir.PrimExpr) else None
        if k is not None:
            return self.check_lanes(k, node, what), True
        return self.lanes_arg(node, what), False

    def check_lanes(self, lanes: int, node: syntax.Node, what: str) -> int:
        if not 1 <= lanes <= dt.MAX_LANES:
            raise self.error(f"{what} must be from 1 to {dt.MAX_LANES}, got {lanes}", node)
        return lanes

    def buffer(self, node: syntax.Node) -> tir.Buffer:
        """A buffer named by `node`: a name bound to a buffer, or 0.27's `A.source`."""
        node = source_of(node)
        if isinstance(node, syntax.Name):
            found = self.lookup(node.id, node)
            if isinstance(found, tir.Buffer):
                return found
            raise self.error(f"'{node.id}' is not a buffer", node)
        raise self.error("expected a buffer name", node)

    # ------------------------------------------------------------ entry points

    def expr(self, node: syntax.Node, expected: str | None = None) -> tir.PrimExpr:
        """A PrimExpr; a bare literal takes `expected` (or int32/float32/bool)."""
        return materialize(self.value(node), expected)

    def value(self, node: syntax.Node) -> Value:
        visit = _VISIT.get(type(node))
        if visit is None:
            raise self.error(f"{_describe(node)} is not a TIR expression", node)
        ctx = self.ctx
        ctx.nest(node)
        value = visit(self, node)
        ctx.depth -= 1
        return value

    def typed(self, node: syntax.Node, dtype: str) -> tir.PrimExpr:
        """`node` converted to `dtype` the way a store or typed binding does."""
        value = self.value(node)
        if isinstance(value, Lit):
            return materialize(value, dtype) if _lit_fits(value, dtype) else materialize(value)
        if dt.lanes(value.dtype) != dt.lanes(dtype) and dt.lanes(value.dtype) > 1:
            raise self.error(f"cannot convert {value.dtype} to {dtype}", node)
        return cast(dtype, value, node.span)

    def binop(self, kind: str, a: Value, b: Value, node: syntax.Node) -> tir.PrimExpr:
        try:
            return binary(kind, a, b, node.span)
        except TypeMismatch as exc:
            raise self.error(str(exc), node) from None

    def matched(self, a: Value, b: Value, node: syntax.Node) -> tuple[tir.PrimExpr, tir.PrimExpr]:
        try:
            return match_types(*pair(a, b))
        except TypeMismatch as exc:
            raise self.error(str(exc), node) from None

    def boolean(self, value: Value, node: syntax.Node, what: str) -> tir.PrimExpr:
        expr = materialize(value)
        if not dt.is_bool(dt.element_of(expr.dtype)):
            raise self.error(f"{what} must be bool, got {expr.dtype}", node)
        return expr

    # ------------------------------------------------------------ node visitors

    def _name(self, node: syntax.Name) -> Value:
        found = self.lookup(node.id, node)
        if isinstance(found, tir.PrimExpr):
            return found
        if isinstance(found, tir.Buffer):
            if self.ctx.dialect == "tvm-0.27" and tir.is_scalar_buffer(found):
                zero = tir.IntImm("int32", 0, node.span)
                return tir.BufferLoad(found, (zero,), found.dtype, node.span)
            raise self.error(f"buffer '{node.id}' is not a scalar value; index it", node)
        raise self.error(f"'{node.id}' is not a TIR value", node)

    def _constant(self, node: syntax.Constant) -> Value:
        if isinstance(node.value, str):
            return tir.StringImm(node.value, span=node.span)
        if node.value is None:
            raise self.error("None is not a TIR value", node)
        return Lit(node.value, node.span)

    def _unary(self, node: syntax.UnaryOp) -> Value:
        operand = self.value(node.operand)
        if node.op == "not":
            return tir.Not(self.boolean(operand, node.operand, "operand of 'not'"), span=node.span)
        if isinstance(operand, Lit):
            if node.op == "-" and not isinstance(operand.value, bool):
                return Lit(-operand.value, node.span)
            if node.op == "+":
                return operand
            operand = materialize(operand)
        if node.op == "+":
            return operand
        if node.op == "-":
            # TVM's PrimExpr.__neg__ multiplies by a -1 of the operand's dtype.
            minus_one = make_const(-1, operand.dtype, node.span)
            return tir.BinaryOp("mul", operand, minus_one, operand.dtype, node.span)
        return self.bitwise("bitwise_not", operand, None, node)

    def _binop(self, node: syntax.BinOp) -> Value:
        a, b = self.value(node.left), self.value(node.right)
        if node.op in _FOLDABLE and _is_number(a) and _is_number(b):
            try:
                return Lit(fold_literals(node.op, a.value, b.value), node.span)
            except LiteralError as exc:
                raise self.error(str(exc), node) from None
        if node.op in _BITWISE:
            return self.bitwise(_BITWISE[node.op], a, b, node)
        if node.op == "**":
            return self.power(a, b, node)
        kind = _ARITH.get(node.op)
        if kind is None:
            raise self.error(f"operator '{node.op}' is not supported in TIR", node)
        result = self.binop(kind, a, b, node)
        if kind == "div" and not dt.is_float(dt.element_of(result.dtype)):
            raise self.error(
                "'/' on integers is ambiguous in TIR: use // (floordiv), T.truncdiv or T.Div",
                node,
            )
        return result

    def power(self, a: Value, b: Value, node: syntax.Node) -> tir.PrimExpr:
        """`x ** y` / `T.pow(x, y)`: floats only, as in TVM (LLVM has no integer pow)."""
        x, y = self.matched(a, b, node)
        if not dt.is_float(dt.element_of(x.dtype)):
            raise self.error(f"power needs float operands, got {x.dtype}", node)
        return tir.Call(x.dtype, "pow", (x, y), node.span)

    def bitwise(self, op: str, a: Value, b: Value | None, node: syntax.Node) -> tir.PrimExpr:
        """`& | ^ << >> ~`: integer Calls; `&`/`|` on bools are logical and/or in the
        classic dialect and stay bitwise Calls in 0.27's, as TVM 0.27 keeps them."""
        if b is None:
            x = materialize(a)
            args: tuple[tir.PrimExpr, ...] = (x,)
        else:
            x, y = self.matched(a, b, node)
            args = (x, y)
            logical = dt.is_bool(dt.element_of(x.dtype)) and self.ctx.dialect != "tvm-0.27"
            if logical and op in ("bitwise_and", "bitwise_or"):
                return tir.BinaryOp(op[8:], x, y, x.dtype, node.span)
        if not dt.is_integer_like(dt.element_of(x.dtype)):
            raise self.error(f"bitwise operation on {x.dtype}: operands must be integers", node)
        amount = args[-1]
        if op in ("shift_left", "shift_right") and isinstance(amount, tir.IntImm):
            bits = dt.bits(dt.element_of(x.dtype))
            if not 0 <= amount.value < bits:
                raise self.error(
                    f"shift amount {amount.value} is not from 0 to {bits - 1} for {x.dtype}", node
                )
        return tir.Call(x.dtype, op, args, node.span)

    def _boolop(self, node: syntax.BoolOp) -> Value:
        a = self.boolean(self.value(node.left), node.left, f"operand of '{node.op}'")
        b = self.boolean(self.value(node.right), node.right, f"operand of '{node.op}'")
        return tir.BinaryOp(node.op, a, b, a.dtype, node.span)

    def _compare(self, node: syntax.Compare) -> Value:
        result: tir.PrimExpr | None = None
        left = self.value(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            kind = _COMPARE.get(op)
            if kind is None:
                raise self.error(f"comparison '{op}' is not supported in TIR", node)
            right = self.value(right_node)
            test = self.binop(kind, left, right, node)
            result = test if result is None else self.binop("and", result, test, node)
            left = right
        assert result is not None
        return result

    def _ifexp(self, node: syntax.IfExp) -> Value:
        cond = self.boolean(self.value(node.test), node.test, "condition")
        x, y = self.matched(self.value(node.body), self.value(node.orelse), node)
        return tir.Call(x.dtype, "if_then_else", (cond, x, y), node.span)

    def _subscript(self, node: syntax.Subscript) -> Value:
        owner = node.value
        if isinstance(owner, syntax.Attribute) and owner.attr == "strides":
            return self.stride_of(owner, node)
        buffer = self.buffer_of(owner)
        indices = self.indices(buffer, node)
        return tir.BufferLoad(buffer, indices, access_dtype(buffer, indices), node.span)

    def stride_of(self, owner: syntax.Attribute, node: syntax.Subscript) -> tir.PrimExpr:
        """`A.strides[k]`: how 0.27 names the k-th stride of a strided buffer."""
        buffer = self.buffer(owner.value)
        k = self.int_arg(node.indices[0], "a stride index") if len(node.indices) == 1 else -1
        if not 0 <= k < len(buffer.strides):
            n = len(buffer.strides)
            have = f"{n} stride{'' if n == 1 else 's'}" if n else "no strides"
            raise self.error(f"buffer '{buffer.name}' has {have}", node)
        return buffer.strides[k]

    def buffer_of(self, node: syntax.Node) -> tir.Buffer:
        node = source_of(node)
        if isinstance(node, syntax.Name):
            found = self.lookup(node.id, node)
            if isinstance(found, tir.Buffer):
                return found
            raise self.error(f"'{node.id}' is not a buffer and cannot be indexed", node)
        raise self.error(f"{_describe(node)} cannot be indexed", node)

    def indices(self, buffer: tir.Buffer, node: syntax.Subscript) -> tuple[tir.PrimExpr, ...]:
        """Index expressions of `buffer[...]`; a slice becomes a Ramp (vector access)."""
        if len(node.indices) != len(buffer.shape):
            raise self.error(
                f"buffer '{buffer.name}' has {len(buffer.shape)} dimension"
                f"{'' if len(buffer.shape) == 1 else 's'} but is indexed with "
                f"{len(node.indices)} ind{'ex' if len(node.indices) == 1 else 'ices'}",
                node,
            )
        out = []
        for index in node.indices:
            if isinstance(index, syntax.Slice):
                expr = self.ramp_of(index)
            else:
                expr = materialize(self.integer(index, "a buffer index"))
            if not tir.is_index_dtype(expr.dtype):
                raise self.error(f"a buffer index must be an integer, got {expr.dtype}", index)
            out.append(expr)
        return tuple(out)

    def ramp_of(self, node: syntax.Slice) -> tir.PrimExpr:
        if node.start is None or node.stop is None:
            raise self.error("a vector index slice needs both start and stop", node)
        start, stop = self.matched(
            self.integer(node.start, "a slice bound"),
            self.integer(node.stop, "a slice bound"),
            node,
        )
        step = self.expr(node.step, start.dtype) if node.step is not None else None
        step_value = 1 if step is None else const_int(step)
        extent = difference(stop, start)
        if isinstance(stop, tir.BinaryOp) and stop.kind == "add" and stop.a == start:
            extent = stop.b  # `4 + T.vscale() * 8`, as the printer writes a scalable stop
        scalable = scalable_lanes(extent)
        if scalable is not None and step_value is not None and step_value > 0:
            # `A[0:T.vscale() * 4]`, `A[4:4 + T.vscale() * 4 * 2:2]`
            lanes = self.check_lanes(-(-scalable // step_value), node, "the lanes of a slice")
            stride = step if step is not None else make_const(1, start.dtype, node.span)
            return tir.Ramp(
                start, stride, lanes, dt.with_lanes(start.dtype, lanes, True), node.span
            )
        span_value = const_int(extent)
        if step_value is None or span_value is None or step_value <= 0:
            raise self.error("a vector index slice needs constant extent and step", node)
        lanes = self.check_lanes(-(-span_value // step_value), node, "the lanes of a slice")
        stride = step if step is not None else make_const(1, start.dtype, node.span)
        return tir.Ramp(start, stride, lanes, dt.with_lanes(start.dtype, lanes), node.span)

    def _module_function(self, func: syntax.Node) -> str | None:
        """`f` of `Module.f` (the module's class name), when `f` is a prim function."""
        if not isinstance(func, syntax.Attribute) or not isinstance(func.value, syntax.Name):
            return None
        if func.value.id != self.ctx.module_name or func.attr not in self.ctx.prim_returns:
            return None
        return func.attr

    def _attribute(self, node: syntax.Attribute) -> Value:
        name = syntax.dotted(node)
        if name is not None and name.startswith("T."):
            raise self.error(f"{name} is not a value here; did you mean to call it?", node)
        if isinstance(source_of(node.value), syntax.Name) and node.attr in ("data", "elem_offset"):
            buffer = self.buffer(node.value)
            if node.attr == "data":
                return self.data_of(buffer, node)
            if buffer.elem_offset is not None:
                return buffer.elem_offset
            return tir.IntImm("int32", 0, node.span)
        raise self.error(f"attribute '{node.attr}' is not supported in TIR", node)

    def data_of(self, buffer: tir.Buffer, node: syntax.Node) -> tir.PrimExpr:
        """`B.data`: the storage var, which a view shares with the buffer it views. TVM
        0.27 keeps which buffer a view's `V.data` named (`buffer_data(V)`), and prints it
        back so; a lowering pass takes the var (lowering/tir/flatten_buffers.py)."""
        if buffer not in self.views:
            return buffer.data
        whole = tuple(tir.Range(tir.IntImm(d.dtype, 0), d) for d in buffer.shape)
        region = tir.BufferRegion(buffer, whole, node.span)
        return tir.Call("handle", "buffer_data", (region,), node.span)

    def storage(self, node: syntax.Node) -> Value:
        """A value where a declaration takes storage (`data=V.data`): the var itself."""
        value = self.value(node)
        if isinstance(value, tir.Call) and value.op == "buffer_data":
            return value.args[0].buffer.data  # type: ignore[union-attr]
        return value

    def _call(self, node: syntax.Call) -> Value:
        from tvmlite.dsl.parse.tir.intrin import call_builtin

        name = syntax.dotted(node.func)
        callee = self._module_function(node.func)
        if callee is not None:
            args = tuple(self.expr(arg) for arg in node.args)
            if node.keywords:
                raise self.error(f"{name} takes no keyword arguments", node.keywords[0])
            dtype = self.ctx.prim_returns[callee]
            return tir.Call(dtype, tir.GLOBAL_CALL + callee, args, node.span)
        if name is None or not name.startswith("T."):
            shown = name or _describe(node.func)
            raise self.error(f"'{shown}' cannot be called in a TIR expression", node.func)
        return call_builtin(self, name[2:], node)

    def _lambda(self, node: syntax.Lambda) -> Value:
        raise self.error("lambda is not supported: it needs Python evaluation", node)


def source_of(node: syntax.Node) -> syntax.Node:
    """`A` of 0.27's `A.source`: the buffer itself where its bare name would be its one
    element (`A.source.data`, `A.source[0]` as a tile operator's region)."""
    if isinstance(node, syntax.Attribute) and node.attr == "source":
        return node.value
    return node


def _is_number(value: Value) -> bool:
    return isinstance(value, Lit) and not isinstance(value.value, bool)


def literal_is_int(lit: Lit) -> bool:
    return isinstance(lit.value, int) and not isinstance(lit.value, bool)


def _lit_fits(lit: Lit, dtype: str) -> bool:
    return isinstance(lit.value, int) or dt.is_float(dt.element_of(dtype))


def _describe(node: syntax.Node) -> str:
    kind = {
        syntax.Tuple: "a tuple",
        syntax.List: "a list",
        syntax.Dict: "a dict",
        syntax.Slice: "a slice",
        syntax.Lambda: "a lambda",
    }.get(type(node))
    return kind or f"'{type(node).__name__}' expression"


_VISIT: dict[type, Callable[[ExprParser, Any], Value]] = {
    syntax.Name: ExprParser._name,
    syntax.Constant: ExprParser._constant,
    syntax.UnaryOp: ExprParser._unary,
    syntax.BinOp: ExprParser._binop,
    syntax.BoolOp: ExprParser._boolop,
    syntax.Compare: ExprParser._compare,
    syntax.IfExp: ExprParser._ifexp,
    syntax.Subscript: ExprParser._subscript,
    syntax.Attribute: ExprParser._attribute,
    syntax.Call: ExprParser._call,
    syntax.Lambda: ExprParser._lambda,
}


def _is_handle_type(node: syntax.Node) -> bool:
    """0.27's `T.handle().ty` / `T.handle("int64", "global").ty`: a handle type."""
    return (
        isinstance(node, syntax.Attribute)
        and node.attr == "ty"
        and isinstance(node.value, syntax.Call)
        and syntax.dotted(node.value.func) == "T.handle"
    )


def scalable_lanes(value: tir.PrimExpr) -> int | None:
    """k of `T.vscale() * k` (the lanes of a scalable vector; `T.vscale() * 4 * 2` is
    k = 8), else None."""
    if not isinstance(value, tir.BinaryOp) or value.kind != "mul":
        return None
    for vscale, k in ((value.a, value.b), (value.b, value.a)):
        if not isinstance(k, tir.IntImm):
            continue
        if isinstance(vscale, tir.Call) and vscale.op == "vscale":
            return k.value
        inner = scalable_lanes(vscale)
        if inner is not None:
            return inner * k.value
    return None


def access_dtype(buffer: tir.Buffer, indices: tuple[tir.PrimExpr, ...]) -> str:
    """The dtype of `buffer[indices]`: a vector when an index is (fixed or scalable)."""
    vector = next((i for i in indices if dt.lanes(i.dtype) > 1 or dt.is_scalable(i.dtype)), None)
    if vector is None:
        return buffer.dtype
    if dt.is_scalable(vector.dtype):
        return dt.like_lanes(buffer.dtype, vector.dtype)
    return dt.with_lanes(buffer.dtype, dt.lanes(vector.dtype) * dt.lanes(buffer.dtype))
