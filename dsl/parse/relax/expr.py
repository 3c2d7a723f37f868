"""Expressions of Relax function bodies: names, tuples, indexing, `R.<op>(...)`
calls through the operator registry, and the call forms the registry does not
own (`R.call_tir`, packed calls, `R.const`, `R.shape`, ...).

Nested calls in arguments are bound to fresh variables (`lv`, `lv1`, ... inside
a dataflow block, `gv`, `gv1`, ... outside), as TVM's normalizer does, so the IR
only ever has leaves and tuples of leaves as call arguments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar

from tvmlite.diagnostics import Span, TVMLiteError, did_you_mean
from tvmlite.dsl import ops, relax, tir
from tvmlite.dsl.metadata import missing_table_message
from tvmlite.dsl.module import TVM027
from tvmlite.dsl.ops.call import unknown_operator
from tvmlite.dsl.parse.relax.calls import SPECIAL_CALLS, RelaxCallParser
from tvmlite.dsl.parse.relax.sinfo import (
    RelaxContext,
    SinfoParser,
    int_literal,
)
from tvmlite.dsl.parse.scope import ParseContext
from tvmlite.dsl.parse.tir.expr import ExprParser
from tvmlite.dsl.parse.tir.func import parse_tir_expr
from tvmlite.dsl.parse.tir.index_map import parse_index_map, parse_lambda
from tvmlite.dsl.parse.tir.intrin import is_tir_name
from tvmlite.dsl.verify.sinfo import call_result, struct_info_of
from tvmlite.grammar import syntax

Value = Any  # a relax.Expr, a tir.PrimExpr, a Python literal, a tuple of these, or MODULE

LEAVES = (
    relax.Var,
    relax.Constant,
    relax.ShapeExpr,
    relax.PrimValue,
    relax.StringImm,
    relax.DataTypeImm,
    relax.ExternFunc,
    relax.GlobalVar,
    relax.Op,
)


class ModuleRef:
    """What `Module` (the class name) and its alias `cls` stand for in a body."""


MODULE = ModuleRef()

# Relax operators behind Python's binary operators on tensors.
_BINARY_OPS = {
    "+": "relax.add",
    "-": "relax.subtract",
    "*": "relax.multiply",
    "/": "relax.divide",
    "//": "relax.floor_divide",
    "%": "relax.floor_mod",
    "**": "relax.power",
    "@": "relax.matmul",
}
UNSUPPORTED_CALLS = (
    "R.emit_with_sinfo",
    "R.emit_with_type",
    "R.emit_with_ty",
    "R.func_ret_struct_info",
    "R.func_ret_type",
    "R.func_ret_ty",
)


def is_leaf(expr: relax.Expr) -> bool:
    return isinstance(expr, LEAVES)


class RelaxExprParser:
    """Evaluates body expressions of one Relax function into IR, emitting the
    bindings that normalization needs into `self.bindings`."""

    def __init__(self, ctx: RelaxContext) -> None:
        self.ctx = ctx
        self.types = SinfoParser(ctx)  # annotations, shape dims, the function's names
        self.calls = RelaxCallParser(self)  # the R.* call forms the registry does not own
        self.bindings: list[relax.Binding] = []
        self.in_dataflow = False
        self.fresh_counts: dict[str, int] = {}
        self.closed_dataflow: dict[str, Span | None] = {}
        # the value of an annotated binding: the annotation gives its struct info
        self.annotated: syntax.Node | None = None
        # struct info of call nodes built here, by id (calls carry none themselves)
        self._call_sinfo: dict[int, tuple[relax.Expr, relax.StructInfo]] = {}

    # ------------------------------------------------------------ bindings

    def fresh_name(self, prefix: str) -> str:
        count = self.fresh_counts.get(prefix, 0)
        self.fresh_counts[prefix] = count + 1
        return prefix if count == 0 else f"{prefix}{count}"

    def new_var(
        self, name: str, sinfo: relax.StructInfo, span: Span | None, dataflow: bool
    ) -> relax.Var:
        cls = relax.DataflowVar if dataflow else relax.Var
        return cls(name, sinfo, span=span)

    def take_fresh_name(self) -> None:
        """A binding the text names takes a fresh name too: TVM's block builder emits
        every binding under the next `lv`/`gv` name (its parser renames it after), so a
        nested call's temporary is numbered by the position of its binding."""
        self.fresh_name("lv" if self.in_dataflow else "gv")

    def emit_fresh(self, expr: relax.Expr, span: Span | None) -> relax.Var:
        """Bind `expr` to a fresh var, as TVM does for a nested call."""
        name = self.fresh_name("lv" if self.in_dataflow else "gv")
        var = self.new_var(name, self.sinfo_of(expr), span, self.in_dataflow)
        self.bindings.append(relax.VarBinding(var, expr, span=span))
        return var

    def sinfo_of(self, expr: relax.Expr) -> relax.StructInfo:
        cached = self._call_sinfo.get(id(expr))
        if cached is not None and cached[0] is expr:
            return cached[1]
        return struct_info_of(expr, self.ctx.signatures, getattr(expr, "span", None))

    def typed(self, call: relax.Call, sinfo: relax.StructInfo) -> relax.Call:
        self._call_sinfo[id(call)] = (call, sinfo)
        return call

    def normalize(self, expr: relax.Expr, span: Span | None) -> relax.Expr:
        """A leaf or a tuple of leaves: anything else gets its own binding."""
        if is_leaf(expr):
            return expr
        if isinstance(expr, relax.Tuple):
            fields = tuple(self.normalize(f, span) for f in expr.fields)
            if all(a is b for a, b in zip(fields, expr.fields, strict=False)):
                return expr
            return relax.Tuple(fields, span=expr.span)
        return self.emit_fresh(expr, span)

    # ------------------------------------------------------------ entry points

    def rx(self, node: syntax.Node) -> relax.Expr:
        """The Relax expression `node` denotes (the right-hand side of a binding:
        the outermost call stays unbound)."""
        return self.to_relax(self.value(node), node)

    def arg(self, node: syntax.Node) -> relax.Expr:
        """A call argument: a leaf or a tuple of leaves."""
        return self.normalize(self.rx(node), node.span)

    def to_relax(self, value: Value, node: syntax.Node) -> relax.Expr:
        """Literals and TIR scalars become PrimValues / StringImms, as TVM converts them."""
        if isinstance(value, relax.Expr):
            return value
        if isinstance(value, tir.PrimExpr):
            return relax.PrimValue(value, span=node.span)
        if isinstance(value, bool):
            return relax.PrimValue(tir.IntImm("bool", int(value)), span=node.span)
        if isinstance(value, int):
            return relax.PrimValue(tir.IntImm("int64", value), span=node.span)
        if isinstance(value, float):
            return relax.PrimValue(tir.FloatImm("float64", value), span=node.span)
        if isinstance(value, str):
            return relax.StringImm(value, span=node.span)
        if isinstance(value, tuple):
            elts = (
                node.elts if isinstance(node, (syntax.Tuple, syntax.List)) else (node,) * len(value)
            )
            return relax.Tuple(
                tuple(self.to_relax(v, n) for v, n in zip(value, elts, strict=False)),
                span=node.span,
            )
        if value is MODULE:
            raise self.ctx.error("the module itself is not a value; write cls.<function>", node)
        raise self.ctx.error("this is not a Relax value", node)

    def value(self, node: syntax.Node) -> Value:
        handler = self._NODES.get(type(node))
        ctx = self.ctx
        if handler is None:
            kind = type(node).__name__
            raise ctx.error(f"{kind} expressions are not supported in a Relax function", node)
        ctx.nest(node)
        value = handler(self, node)
        ctx.depth -= 1
        return value

    # ------------------------------------------------------------ syntax nodes

    def _lookup(self, node: syntax.Name) -> Value | None:
        """What a name denotes, None for a name nothing defines."""
        found = self.types.vars.lookup(node.id)
        if found is not None:
            return found
        sym = self.types.sym.lookup(node.id)
        if sym is not None:
            return sym
        if node.id in self.ctx.type_vars:
            return self.types.sym_var(node.id, span=node.span)
        if node.id in self.ctx.global_names:
            return relax.GlobalVar(node.id, span=node.span)
        if node.id == self.ctx.module_name:
            return MODULE
        return None

    def _name(self, node: syntax.Name) -> Value:
        found = self._lookup(node)
        if found is not None:
            return found
        if node.id in self.closed_dataflow:
            raise self.ctx.error(
                f"{node.id} is a dataflow variable, visible only inside its dataflow block; "
                "list it in R.output(...) to use it after the block",
                node,
            )
        if node.id == "metadata":
            raise self.ctx.error('a metadata reference reads metadata["KEY"][INDEX]', node)
        visible = [
            *self.types.vars.names(),
            *self.types.sym.names(),
            *self.ctx.type_vars,
            *self.ctx.global_names,
        ]
        raise self.ctx.error(f"undefined name {node.id}{did_you_mean(node.id, visible)}", node)

    def _attribute(self, node: syntax.Attribute) -> Value:
        if isinstance(node.value, syntax.Name) and node.value.id in ("R", "T", "I"):
            raise self.ctx.error(f"{syntax.dotted(node)} is not a value here", node)
        base = self.value(node.value)
        if base is MODULE:
            if node.attr not in self.ctx.global_names:
                hint = did_you_mean(node.attr, self.ctx.global_names)
                raise self.ctx.error(f"the module has no function named {node.attr}{hint}", node)
            return relax.GlobalVar(node.attr, span=node.span)
        raise self.ctx.error(f"attribute .{node.attr} is not supported here", node)

    def _constant(self, node: syntax.Constant) -> Value:
        return node.value

    def _tuple(self, node: syntax.Tuple | syntax.List) -> Value:
        values = tuple(self.value(e) for e in node.elts)
        if values and all(isinstance(v, relax.Expr) for v in values):
            return relax.Tuple(values, span=node.span)
        return values

    def _subscript(self, node: syntax.Subscript) -> Value:
        base = node.value
        while isinstance(base, syntax.Subscript):
            base = base.value
        if isinstance(base, syntax.Name) and base.id == "metadata":
            return metadata_constant(self.ctx, node)
        tup = self.arg(node.value)
        if len(node.indices) != 1:
            raise self.ctx.error("a tuple is indexed by one integer", node)
        index = int_literal(self.ctx, node.indices[0], "a tuple index")
        sinfo = self.sinfo_of(tup)
        if isinstance(sinfo, relax.TupleStructInfo):
            if not -len(sinfo.fields) <= index < len(sinfo.fields):
                raise self.ctx.error(
                    f"index {index} is out of range for a tuple of {len(sinfo.fields)} fields",
                    node.indices[0],
                )
            index %= len(sinfo.fields)
        elif not isinstance(sinfo, relax.ObjectStructInfo) or index < 0:
            raise self.ctx.error(f"only tuples can be indexed, not {type(sinfo).__name__}", node)
        return relax.TupleGetItem(tup, index, span=node.span)

    def _unary(self, node: syntax.UnaryOp) -> Value:
        operand = self.value(node.operand)
        if isinstance(operand, relax.Expr) and node.op == "-":
            return self.op_call("relax.negative", [self.normalize(operand, node.span)], {}, node)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool) and node.op in "-+":
            return -operand if node.op == "-" else operand
        if isinstance(operand, tir.PrimExpr):
            return self.types.prim(node)
        raise self.ctx.error(f"unary {node.op} is not supported here", node)

    def _binary(self, node: syntax.BinOp) -> Value:
        left, right = self.value(node.left), self.value(node.right)
        if self._tir_scalar(left) and self._tir_scalar(right):
            return self.types.prim(node)  # 0.27: `n + 1` of scalar vars is TIR arithmetic
        if isinstance(left, relax.Expr) or isinstance(right, relax.Expr):
            name = _BINARY_OPS.get(node.op)
            if name is None:
                raise self.ctx.error(f"operator {node.op} is not defined on Relax values", node)
            args = [self.normalize(self.to_relax(v, n), n.span) for v, n in
                    ((left, node.left), (right, node.right))]  # fmt: skip
            return self.op_call(name, args, {}, node)
        return self.types.prim(node)

    def _tir_scalar(self, value: Value) -> bool:
        """A value TIR arithmetic takes: no Relax value, or (in 0.27) a scalar var that
        is itself the TIR var its name denotes (a parameter `n: T.int64`, a binding
        `alias: T.int64 = n`)."""
        if not isinstance(value, relax.Expr):
            return True
        si = getattr(value, "struct_info", None)
        return (
            self.ctx.dialect == TVM027
            and isinstance(value, relax.Var)
            and isinstance(si, relax.PrimStructInfo)
            and isinstance(si.value, tir.Var)
            and self.types.sym.lookup(value.name) is si.value
        )

    def _compare(self, node: syntax.Compare) -> Value:
        """`N % 16 == 0` over symbolic vars is a TIR condition; Relax tensors
        compare with R.equal, R.less and friends."""
        for operand in (node.left, *node.comparators):
            if isinstance(self.value(operand), relax.Expr):
                raise self.ctx.error(
                    "comparison operators take scalars; compare Relax values with R.equal, "
                    "R.less, ...",
                    operand,
                )
        return self.types.prim(node)

    def _call(self, node: syntax.Call) -> Value:
        name = syntax.dotted(node.func) or ""
        handler = SPECIAL_CALLS.get(name)
        if handler is not None:
            return handler(self.calls, node)
        if name in UNSUPPORTED_CALLS:
            raise self.ctx.error(f"{name} is not supported", node.func)
        if name.startswith("R."):
            return self._registered_op(name, node)
        if name == "T.index_map":
            return parse_index_map(node, ExprParser(self.ctx, self.types.sym))
        if name.startswith("T.") and not is_tir_name(name[2:]):
            return self._foreign_op(name[2:], node)
        if name.startswith("T."):
            return parse_tir_expr(node, self.types.sym, self.ctx)
        if name.startswith("I."):
            raise self.ctx.error(f"{name} is not allowed in a Relax function body", node.func)
        callee = self.callee(node.func)
        if node.keywords:
            raise self.ctx.error("calls of functions take no keyword arguments", node.keywords[0])
        args = tuple(self.arg(a) for a in node.args)
        if isinstance(callee, relax.GlobalVar):
            return self._global_call(callee, args, node)
        if isinstance(callee, relax.Var) and isinstance(callee.struct_info, relax.FuncStructInfo):
            result = call_result(callee.struct_info, [self.sinfo_of(a) for a in args])
            return self.typed(relax.Call(callee, args, span=node.span), result)
        raise self.ctx.error("this is not callable", node.func)

    def _foreign_op(self, name: str, node: syntax.Call) -> relax.Call:
        """`T.custom_op.matmul_bias_add(A, W, B)`: TVM prints a call of an operator
        registered outside Relax with the `T.` prefix. Kept with an unknown result
        (the binding's annotation states it); `lower`/`build` refuse it."""
        if node.keywords:
            raise self.ctx.error(f"T.{name} takes no keyword arguments here", node.keywords[0])
        args = tuple(self.arg(a) for a in node.args)
        call = relax.Call(relax.Op(name), args, span=node.span)
        return self.typed(call, relax.ObjectStructInfo())

    def callee(self, node: syntax.Node) -> Value:
        """What a call names. A bare name defined nowhere is a function of the module
        that is missing: TVM's parser keeps the call of its GlobalVar (a module pass
        may add it), `lower`/`build` refuse it."""
        if (
            isinstance(node, syntax.Name)
            and node.id not in self.closed_dataflow  # these two have errors of their own
            and node.id != "metadata"
            and self._lookup(node) is None
        ):
            return relax.GlobalVar(node.id, span=node.span)
        return self.value(node)

    def _global_call(
        self, gv: relax.GlobalVar, args: tuple[relax.Expr, ...], node: syntax.Call
    ) -> relax.Call:
        sig = self.ctx.signatures.get(gv.name)
        if sig is None:  # a missing function: its result is unknown
            return self.typed(relax.Call(gv, args, span=node.span), relax.ObjectStructInfo())
        if sig.params is not None and len(sig.params) != len(args):
            raise self.ctx.error(
                f"{gv.name} takes {len(sig.params)} arguments ({len(args)} given)", node
            )
        result = call_result(sig, [self.sinfo_of(a) for a in args])
        return self.typed(relax.Call(gv, args, span=node.span), result)

    # ------------------------------------------------------------ registered operators

    def op_arg(self, node: syntax.Node) -> Value:
        """An operator argument: Relax values are normalized, literals stay Python."""
        if type(node) is syntax.Name:
            found = self.types.vars.lookup(node.id)
            if isinstance(found, relax.Var):
                return found  # a bound var, already a leaf: what the general path gives
        if isinstance(node, (syntax.Tuple, syntax.List)):
            self.ctx.nest(node)
            items = tuple(self.op_arg(e) for e in node.elts)
            self.ctx.depth -= 1
            if items and all(isinstance(i, relax.Expr) for i in items):
                return relax.Tuple(items, span=node.span)
            return items
        if isinstance(node, syntax.Dict):
            raise self.ctx.error("dict arguments are not supported for operators", node)
        if isinstance(node, syntax.Lambda):  # an index map written bare, as TVM accepts
            return parse_lambda(node, ExprParser(self.ctx, self.types.sym))
        value = self.value(node)
        if isinstance(value, relax.Expr):
            return self.normalize(value, node.span)
        if value is MODULE:
            raise self.ctx.error("the module itself is not a value; write cls.<function>", node)
        return value

    def _registered_op(self, name: str, node: syntax.Call) -> relax.Call:
        op_name = "relax." + name[2:]
        if ops.lookup(op_name) is None:
            raise self.ctx.error(unknown_operator(name, SPECIAL_CALLS), node.func)
        args = [self.op_arg(a) for a in node.args]
        # `ty_args=` (`sinfo_args=`): struct info TVM keeps on any call that has some
        types, rest = self.calls.sinfo_args(node, name)
        kwargs = {key: self.op_arg(value) for key, value in rest.items()}
        call = self.op_call(op_name, args, kwargs, node)
        if not types:
            return call
        return self.typed(dataclasses.replace(call, sinfo_args=types), self.sinfo_of(call))

    def op_call(self, op_name: str, args: list, kwargs: dict, node: syntax.Node) -> relax.Call:
        call = ops.make_call(op_name, args, kwargs, span=node.span)
        sinfo = ops.infer_struct_info(call, node.span)
        conflict = ops.dtype_conflict(call)
        untyped = getattr(sinfo, "dtype", None) == "void"
        if conflict is not None and untyped and node is not self.annotated:
            # TVM's parser infers no dtype for it; an annotation states it, and the
            # build refuses the operands (a comparison is bool, `x + mask` x's dtype)
            raise self.ctx.error(conflict, node)
        return self.typed(call, sinfo)

    _NODES: ClassVar[dict[type, Callable[..., Value]]] = {
        syntax.Name: _name,
        syntax.Attribute: _attribute,
        syntax.Constant: _constant,
        syntax.Tuple: _tuple,
        syntax.List: _tuple,
        syntax.Subscript: _subscript,
        syntax.UnaryOp: _unary,
        syntax.BinOp: _binary,
        syntax.Compare: _compare,
        syntax.Call: _call,
    }


