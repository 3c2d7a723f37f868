"""TIR statement sequences and the statements that need no other home: `pass`,
`break`/`continue`, `return`, `assert`, and expression statements (`T.func_attr`,
`T.evaluate`, block headers, flat `T.attr`, bare calls).

A statement handler returns a Stmt, None (a header statement that changed a frame
or declared a name), or `Scoped`: a node whose body is the rest of the sequence
(a classic `x = v` LetStmt).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tvmlite.diagnostics import Span
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.comments import (
    ROOT_MARKERS,
    Comments,
    Remark,
    add,
    attached,
    carried,
    declaring,
    loose,
)
from tvmlite.dsl.parse.scope import ParseContext, Scope
from tvmlite.dsl.parse.tir.assign import AssignParser, Result, Scoped
from tvmlite.dsl.parse.tir.block import FUNCTION, BlockParser
from tvmlite.dsl.parse.tir.buffer import BufferParser
from tvmlite.dsl.parse.tir.control import ControlParser
from tvmlite.dsl.parse.tir.expr import ExprParser
from tvmlite.grammar import syntax


def seq(stmts: list[tir.Stmt], span: Span | None = None) -> tir.Stmt:
    """One statement, a flattened SeqStmt, or `Evaluate(0)` for nothing (as TVM)."""
    flat: list[tir.Stmt] = []
    for s in stmts:
        flat.extend(s.seq if isinstance(s, tir.SeqStmt) else (s,))
    if not flat:
        return tir.Evaluate(tir.IntImm("int32", 0), span)
    return flat[0] if len(flat) == 1 else tir.SeqStmt(tuple(flat), span)


def commented(result: Result, comments: Comments | None) -> Result:
    """A statement's result carrying the comments of the statement it came from
    (the first node, when it is several)."""
    if comments is None:
        return result
    if isinstance(result, Scoped):
        return Scoped(commented(result.stmt, comments))  # type: ignore[arg-type]
    if isinstance(result, list):
        return [commented(result[0], comments), *result[1:]]  # type: ignore[list-item]
    return attached(result, comments)


def after(stmt: tir.Stmt, lines: tuple[str, ...]) -> tir.Stmt:
    """`stmt` followed by comment lines (printed after it, at its indentation)."""
    if isinstance(stmt, tir.SeqStmt):  # flattened away by `seq`: the last one keeps them
        return dataclasses.replace(stmt, seq=(*stmt.seq[:-1], after(stmt.seq[-1], lines)))
    return dataclasses.replace(stmt, comments=add(stmt.comments, "after", Remark(lines)))


_SCOPED_WHY = " (a let binding or flat T.attr holds the statements after it)"


class StmtParser:
    """Parses a prim function's body (`func.parse_prim_func` drives it). Owns the
    body's state (block frames, loop ranges, handles, comments) and the statement
    dispatch; holds one helper per kind of statement, each of which reaches this
    state and the other helpers through its `fn`."""

    def __init__(self, ctx: ParseContext, scope: Scope) -> None:
        self.ctx = ctx
        self.exprs = ExprParser(ctx, scope)  # expressions; the name scopes
        self.buffers = BufferParser(self.exprs)  # declarations, regions, attributes
        self.exprs.region = self.buffers.region  # T.tile.* arguments
        self.exprs.attr_value = self.buffers.attr_value  # and their lists and options
        self.block = BlockParser(self)  # T.block headers and the blocks themselves
        self.assign = AssignParser(self)  # `=` statements: lets, buffers, stores
        self.control = ControlParser(self)  # loops, branches, `with`
        # statement kind -> its handler, bound to the helper that owns it
        self.handlers: dict[type, Callable[[Any], Result]] = {
            syntax.ExprStmt: self._expr_stmt,
            syntax.Assign: self.assign._assign,
            syntax.AnnAssign: self.assign._ann_assign,
            syntax.AugAssign: self.assign._aug_assign,
            syntax.For: self.control._for,
            syntax.While: self.control._while,
            syntax.If: self.control._if,
            syntax.With: self.control._with,
            syntax.Assert: self._assert,
            syntax.Return: self._return,
            syntax.Pass: self._pass,
            syntax.Break: self._break,
            syntax.Continue: self._break,
            syntax.FunctionDef: self._nested_def,
        }
        self.classic = ctx.dialect != "tvm-0.27"
        self.level: Any = FUNCTION
        self.blocks = []
        self.loop_ranges: dict[tir.Var, tir.Range] = {}
        self.loop_depth = 0
        self.root_allocs: list[tir.Buffer] = []
        self.func_attrs: list[tuple[str, Any]] = []
        self.handles: dict[tir.Var, tir.Buffer | None] = {}
        self.predeclared: dict[str, tir.Var] = {}
        self.env_threads: dict[tir.Var, str] = {}
        self.declared: list[str] = []  # free vars just declared in a body (`i = T.int32()`)
        self.node: syntax.Node | None = None  # the statement being parsed
        self.following: tuple[syntax.Node, ...] = ()  # the statements after it, same level
        # names whose `.source` the body reads (`T.reads(acc.source[0])`): 0.27 scalars
        # that are one-element buffers even when assigned once (`func.parse_prim_func`)
        self.source_names: frozenset[str] = frozenset()
        self.assigned_again: frozenset[str] = frozenset()  # names assigned more than once
        self.func_comments: Comments | None = None  # T.func_attr's
        self.root_comments: Comments | None = None  # root-level T.alloc_buffer's
        self.rooted = False  # the root block's comment line was met

    # ------------------------------------------------------------ sequences

    def body(self, nodes: tuple[syntax.Node, ...], span: Span | None = None) -> tir.Stmt:
        return seq(self.stmts(nodes, 0), span)

    def nested_body(self, nodes: tuple[syntax.Node, ...], span: Span | None = None) -> tir.Stmt:
        """A body in its own name frame, not directly in a block or the function."""
        saved = self.level
        self.level = None
        self.exprs.push()
        try:
            return self.body(nodes, span)
        finally:
            self.exprs.pop()
            self.level = saved

    def stmts(self, nodes: tuple[syntax.Node, ...], start: int) -> list[tir.Stmt]:
        out: list[tir.Stmt] = []
        pending: tuple[str, ...] = ()  # comments of statements that became no node
        names: tuple[str, ...] = ()  # free vars they declared, for the next one
        for i in range(start, len(nodes)):
            if not self.rooted and nodes[i].comments is not None and self.level is FUNCTION:  # type: ignore[attr-defined]
                pending = self.root_marker(nodes[i], pending)
            self.following = nodes[i + 1 :]
            result = self.stmt(nodes[i])
            names += tuple(self.declared)
            self.declared.clear()
            if result is not None and names:
                result = commented(result, declaring(None, names))
                names = ()
            comments = nodes[i].comments  # type: ignore[attr-defined]
            if comments is not None or pending:
                if result is None:
                    pending += loose(comments)
                    continue
                result = commented(result, carried(pending, comments))
                pending = ()
            if isinstance(result, Scoped):
                # the statements after it are its body: one level deeper
                if i + 1 < len(nodes):
                    self.ctx.nest(nodes[i + 1], "statement", _SCOPED_WHY)
                rest = seq(self.stmts(nodes, i + 1), nodes[i].span)
                if i + 1 < len(nodes):
                    self.ctx.depth -= 1
                out.append(dataclasses.replace(result.stmt, body=rest))
                return out
            if isinstance(result, list):
                out.extend(result)
            elif result is not None:
                out.append(result)
        if pending and out:
            out[-1] = after(out[-1], pending)
        elif pending:  # a body of declarations only: `pass` stands for it
            out.append(tir.Evaluate(tir.IntImm("int32", 0), comments=carried(pending, None)))
        return out

    def root_marker(self, node: syntax.Node, pending: tuple[str, ...]) -> tuple[str, ...]:
        """The printer writes the implicit root block as a comment line, which is its
        own: the first such line above a statement of the function body is taken
        off, and what was written before it (`pending` included) is the function's
        "root" comments. Returns what is still pending."""
        comments: Comments = node.comments  # type: ignore[attr-defined]
        head = comments.get("")
        if head is None or not any(line in ROOT_MARKERS for line in head.above):
            return pending
        k = next(k for k, line in enumerate(head.above) if line in ROOT_MARKERS)
        self.rooted = True
        node.comments = comments.replaced("", Remark(head.above[k + 1 :], head.trailing))  # type: ignore[attr-defined]
        if pending or k:
            above = Remark((*pending, *head.above[:k]))
            self.func_comments = add(self.func_comments, "root", above)
        return ()

    def stmt(self, node: syntax.Node) -> Result:
        handler = self.handlers.get(type(node))
        if handler is None:
            raise self.ctx.error(f"{type(node).__name__} statements are not supported in TIR", node)
        ctx = self.ctx
        ctx.nest(node, "statement")
        self.node = node
        result = handler(node)
        ctx.depth -= 1
        return result

    # ------------------------------------------------------------ simple statements

    def _pass(self, node: syntax.Pass) -> Result:
        return None

    def _break(self, node: syntax.Node) -> Result:
        if self.loop_depth == 0:
            raise self.ctx.error("break outside a loop", node)
        return (
            tir.Continue(node.span) if isinstance(node, syntax.Continue) else tir.Break(node.span)
        )

    def _return(self, node: syntax.Return) -> Result:
        value = self.exprs.expr(node.value) if node.value is not None else tir.IntImm("int32", 0)
        return tir.Return(value, node.span)

    def _assert(self, node: syntax.Assert) -> Result:
        cond = self.exprs.boolean(self.exprs.value(node.test), node.test, "an assert condition")
        kind, parts = "RuntimeError", ()
        msg = node.msg
        if isinstance(msg, syntax.Constant) and isinstance(msg.value, str):
            parts = (msg.value,)
        elif isinstance(msg, syntax.Tuple) and len(msg.elts) == 2:
            kind = self.exprs.str_arg(msg.elts[0], "the error kind")
            pieces = msg.elts[1].elts if isinstance(msg.elts[1], syntax.List | syntax.Tuple) else ()
            parts = tuple(self._message_part(p) for p in pieces)
        elif msg is not None:
            raise self.ctx.error('an assert message must be "text" or ("Kind", ["text"])', msg)
        return tir.AssertStmt(cond, kind, parts, node.span)

    def _message_part(self, node: syntax.Node) -> str | tir.PrimExpr:
        """A string, or an integer expression whose value the message reports."""
        if isinstance(node, syntax.Constant) and isinstance(node.value, str):
            return node.value
        value = self.exprs.expr(node)
        if not dt.is_integer_like(value.dtype) or dt.lanes(value.dtype) != 1:
            raise self.ctx.error("a message part must be a string or a scalar integer", node)
        return value

    def _nested_def(self, node: syntax.Node) -> Result:
        raise self.ctx.error(
            "nested definitions (T.macro, T.inline) are not supported: they need Python evaluation",
            node,
        )

    # ------------------------------------------------------------ expression statements

    def _expr_stmt(self, node: syntax.ExprStmt) -> Result:
        value = node.value
        name = syntax.dotted(value.func) if isinstance(value, syntax.Call) else None
        if name is not None and name.startswith("T.") and name[2:] in STMT_CALLS:
            assert isinstance(value, syntax.Call)
            return STMT_CALLS[name[2:]](self, value)
        if isinstance(value, syntax.Constant) and isinstance(value.value, str):
            return None  # a docstring
        return tir.Evaluate(self.exprs.expr(value), node.span)

    def _func_attr(self, call: syntax.Call) -> Result:
        if self.level != FUNCTION:
            raise self.ctx.error("T.func_attr must be at the top level of the function", call)
        if len(call.args) != 1 or call.keywords:
            raise self.ctx.error(f"T.func_attr expects 1 argument, got {len(call.args)}", call)
        self.func_attrs.extend(self.buffers.attr_dict(call.args[0]))
        self.func_comments = self.block.header_comments(self.func_comments, "func_attr")
        return None

    def _evaluate(self, call: syntax.Call) -> Result:
        if len(call.args) != 1 or call.keywords:
            raise self.ctx.error(f"T.evaluate expects 1 argument, got {len(call.args)}", call)
        value = self.exprs.expr(call.args[0])
        if isinstance(value, tir.Call) and value.op == "ret" and len(value.args) == 1:
            return tir.Return(value.args[0], call.span)  # classic spelling of `return v`
        return tir.Evaluate(value, call.span)

    def _reads(self, call: syntax.Call) -> Result:
        self.block.reads_writes(call, "reads")

    def _writes(self, call: syntax.Call) -> Result:
        self.block.reads_writes(call, "writes")

    def _where(self, call: syntax.Call) -> Result:
        self.block.where(call)

    def _block_attr(self, call: syntax.Call) -> Result:
        self.block.block_attr(call)

    def _loop_control(self, call: syntax.Call) -> Result:
        if call.args or call.keywords:
            raise self.ctx.error(f"{syntax.dotted(call.func)} takes no arguments", call)
        if self.loop_depth == 0:
            raise self.ctx.error(f"{syntax.dotted(call.func)} outside a loop", call)
        if syntax.dotted(call.func) == "T.break_loop":
            return tir.Break(call.span)
        return tir.Continue(call.span)

    def _hint(self, call: syntax.Call) -> Result:
        return self.buffers.hint(call)

    def _attr_stmt(self, call: syntax.Call) -> Result:
        """Flat `T.attr({"key": v})` (0.27) or `T.attr(node, key, value)`: body None."""
        return self.buffers.attrs(call)


STMT_CALLS: dict[str, Callable[[StmtParser, syntax.Call], Result]] = {
    "func_attr": StmtParser._func_attr,
    "evaluate": StmtParser._evaluate,
    "reads": StmtParser._reads,
    "writes": StmtParser._writes,
    "where": StmtParser._where,
    "block_attr": StmtParser._block_attr,
    "sblock_attr": StmtParser._block_attr,
    "attr": StmtParser._attr_stmt,
    "hint": StmtParser._hint,
    "break_loop": StmtParser._loop_control,
    "continue_loop": StmtParser._loop_control,
}
