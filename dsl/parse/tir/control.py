"""TIR control flow: `for` loops (`range`, `T.grid`, `T.serial`, ...), `while`,
`if`/`else`, and the `with` forms (blocks, `T.init`, `T.attr`, classic
`T.LetStmt` and `T.decl_buffer`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tvmlite.diagnostics import did_you_mean
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.grammar import syntax

if TYPE_CHECKING:  # stmt.py builds this helper: a runtime import would be a cycle
    from tvmlite.dsl.parse.tir.stmt import StmtParser
from tvmlite.dsl.parse.tir.assign import Result
from tvmlite.dsl.parse.tir.ops import Lit, difference, make_const, materialize

# `T.serial(n, unroll=False)`: the annotation it stands for
UNROLL_OFF = ("disable_unroll", True)
LOOP_KINDS = {
    "T.serial": tir.SERIAL,
    "T.parallel": tir.PARALLEL,
    "T.vectorized": tir.VECTORIZED,
    "T.unroll": tir.UNROLLED,
    "T.thread_binding": tir.THREAD_BINDING,
}


class ControlParser:
    """Loops, branches and `with` statements."""

    def __init__(self, fn: StmtParser) -> None:
        self.fn = fn  # the function body being parsed: its state and other helpers
        self.ctx = fn.ctx
        self.exprs = fn.exprs

    def _for(self, node: syntax.For) -> Result:
        if not isinstance(node.iter, syntax.Call):
            raise self.ctx.error(
                "a TIR loop iterates over range(...), T.grid(...) or T.serial(...)", node.iter
            )
        call = node.iter
        name = syntax.dotted(call.func) or ""
        if name == "T.grid":
            return self.grid(node, call)
        if name != "range" and name not in LOOP_KINDS:
            hint = did_you_mean(name, ["range", "T.grid", *LOOP_KINDS])
            raise self.ctx.error(f"unsupported loop iterator {name or 'expression'}{hint}", call)
        if not isinstance(node.target, syntax.Name):
            raise self.ctx.error("a loop variable must be a single name", node.target)
        kind = LOOP_KINDS.get(name, tir.SERIAL)
        kwargs = {kw.name: kw.value for kw in call.keywords}
        allowed = {"step"} if name == "range" else {"annotations", "step"}
        if kind == tir.SERIAL and name != "range":
            allowed.add("unroll")
        if kind == tir.THREAD_BINDING:
            allowed.add("thread")
        for kw in call.keywords:
            if kw.name not in allowed:
                hint = did_you_mean(kw.name, allowed, quote=True)
                raise self.ctx.error(
                    f"{name} got an unexpected keyword argument '{kw.name}'{hint}", kw
                )
        most = 3 if name == "range" else 2
        if not 1 <= len(call.args) <= most:
            raise self.ctx.error(
                f"{name} expects 1 to {most} arguments, got {len(call.args)}", call
            )
        bounds = [self.exprs.integer(arg, "a loop bound") for arg in call.args[:2]]
        start, stop = (Lit(0, call.span), bounds[0]) if len(bounds) == 1 else bounds
        step_node = call.args[2] if len(call.args) == 3 else kwargs.get("step")
        thread = ""
        if kind == tir.THREAD_BINDING:
            if "thread" not in kwargs:
                raise self.ctx.error('T.thread_binding needs thread="..."', call)
            thread = self.exprs.str_arg(kwargs["thread"], "thread")
        annotations = (
            self.fn.buffers.attr_dict(kwargs["annotations"]) if "annotations" in kwargs else ()
        )
        if "unroll" in kwargs:
            annotations += (self.unroll_annotation(kwargs["unroll"]),)
        lo, hi = self.exprs.matched(start, stop, call)
        step = None
        if step_node is not None:
            step = materialize(self.exprs.integer(step_node, "a loop step"), lo.dtype)
        if isinstance(step, tir.IntImm) and step.value == 1:
            step = None
        extent = difference(hi, lo, call.span)
        return self.loop(node.target, lo, extent, kind, node.body, node, thread, annotations, step)

    def unroll_annotation(self, node: syntax.Node) -> tuple[str, Any]:
        """`T.serial(n, unroll=...)`, as TVM keeps it: `True` or a count is
        `pragma_unroll`, `False` is `disable_unroll`."""
        value = self.fn.buffers.attr_value(node)
        if value is False:
            return UNROLL_OFF
        if value is True or isinstance(value, int) and value > 0:
            return ("pragma_unroll", value)
        raise self.ctx.error("unroll= takes True, False or a positive count", node)

    def grid(self, node: syntax.For, call: syntax.Call) -> Result:
        targets = node.target.elts if isinstance(node.target, syntax.Tuple) else (node.target,)
        if call.keywords:
            raise self.ctx.error("T.grid takes no keyword arguments", call.keywords[0])
        if len(targets) != len(call.args):
            raise self.ctx.error(
                f"T.grid has {len(call.args)} extents for {len(targets)} loop variables",
                node.target,
            )
        extents = [self.grid_extent(arg) for arg in call.args]
        return self.loop_nest(list(zip(targets, extents, strict=True)), node)

    def grid_extent(self, node: syntax.Node) -> tir.PrimExpr:
        """A bare integer in `T.grid` is an int32 extent, as in TVM (which prints a
        wider one as `T.int64(n)`)."""
        value = self.exprs.integer(node, "a T.grid extent")
        if isinstance(value, Lit) and dt.range_error("int32", value.value):
            raise self.ctx.error(
                f"T.grid extent {value.value} does not fit int32: write T.int64({value.value})",
                node,
            )
        return materialize(value, "int32")

    def loop_nest(
        self, levels: list[tuple[syntax.Node, tir.PrimExpr]], node: syntax.For
    ) -> tir.Stmt:
        target, extent = levels[0]
        zero = make_const(0, extent.dtype)
        if len(levels) == 1:
            return self.loop(target, zero, extent, tir.SERIAL, node.body, node)
        # each further loop variable of a T.grid is one more loop inside this one
        self.ctx.nest(levels[1][0], "loop")
        loop = self.loop(target, zero, extent, tir.SERIAL, (), node, inner=levels[1:])
        self.ctx.depth -= 1
        return loop

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
            raise self.ctx.error("a loop variable must be a name", target)
        if not dt.is_integer_like(start.dtype):
            raise self.ctx.error(f"loop bounds must be integers, got {start.dtype}", node.iter)
        var = tir.Var(target.id, start.dtype, span=target.span)
        saved = self.fn.level
        self.fn.level = None
        self.exprs.push()
        self.exprs.define(target.id, var)
        self.fn.loop_ranges[var] = tir.Range(start, extent, node.iter.span)
        self.fn.loop_depth += 1
        try:
            stmt = self.loop_nest(inner, node) if inner else self.fn.body(body, node.span)
        finally:
            self.fn.loop_depth -= 1
            self.exprs.pop()
            self.fn.level = saved
        return tir.For(var, start, extent, kind, stmt, thread, annotations, step, node.span)

    def _while(self, node: syntax.While) -> Result:
        cond = self.exprs.boolean(self.exprs.value(node.test), node.test, "a while condition")
        self.fn.loop_depth += 1
        try:
            return tir.While(cond, self.fn.nested_body(node.body, node.span), node.span)
        finally:
            self.fn.loop_depth -= 1

    def _if(self, node: syntax.If) -> Result:
        cond = materialize(self.exprs.value(node.test))
        if not (dt.is_integer_like(cond.dtype) and dt.lanes(cond.dtype) == 1):  # `if i:` as TVM
            raise self.ctx.error(f"an if condition must be bool, got {cond.dtype}", node.test)
        then = self.fn.nested_body(node.body, node.span)
        orelse = self.fn.nested_body(node.orelse, node.span) if node.orelse else None
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
        handler = WITH_CALLS.get(name[2:]) if name and name.startswith("T.") else None
        if handler is None or not isinstance(call, syntax.Call):
            shown = name or "this expression"
            hint = did_you_mean(shown, [f"T.{k}" for k in WITH_CALLS])
            raise self.ctx.error(f"{shown} cannot be used in a with statement in TIR{hint}", call)
        if rest_items:
            wrapper = syntax.With(rest_items, body, node.span)
            body = (wrapper,)
        return handler(self, call, item.target, body, node)

    def _with_block(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        self.no_target(target, "T.block")
        return self.fn.block.with_block(call, body, node)

    def _with_init(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        self.no_target(target, "T.init")
        self.fn.block.with_init(call, body, node)
        return None

    def _with_attr(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        self.no_target(target, "T.attr")
        attrs = self.fn.buffers.attrs(call)
        inner = self.fn.nested_body(body, node.span)
        for attr in reversed(attrs):
            assert isinstance(attr, tir.AttrStmt)
            inner = dataclasses.replace(attr, body=inner)
        return inner

    def _with_hint(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        self.no_target(target, "T.hint")
        hint = self.fn.buffers.hint(call)
        return dataclasses.replace(hint, body=self.fn.nested_body(body, node.span))

    def _with_let(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        """Classic `with T.LetStmt(value) as x:`."""
        if not isinstance(target, syntax.Name) or not call.args:
            raise self.ctx.error("write T.LetStmt as `with T.LetStmt(value) as x:`", node)
        dtype = None
        for kw in call.keywords:
            if kw.name != "type_annotation":
                raise self.ctx.error(
                    f"T.LetStmt got an unexpected keyword argument '{kw.name}'", kw
                )
            dtype = self.fn.assign.annotation(kw.value)[0]
        value = self.exprs.typed(call.args[0], dtype) if dtype else self.exprs.expr(call.args[0])
        var = tir.Var(target.id, value.dtype, span=target.span)
        self.exprs.push()
        self.exprs.define(target.id, var)
        try:
            inner = self.fn.body(body, node.span)
        finally:
            self.exprs.pop()
        return tir.LetStmt(var, value, inner, node.span)

    def _with_decl(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        """Classic `with T.decl_buffer(...) as b:`."""
        if not isinstance(target, syntax.Name):
            raise self.ctx.error("write `with T.decl_buffer(...) as name:`", node)
        self.exprs.push()
        try:
            decl = self.fn.assign._alloc(target, call)
            inner = self.fn.body(body, node.span)
        finally:
            self.exprs.pop()
        assert isinstance(decl, tir.Stmt)
        return [decl, inner]

    def _with_launch(self, call: syntax.Call, target: Any, body: Any, node: syntax.With) -> Result:
        """`with T.launch_thread("threadIdx.x", n) as tx:` / `with T.launch_thread(tx, n):`."""
        if target is not None and not isinstance(target, syntax.Name):
            raise self.ctx.error("a thread var must be a single name", target)
        self.exprs.push()
        try:
            attr = self.fn.assign.launch_thread(call, target)
            inner = self.fn.nested_body(body, node.span)
        finally:
            self.exprs.pop()
        return dataclasses.replace(attr, body=inner)

    def no_target(self, target: syntax.Node | None, what: str) -> None:
        if target is not None:
            raise self.ctx.error(f"{what} does not bind a name", target)


WITH_CALLS: dict[str, Callable[[ControlParser, syntax.Call, Any, Any, syntax.With], Result]] = {
    "block": ControlParser._with_block,
    "sblock": ControlParser._with_block,
    "init": ControlParser._with_init,
    "attr": ControlParser._with_attr,
    "hint": ControlParser._with_hint,
    "LetStmt": ControlParser._with_let,
    "decl_buffer": ControlParser._with_decl,
    "launch_thread": ControlParser._with_launch,
}