def _is_none(node: syntax.Node) -> bool:
    return isinstance(node, syntax.Constant) and node.value is None


def metadata_reference(ctx: ParseContext, node: syntax.Subscript) -> tuple[str, int]:
    """The key and index of `metadata["KEY"][INDEX]`."""
    inner = node.value
    if (
        not isinstance(inner, syntax.Subscript)
        or not isinstance(inner.value, syntax.Name)
        or len(inner.indices) != 1
        or len(node.indices) != 1
        or not isinstance(inner.indices[0], syntax.Constant)
        or not isinstance(inner.indices[0].value, str)
    ):
        raise ctx.error('a metadata reference reads metadata["KEY"][INDEX]', node)
    index = int_literal(ctx, node.indices[0], "a metadata index")
    if index < 0:
        raise ctx.error(f"a metadata index must not be negative, got {index}", node.indices[0])
    return inner.indices[0].value, index


def metadata_constant(ctx: RelaxContext, node: syntax.Subscript) -> relax.Constant:
    """The constant a metadata reference names, from the table given to the parse."""
    key, index = metadata_reference(ctx, node)
    if ctx.constants is None:
        raise ctx.error(missing_table_message(f'metadata["{key}"][{index}]'), node)
    try:
        return ctx.constants.constant(key, index)
    except TVMLiteError as err:
        raise ctx.error(str(err), node) from None
