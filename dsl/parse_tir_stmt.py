"""TIR statements: stores, bindings, loops, branches, `with` forms, asserts and the
`T.*` statement calls.

A statement handler returns a Stmt, None (a header statement that changed a frame
or declared a name), or `Scoped`: a node whose body is the rest of the sequence
(a classic `x = v` LetStmt).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import Span
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import syntax, tir
from tvmlite.dsl.parse_tir_block import AXIS_KINDS, FUNCTION, BlockParser
from tvmlite.dsl.parse_tir_expr import _ARITH, _BITWISE, META_BUILTINS
from tvmlite.dsl.parse_tir_ops import Lit, difference, make_const, materialize
from tvmlite.dsl.scope import ParseContext, Scope

_LOOP_KINDS = {
    "T.serial": tir.SERIAL,
    "T.parallel": tir.PARALLEL,
    "T.vectorized": tir.VECTORIZED,
    "T.unroll": tir.UNROLLED,
    "T.thread_binding": tir.THREAD_BINDING,
}
_ALLOC_FORMS = {"alloc_local": "local", "alloc_shared": "shared"}


@dataclass(frozen=True, slots=True)
class Scoped:
    """A statement whose `body` is the rest of the enclosing sequence."""

    stmt: tir.LetStmt | tir.AttrStmt


Result = tir.Stmt | list[tir.Stmt] | Scoped | None


def seq(stmts: list[tir.Stmt], span: Span | None = None) -> tir.Stmt:
    """One statement, a flattened SeqStmt, or `Evaluate(0)` for nothing (as TVM)."""
    flat: list[tir.Stmt] = []
    for s in stmts:
        flat.extend(s.seq if isinstance(s, tir.SeqStmt) else (s,))
    if not flat:
        return tir.Evaluate(tir.IntImm("int32", 0), span)
    return flat[0] if len(flat) == 1 else tir.SeqStmt(tuple(flat), span)


class StmtParser(BlockParser):
    """Parses a prim function's body; `parse_tir.parse_prim_func` drives it."""

    def __init__(self, ctx: ParseContext, scope: Scope) -> None:
        super().__init__(ctx, scope)
        self.classic = ctx.dialect != "tvm-0.27"
        self.level: Any = FUNCTION
        self.blocks = []
        self.loop_ranges: dict[tir.Var, tir.Range] = {}
        self.loop_depth = 0
        self.root_allocs: list[tir.Buffer] = []
        self.saw_block = False
        self.func_attrs: list[tuple[str, Any]] = []
        self.handles: dict[tir.Var, tir.Buffer | None] = {}
        self.predeclared: dict[str, tir.Var] = {}

    # ------------------------------------------------------------ sequences

    def body(self, nodes: tuple[syntax.Node, ...], span: Span | None = None) -> tir.Stmt:
        return seq(self.stmts(nodes, 0), span)

    def nested_body(self, nodes: tuple[syntax.Node, ...], span: Span | None = None) -> tir.Stmt:
        """A body in its own name frame, not directly in a block or the function."""
        saved = self.level
        self.level = None
        self.push()
        try:
            return self.body(nodes, span)
        finally:
            self.pop()
            self.level = saved

    def stmts(self, nodes: tuple[syntax.Node, ...], start: int) -> list[tir.Stmt]:
        out: list[tir.Stmt] = []
        for i in range(start, len(nodes)):
            result = self.stmt(nodes[i])
            if isinstance(result, Scoped):
                rest = seq(self.stmts(nodes, i + 1), nodes[i].span)
                out.append(dataclasses.replace(result.stmt, body=rest))
                return out
            if isinstance(result, list):
                out.extend(result)
            elif result is not None:
                out.append(result)
        return out

    def stmt(self, node: syntax.Node) -> Result:
        handler = _STMTS.get(type(node))
        if handler is None:
            raise self.error(f"{type(node).__name__} statements are not supported in TIR", node)
        return handler(self, node)

    # ------------------------------------------------------------ simple statements

    def _pass(self, node: syntax.Pass) -> Result:
        return None

    def _break(self, node: syntax.Node) -> Result:
        if self.loop_depth == 0:
            raise self.error("break outside a loop", node)
        return tir.Continue(node.span) if isinstance(node, syntax.Continue) else tir.Break(node.span)

    def _return(self, node: syntax.Return) -> Result:
        value = self.expr(node.value) if node.value is not None else tir.IntImm("int32", 0)
        return tir.Return(value, node.span)

    def _assert(self, node: syntax.Assert) -> Result:
        cond = self.boolean(self.value(node.test), node.test, "an assert condition")
        kind, parts = "RuntimeError", ()
        msg = node.msg
        if isinstance(msg, syntax.Constant) and isinstance(msg.value, str):
            parts = (msg.value,)
        elif isinstance(msg, syntax.Tuple) and len(msg.elts) == 2:
            kind = self.str_arg(msg.elts[0], "the error kind")
            pieces = msg.elts[1].elts if isinstance(msg.elts[1], syntax.List | syntax.Tuple) else ()
            parts = tuple(self.str_arg(p, "a message part") for p in pieces)
        elif msg is not None:
            raise self.error('an assert message must be "text" or ("Kind", ["text"])', msg)
        return tir.AssertStmt(cond, kind, parts, node.span)

    def _nested_def(self, node: syntax.Node) -> Result:
        raise self.error(
            "nested definitions (T.macro, T.inline) are not supported: they need Python evaluation",
            node,
        )

    # ------------------------------------------------------------ expression statements

    def _expr_stmt(self, node: syntax.ExprStmt) -> Result:
        value = node.value
        name = syntax.dotted(value.func) if isinstance(value, syntax.Call) else None
        if name is not None and name.startswith("T.") and name[2:] in _STMT_CALLS:
            assert isinstance(value, syntax.Call)
            return _STMT_CALLS[name[2:]](self, value)
        if isinstance(value, syntax.Constant) and isinstance(value.value, str):
            return None  # a docstring
        return tir.Evaluate(self.expr(value), node.span)

    def _func_attr(self, call: syntax.Call) -> Result:
        if self.level != FUNCTION:
            raise self.error("T.func_attr must be at the top level of the function", call)
        if len(call.args) != 1 or call.keywords:
            raise self.error(f"T.func_attr expects 1 argument, got {len(call.args)}", call)
        self.func_attrs.extend(self.attr_dict(call.args[0]))
        return None

    def _evaluate(self, call: syntax.Call) -> Result:
        if len(call.args) != 1 or call.keywords:
            raise self.error(f"T.evaluate expects 1 argument, got {len(call.args)}", call)
        return tir.Evaluate(self.expr(call.args[0]), call.span)

    def _reads(self, call: syntax.Call) -> Result:
        self.reads_writes(call, "reads")

    def _writes(self, call: syntax.Call) -> Result:
        self.reads_writes(call, "writes")

    def _where(self, call: syntax.Call) -> Result:
        self.where(call)

    def _block_attr(self, call: syntax.Call) -> Result:
        self.block_attr(call)

    def _loop_control(self, call: syntax.Call) -> Result:
        if call.args or call.keywords:
            raise self.error(f"{syntax.dotted(call.func)} takes no arguments", call)
        if self.loop_depth == 0:
            raise self.error(f"{syntax.dotted(call.func)} outside a loop", call)
        if syntax.dotted(call.func) == "T.break_loop":
            return tir.Break(call.span)
        return tir.Continue(call.span)

    def _attr_stmt(self, call: syntax.Call) -> Result:
        """Flat `T.attr({"key": v})` (0.27) or `T.attr(node, key, value)`: body None."""
        return self.attrs(call)

    def attrs(self, call: syntax.Call) -> list[tir.Stmt]:
        if call.keywords:
            raise self.error("T.attr takes no keyword arguments", call.keywords[0])
        if len(call.args) == 1:
            pairs = self.attr_dict(call.args[0])
            node: Any = tir.IntImm("int32", 0, call.span)
            values = [(key, self.attr_stmt_value(v, call)) for key, v in pairs]
        elif len(call.args) == 3:
            node = self.attr_node(call.args[0])
            key = self.str_arg(call.args[1], "the attribute key")
            values = [(key, self.attr_stmt_value(self.value_of(call.args[2]), call))]
        else:
            raise self.error(f"T.attr expects 1 or 3 arguments, got {len(call.args)}", call)
        return [tir.AttrStmt(node, key, value, None, call.span) for key, value in values]

    def value_of(self, node: syntax.Node) -> Any:
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return node.value
        return self.expr(node)

    def attr_stmt_value(self, value: Any, node: syntax.Node) -> tir.PrimExpr:
        if isinstance(value, tir.PrimExpr):
            return value
        if isinstance(value, str):
            return tir.StringImm(value, span=node.span)
        if isinstance(value, bool | int | float):
            return materialize(Lit(value, node.span))
        raise self.error("a T.attr value must be a scalar or a string", node)

    def attr_node(self, node: syntax.Node) -> Any:
        if isinstance(node, syntax.Name):
            return self.lookup(node.id, node)
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return tir.StringImm(node.value, span=node.span)
        return self.expr(node)

    # ------------------------------------------------------------ assignments

    def _assign(self, node: syntax.Assign) -> Result:
        if len(node.targets) != 1:
            raise self.error("chained assignment is not supported in TIR", node)
        target, value = node.targets[0], node.value
        if isinstance(target, syntax.Subscript):
            return self.store(target, value, node)
        name = syntax.dotted(value.func) if isinstance(value, syntax.Call) else None
        if name is not None and name.startswith("T."):
            assert isinstance(value, syntax.Call)
            short = name[2:]
            if short in AXIS_KINDS:
                return self.axis(AXIS_KINDS[short], target, value)
            if short == "axis.remap":
                return self.remap(target, value)
            if short in META_BUILTINS:
                raise self.error(f"T.{short} is not supported: it needs Python evaluation", value)
        if not isinstance(target, syntax.Name):
            raise self.error("only a name, a buffer element or block axes can be assigned", target)
        if name is not None and name.startswith("T."):
            assert isinstance(value, syntax.Call)
            handler = _ASSIGN_CALLS.get(name[2:])
            if handler is not None:
                return handler(self, target, value)
            if dt.is_valid(name[2:]) and not value.args:
                return self.declare(target, name[2:], value)
        return self.bind(target, None, value, node, let=self.classic)

    def _ann_assign(self, node: syntax.AnnAssign) -> Result:
        if not isinstance(node.target, syntax.Name):
            raise self.error("only a name can be annotated", node.target)
        dtype, pointee, let = self.annotation(node.annotation)
        if node.value is None:
            if dtype is None:
                raise self.error("T.let needs a value", node)
            return self.declare(node.target, dtype, node, pointee)
        return self.bind(node.target, (dtype, pointee), node.value, node, let=let or self.classic)

    def annotation(self, node: syntax.Node) -> tuple[str | None, tuple[str, str] | None, bool]:
        """(dtype, pointee, is T.let) of `T.float32`, `T.handle("f32")`, `T.let[T.int32]`."""
        if syntax.dotted(node) == "T.let":
            return None, None, True
        if isinstance(node, syntax.Subscript) and syntax.dotted(node.value) == "T.let":
            if len(node.indices) != 1:
                raise self.error("T.let[...] takes one type", node)
            dtype, pointee, _ = self.annotation(node.indices[0])
            return dtype, pointee, True
        if isinstance(node, syntax.Call) and syntax.dotted(node.func) == "T.handle":
            return "handle", self.pointee(node), False
        name = syntax.dotted(node)
        if name is None or not name.startswith("T."):
            raise self.error("expected a TIR type such as T.int32", node)
        if not dt.is_valid(name[2:]) or name[2:] == "void":
            raise self.error(f"unknown dtype '{name[2:]}'", node)
        return name[2:], None, False

    def pointee(self, call: syntax.Call) -> tuple[str, str] | None:
        kwargs = {kw.name: kw.value for kw in call.keywords}
        args = list(call.args)
        dtype_node = args[0] if args else kwargs.get("dtype")
        scope_node = args[1] if len(args) > 1 else kwargs.get("storage_scope")
        if dtype_node is None:
            scope = self.str_arg(scope_node, "storage_scope") if scope_node else "global"
            return ("void", scope) if scope_node else None
        scope = self.str_arg(scope_node, "storage_scope") if scope_node is not None else "global"
        return self.dtype_arg(dtype_node), scope

    def declare(
        self, target: syntax.Name, dtype: str, node: syntax.Node, pointee: Any = None
    ) -> Result:
        """`n = T.int32()`: a var with no value (symbolic shape, or a `T.Let` key)."""
        var = self.predeclared.pop(target.id, None) if self.level == FUNCTION else None
        if var is None or var.dtype != dtype:
            var = tir.Var(target.id, dtype, pointee, target.span)
        self.check_rebind(target)
        self.define(target.id, var)
        return None

    def check_rebind(self, target: syntax.Name) -> None:
        old = self.scope.lookup(target.id)
        if isinstance(old, tir.Buffer):
            raise self.error(f"'{target.id}' is already a buffer and cannot be redefined", target)

    def bind(
        self, target: syntax.Name, annotated: Any, value_node: syntax.Node, node: syntax.Node, let: bool
    ) -> Result:
        """Classic `x = v` / `x: T.f32 = v` and 0.27 `x: T.let[...] = v` scope over the
        rest of the sequence (LetStmt); 0.27 `x = v` / `x: T.f32 = v` is a flat Bind."""
        dtype, pointee = annotated if annotated is not None else (None, None)
        value = self.typed(value_node, dtype) if dtype else self.expr(value_node)
        self.check_rebind(target)
        var = tir.Var(target.id, dtype or value.dtype, pointee, target.span)
        self.define(target.id, var)
        if let:
            return Scoped(tir.LetStmt(var, value, tir.Evaluate(tir.IntImm("int32", 0)), node.span))
        return tir.Bind(var, value, node.span)

    def store(self, target: syntax.Subscript, value_node: syntax.Node, node: syntax.Node) -> Result:
        if isinstance(target.value, syntax.Name):
            found = self.lookup(target.value.id, target.value)
            if not isinstance(found, tir.Buffer):
                raise self.error(f"cannot store to '{target.value.id}': it is not a buffer", target)
        buffer = self.buffer_of(target.value)
        indices = self.indices(buffer, target)
        lanes = max((dt.lanes(i.dtype) for i in indices), default=1)
        value = self.typed(value_node, dt.with_lanes(buffer.dtype, lanes))
        return tir.BufferStore(buffer, value, indices, node.span)

    def _aug_assign(self, node: syntax.AugAssign) -> Result:
        if not isinstance(node.target, syntax.Subscript):
            raise self.error("augmented assignment is only supported on buffer elements", node)
        kind = _ARITH.get(node.op)
        load = self.value(node.target)
        if node.op in _BITWISE:
            new = self.bitwise(_BITWISE[node.op], load, self.value(node.value), node)
        elif kind is not None:
            new = self.binop(kind, load, self.value(node.value), node)
        else:
            raise self.error(f"operator '{node.op}=' is not supported in TIR", node)
        assert isinstance(load, tir.BufferLoad)
        return tir.BufferStore(load.buffer, new, load.indices, node.span)

    # ------------------------------------------------------------ buffers from assignments

    def _match_buffer(self, target: syntax.Name, call: syntax.Call) -> Result:
        if not call.args:
            raise self.error("T.match_buffer expects a handle or a buffer region first", call)
        source = call.args[0]
        if isinstance(source, syntax.Subscript):
            self.check_rebind(target)
            self.define(target.id, self.match_region(target.id, call))
            return None
        if self.level != FUNCTION:
            raise self.error("T.match_buffer of a parameter must be at the function's top level", call)
        handle = self.value(source)
        if not isinstance(handle, tir.Var) or handle not in self.handles:
            raise self.error("T.match_buffer expects a T.handle parameter", source)
        if self.handles[handle] is not None:
            raise self.error(f"parameter '{handle.name}' is matched twice", source)
        buffer = self.make_buffer(target.id, self.buffer_args(call, call.args[1:], "T.match_buffer"), call)
        self.handles[handle] = buffer
        self.check_rebind(target)
        self.define(target.id, buffer)
        return None

    def _alloc(self, target: syntax.Name, call: syntax.Call) -> Result:
        """`T.alloc_buffer` is block-level in classic and a flat statement in 0.27;
        `T.sblock_alloc_buffer` is always block-level."""
        short = syntax.dotted(call.func)[2:]  # type: ignore[index]
        self.check_rebind(target)
        if short == "sblock_alloc_buffer" or (short == "alloc_buffer" and self.classic):
            self.define(target.id, self.block_alloc(target.id, call))
            return None
        named = self.buffer_args(call, call.args, f"T.{short}")
        buffer = self.make_buffer(target.id, named, call, scope=_ALLOC_FORMS.get(short, "global"))
        self.define(target.id, buffer)
        return tir.AllocBuffer(buffer, short, call.span)

    def _buffer_alias(self, target: syntax.Name, call: syntax.Call) -> Result:
        """Classic `A = T.Buffer((n,), data=ptr)`: a name for a view, no statement."""
        self.check_rebind(target)
        self.define(target.id, self.make_buffer(target.id, self.buffer_args(call, call.args, "T.Buffer"), call))
        return None

    def _bind_call(self, target: syntax.Name, call: syntax.Call) -> Result:
        if len(call.args) != 1:
            raise self.error(f"T.bind expects 1 argument, got {len(call.args)}", call)
        return self.bind(target, None, call.args[0], call, let=False)

    # ------------------------------------------------------------ loops and branches

    def _for(self, node: syntax.For) -> Result:
        if not isinstance(node.iter, syntax.Call):
            raise self.error("a TIR loop iterates over range(...), T.grid(...) or T.serial(...)", node.iter)
        call = node.iter
        name = syntax.dotted(call.func) or ""
        if name == "T.grid":
            return self.grid(node, call)
        if name != "range" and name not in _LOOP_KINDS:
            raise self.error(f"unsupported loop iterator {name or 'expression'}", call)
        if not isinstance(node.target, syntax.Name):
            raise self.error("a loop variable must be a single name", node.target)
        kind = _LOOP_KINDS.get(name, tir.SERIAL)
        kwargs = {kw.name: kw.value for kw in call.keywords}
        allowed = {"step"} if name == "range" else {"annotations", "step"}
        if kind == tir.THREAD_BINDING:
            allowed.add("thread")
        for kw in call.keywords:
            if kw.name not in allowed:
                raise self.error(f"{name} got an unexpected keyword argument '{kw.name}'", kw)
        most = 3 if name == "range" else 2
        if not 1 <= len(call.args) <= most:
            raise self.error(f"{name} expects 1 to {most} arguments, got {len(call.args)}", call)
        start, stop = (Lit(0, call.span), self.value(call.args[0])) if len(call.args) == 1 else (
            self.value(call.args[0]), self.value(call.args[1]))
        step_node = call.args[2] if len(call.args) == 3 else kwargs.get("step")
        thread = ""
        if kind == tir.THREAD_BINDING:
            if "thread" not in kwargs:
                raise self.error("T.thread_binding needs thread=\"...\"", call)
            thread = self.str_arg(kwargs["thread"], "thread")
        annotations = self.attr_dict(kwargs["annotations"]) if "annotations" in kwargs else ()
        lo, hi = self.matched(start, stop, call)
        step = self.expr(step_node, lo.dtype) if step_node is not None else None
        if step is not None and isinstance(step, tir.IntImm) and step.value == 1:
            step = None
        extent = difference(hi, lo, call.span)
        return self.loop(node.target, lo, extent, kind, node.body, node, thread, annotations, step)

    def grid(self, node: syntax.For, call: syntax.Call) -> Result:
        targets = node.target.elts if isinstance(node.target, syntax.Tuple) else (node.target,)
        if call.keywords:
            raise self.error("T.grid takes no keyword arguments", call.keywords[0])
        if len(targets) != len(call.args):
            raise self.error(f"T.grid has {len(call.args)} extents for {len(targets)} loop variables", node.target)
        extents = [self.expr(arg) for arg in call.args]
        return self.loop_nest(list(zip(targets, extents, strict=True)), node)

    def loop_nest(self, levels: list[tuple[syntax.Node, tir.PrimExpr]], node: syntax.For) -> tir.Stmt:
        target, extent = levels[0]
        zero = make_const(0, extent.dtype)
        if len(levels) == 1:
            return self.loop(target, zero, extent, tir.SERIAL, node.body, node)
        return self.loop(target, zero, extent, tir.SERIAL, (), node, inner=levels[1:])

    def loop(
        self,
        target: syntax.Node,
        start: tir.PrimExpr,
        extent: tir.PrimExpr,
        kind: str,
        body: tuple[syntax.Node, ...],
        node: syntax.For,
        thread: str = "",
        annotations: tuple[tuple[str, Any], ...] = (),
        step: tir.PrimExpr | None = None,
        inner: list[tuple[syntax.Node, tir.PrimExpr]] | None = None,
    ) -> tir.Stmt:
        if not isinstance(target, syntax.Name):
            raise self.error("a loop variable must be a name", target)
        if not dt.is_integer_like(start.dtype):
            raise self.error(f"loop bounds must be integers, got {start.dtype}", node.iter)
        var = tir.Var(target.id, start.dtype, span=target.span)
        saved = self.level
        self.level = None
        self.push()
        self.define(target.id, var)
        self.loop_ranges[var] = tir.Range(start, extent, node.iter.span)
        self.loop_depth += 1
        try:
            stmt = self.loop_nest(inner, node) if inner else self.body(body, node.span)
        finally:
            self.loop_depth -= 1
            self.pop()
            self.level = saved
        return tir.For(var, start, extent, kind, stmt, thread, annotations, step, node.span)

    def _while(self, node: syntax.While) -> Result:
        cond = self.boolean(self.value(node.test), node.test, "a while condition")
        self.loop_depth += 1
        try:
            return tir.While(cond, self.nested_body(node.body, node.span), node.span)
        finally:
            self.loop_depth -= 1

    def _if(self, node: syntax.If) -> Result:
        cond = self.boolean(self.value(node.test), node.test, "an if condition")
        then = self.nested_body(node.body, node.span)
        orelse = self.nested_body(node.orelse, node.span) if node.orelse else None
        return tir.IfThenElse(cond, then, orelse, node.span)

    # ------------------------------------------------------------ with

    def _with(self, node: syntax.With) -> Result:
        return self.with_items(node.items, node.body, node)

    def with_items(
        self, items: tuple[syntax.WithItem, ...], body: tuple[syntax.Node, ...], node: syntax.With
    ) -> Result:
        item = items[0]
        rest_items = items[1:]
        call = item.context
        name = syntax.dotted(call.func) if isinstance(call, syntax.Call) else None
        handler = _WITH_CALLS.get(name[2:]) if name and name.startswith("T.") else None
        if handler is None or not isinstance(call, syntax.Call):
            shown = name or "this expression"
            raise self.error(f"{shown} cannot be used in a with statement in TIR", call)
        if rest_items:
            wrapper = syntax.With(rest_items, body, node.span)
            body = (wrapper,)
        return handler(self, call, item.target, body, node)

    def _with_block(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        self.no_target(target, "T.block")
        return self.with_block(call, body, node)

    def _with_init(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        self.no_target(target, "T.init")
        self.with_init(call, body, node)
        return None

    def _with_attr(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        self.no_target(target, "T.attr")
        attrs = self.attrs(call)
        inner = self.nested_body(body, node.span)
        for attr in reversed(attrs):
            assert isinstance(attr, tir.AttrStmt)
            inner = dataclasses.replace(attr, body=inner)
        return inner

    def _with_let(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        """Classic `with T.LetStmt(value) as x:`."""
        if not isinstance(target, syntax.Name) or not call.args:
            raise self.error("write T.LetStmt as `with T.LetStmt(value) as x:`", node)
        dtype = None
        for kw in call.keywords:
            if kw.name != "type_annotation":
                raise self.error(f"T.LetStmt got an unexpected keyword argument '{kw.name}'", kw)
            dtype = self.annotation(kw.value)[0]
        value = self.typed(call.args[0], dtype) if dtype else self.expr(call.args[0])
        var = tir.Var(target.id, value.dtype, span=target.span)
        self.push()
        self.define(target.id, var)
        try:
            inner = self.body(body, node.span)
        finally:
            self.pop()
        return tir.LetStmt(var, value, inner, node.span)

    def _with_decl(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        """Classic `with T.decl_buffer(...) as b:`."""
        if not isinstance(target, syntax.Name):
            raise self.error("write `with T.decl_buffer(...) as name:`", node)
        self.push()
        try:
            decl = self._alloc(target, call)
            inner = self.body(body, node.span)
        finally:
            self.pop()
        assert isinstance(decl, tir.Stmt)
        return [decl, inner]

    def no_target(self, target: syntax.Node | None, what: str) -> None:
        if target is not None:
            raise self.error(f"{what} does not bind a name", target)


Handler = Callable[[StmtParser, Any], Result]
_STMTS: dict[type, Handler] = {
    syntax.ExprStmt: StmtParser._expr_stmt,
    syntax.Assign: StmtParser._assign,
    syntax.AnnAssign: StmtParser._ann_assign,
    syntax.AugAssign: StmtParser._aug_assign,
    syntax.For: StmtParser._for,
    syntax.While: StmtParser._while,
    syntax.If: StmtParser._if,
    syntax.With: StmtParser._with,
    syntax.Assert: StmtParser._assert,
    syntax.Return: StmtParser._return,
    syntax.Pass: StmtParser._pass,
    syntax.Break: StmtParser._break,
    syntax.Continue: StmtParser._break,
    syntax.FunctionDef: StmtParser._nested_def,
}
_STMT_CALLS: dict[str, Callable[[StmtParser, syntax.Call], Result]] = {
    "func_attr": StmtParser._func_attr,
    "evaluate": StmtParser._evaluate,
    "reads": StmtParser._reads,
    "writes": StmtParser._writes,
    "where": StmtParser._where,
    "block_attr": StmtParser._block_attr,
    "sblock_attr": StmtParser._block_attr,
    "attr": StmtParser._attr_stmt,
    "break_loop": StmtParser._loop_control,
    "continue_loop": StmtParser._loop_control,
}
_ASSIGN_CALLS: dict[str, Callable[[StmtParser, syntax.Name, syntax.Call], Result]] = {
    "match_buffer": StmtParser._match_buffer,
    "alloc_buffer": StmtParser._alloc,
    "sblock_alloc_buffer": StmtParser._alloc,
    "alloc_local": StmtParser._alloc,
    "alloc_shared": StmtParser._alloc,
    "decl_buffer": StmtParser._alloc,
    "Buffer": StmtParser._buffer_alias,
    "bind": StmtParser._bind_call,
}
_WITH_CALLS: dict[str, Callable[[StmtParser, syntax.Call, Any, Any, syntax.With], Result]] = {
    "block": StmtParser._with_block,
    "sblock": StmtParser._with_block,
    "init": StmtParser._with_init,
    "attr": StmtParser._with_attr,
    "LetStmt": StmtParser._with_let,
    "decl_buffer": StmtParser._with_decl,
}
