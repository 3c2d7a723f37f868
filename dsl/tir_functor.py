"""Dispatch over TIR nodes, and the read-only visitor every TIR analysis builds on.

`TIRFunctor` maps a node's class to the subclass's `visit_<ClassName>` method.
The table is built once per class (when the class is created), so a visit is a
dict lookup and a call: no reflection per node. A functor that lacks a method
for a node it meets raises a clear error naming both.

`StmtExprVisitor` visits every field of every node: block iter-var domains,
reads/writes regions, alloc and match buffers, buffer data/shape/strides/
elem_offset, loop annotations, attribute nodes. Variable *definitions* (loop,
let, bind and block iter vars, parameters, a defined buffer's data var) go to
`visit_var_def`, uses to `visit_Var`; buffers at their definition go to
`visit_buffer_def`, at every use to `visit_buffer`. A pass overrides the few
methods it cares about and calls `super()` to keep walking.

Traversal is recursive, two Python frames per level of expression nesting (the
depth the parser accepts stays well inside Python's default limit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import tir

EXPR_NODES: tuple[type[tir.PrimExpr], ...] = (
    tir.Var,
    tir.IntImm,
    tir.FloatImm,
    tir.StringImm,
    tir.Cast,
    tir.BinaryOp,
    tir.Not,
    tir.Select,
    tir.Ramp,
    tir.Broadcast,
    tir.Shuffle,
    tir.Let,
    tir.Call,
    tir.BufferLoad,
)
STMT_NODES: tuple[type[tir.Stmt], ...] = (
    tir.BufferStore,
    tir.LetStmt,
    tir.Bind,
    tir.ScopeIdDef,
    tir.AttrStmt,
    tir.AssertStmt,
    tir.For,
    tir.While,
    tir.Break,
    tir.Continue,
    tir.IfThenElse,
    tir.SeqStmt,
    tir.Evaluate,
    tir.Return,
    tir.AllocBuffer,
    tir.Block,
    tir.BlockRealize,
)

Table = dict[type, Callable[[Any, Any], Any]]


def dispatch_table(cls: type, nodes: tuple[type, ...]) -> Table:
    """`{node class: cls.visit_<NodeName>}` for the nodes `cls` has a method for."""
    table: Table = {}
    for node in nodes:
        method = getattr(cls, f"visit_{node.__name__}", None)
        if method is not None:
            table[node] = method
    return table


class TIRFunctor:
    """Dispatch only: `visit_expr` and `visit_stmt` call `visit_<ClassName>`.
    Subclasses that produce something other than IR (codegen) start here."""

    _expr_table: ClassVar[Table] = {}
    _stmt_table: ClassVar[Table] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._expr_table = dispatch_table(cls, EXPR_NODES)
        cls._stmt_table = dispatch_table(cls, STMT_NODES)

    def visit_expr(self, e: tir.PrimExpr) -> Any:
        try:
            method = self._expr_table[type(e)]
        except KeyError:
            raise self._unhandled(e) from None
        return method(self, e)

    def visit_stmt(self, s: tir.Stmt) -> Any:
        try:
            method = self._stmt_table[type(s)]
        except KeyError:
            raise self._unhandled(s) from None
        return method(self, s)

    def _unhandled(self, node: object) -> TVMLiteError:
        return TVMLiteError(f"{type(self).__name__} cannot handle a {type(node).__name__} node")


class StmtExprVisitor(TIRFunctor):
    """Read-only walk over every field of TIR statements and expressions."""

    def visit_prim_func(self, func: tir.PrimFunc) -> None:
        for param in func.params:
            self.visit_var_def(param)
        for _, buffer in func.buffer_map:
            self.visit_buffer_def(buffer)
        self.visit_stmt(func.body)

    # ------------------------------------------------------------ hooks

    def visit_var_def(self, var: tir.Var) -> None:
        """A variable being defined (its uses go to `visit_Var`)."""

    def visit_buffer(self, buffer: tir.Buffer) -> None:
        """A buffer where it is used (load, store, region, attribute)."""
        self.visit_expr(buffer.data)
        self._buffer_fields(buffer)

    def visit_buffer_def(self, buffer: tir.Buffer) -> None:
        """A buffer where it is defined: parameter, alloc, match_buffer, AllocBuffer."""
        self.visit_var_def(buffer.data)
        self._buffer_fields(buffer)

    def _buffer_fields(self, buffer: tir.Buffer) -> None:
        for dim in buffer.shape:
            self.visit_expr(dim)
        for stride in buffer.strides:
            self.visit_expr(stride)
        if buffer.elem_offset is not None:
            self.visit_expr(buffer.elem_offset)

    def visit_range(self, r: tir.Range) -> None:
        self.visit_expr(r.min)
        self.visit_expr(r.extent)

    def visit_buffer_region(self, region: tir.BufferRegion) -> None:
        self.visit_buffer(region.buffer)
        for r in region.region:
            self.visit_range(r)

    def visit_match_buffer(self, match: tir.MatchBufferRegion) -> None:
        self.visit_buffer_region(match.source)
        self.visit_buffer_def(match.buffer)

    def visit_iter_var(self, iv: tir.IterVar) -> None:
        self.visit_range(iv.dom)
        self.visit_var_def(iv.var)

    def visit_attr_value(self, value: Any) -> None:
        """An annotation value or attribute node: expressions and buffers are
        visited (also inside tuples); strings and numbers are data."""
        if isinstance(value, tir.PrimExpr):
            self.visit_expr(value)
        elif isinstance(value, tir.Buffer):
            self.visit_buffer(value)
        elif isinstance(value, tuple):
            for item in value:
                self.visit_attr_value(item)
        elif isinstance(value, tir.AttrDict):
            self.visit_attr_value(value.items)
        elif isinstance(value, tir.IterVar):  # a launched GPU thread defines its var
            self.visit_iter_var(value)
        elif isinstance(value, tir.CommReducer):  # its lambda defines lhs and rhs
            for var in (*value.lhs, *value.rhs):
                self.visit_var_def(var)
            for e in (*value.result, *value.identity):
                self.visit_expr(e)

    def visit_annotations(self, annotations: tuple[tuple[str, Any], ...]) -> None:
        for _, value in annotations:
            self.visit_attr_value(value)

    # ------------------------------------------------------------ expressions

    def visit_Var(self, e: tir.Var) -> None:
        pass

    def visit_IntImm(self, e: tir.IntImm) -> None:
        pass

    def visit_FloatImm(self, e: tir.FloatImm) -> None:
        pass

    def visit_StringImm(self, e: tir.StringImm) -> None:
        pass

    def visit_Cast(self, e: tir.Cast) -> None:
        self.visit_expr(e.value)

    def visit_BinaryOp(self, e: tir.BinaryOp) -> None:
        self.visit_expr(e.a)
        self.visit_expr(e.b)

    def visit_Not(self, e: tir.Not) -> None:
        self.visit_expr(e.a)

    def visit_Select(self, e: tir.Select) -> None:
        self.visit_expr(e.condition)
        self.visit_expr(e.true_value)
        self.visit_expr(e.false_value)

    def visit_Ramp(self, e: tir.Ramp) -> None:
        self.visit_expr(e.base)
        self.visit_expr(e.stride)

    def visit_Broadcast(self, e: tir.Broadcast) -> None:
        self.visit_expr(e.value)

    def visit_Shuffle(self, e: tir.Shuffle) -> None:
        for v in (*e.vectors, *e.indices):
            self.visit_expr(v)

    def visit_Let(self, e: tir.Let) -> None:
        self.visit_expr(e.value)
        self.visit_var_def(e.var)
        self.visit_expr(e.body)

    def visit_Call(self, e: tir.Call) -> None:
        for arg in e.args:
            if isinstance(arg, tir.BufferRegion):  # tile operators take regions
                self.visit_buffer_region(arg)
            else:  # (and Python bools as flags, lists)
                self.visit_attr_value(arg)
        self.visit_annotations(e.kwargs)

    def visit_BufferLoad(self, e: tir.BufferLoad) -> None:
        self.visit_buffer(e.buffer)
        for index in e.indices:
            self.visit_expr(index)

    # ------------------------------------------------------------ statements

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        self.visit_buffer(s.buffer)
        self.visit_expr(s.value)
        for index in s.indices:
            self.visit_expr(index)

    def visit_LetStmt(self, s: tir.LetStmt) -> None:
        self.visit_expr(s.value)
        self.visit_var_def(s.var)
        self.visit_stmt(s.body)

    def visit_Bind(self, s: tir.Bind) -> None:
        self.visit_expr(s.value)
        self.visit_var_def(s.var)

    def visit_ScopeIdDef(self, s: tir.ScopeIdDef) -> None:
        for e in (*(s.extents or ()), *(s.preferred or ())):
            self.visit_expr(e)
        for var in s.vars:
            self.visit_var_def(var)

    def visit_AttrStmt(self, s: tir.AttrStmt) -> None:
        self.visit_attr_value(s.node)
        self.visit_attr_value(s.value)
        if s.body is not None:
            self.visit_stmt(s.body)

    def visit_AssertStmt(self, s: tir.AssertStmt) -> None:
        self.visit_expr(s.condition)
        for part in s.message:
            if not isinstance(part, str):
                self.visit_expr(part)

    def visit_For(self, s: tir.For) -> None:
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        if s.step is not None:
            self.visit_expr(s.step)
        self.visit_var_def(s.loop_var)
        self.visit_annotations(s.annotations)
        self.visit_stmt(s.body)

    def visit_While(self, s: tir.While) -> None:
        self.visit_expr(s.condition)
        self.visit_stmt(s.body)

    def visit_Break(self, s: tir.Break) -> None:
        pass

    def visit_Continue(self, s: tir.Continue) -> None:
        pass

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        self.visit_expr(s.condition)
        self.visit_stmt(s.then_case)
        if s.else_case is not None:
            self.visit_stmt(s.else_case)

    def visit_SeqStmt(self, s: tir.SeqStmt) -> None:
        for item in s.seq:
            self.visit_stmt(item)

    def visit_Evaluate(self, s: tir.Evaluate) -> None:
        self.visit_expr(s.value)

    def visit_Return(self, s: tir.Return) -> None:
        self.visit_expr(s.value)

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> None:
        if s.source is not None:
            self.visit_buffer(s.source)
        if s.data_value is not None:
            self.visit_expr(s.data_value)
        self.visit_buffer_def(s.buffer)
        self.visit_annotations(s.annotations)

    def visit_Block(self, s: tir.Block) -> None:
        """Definitions first (iter vars, allocations, match buffers), then the
        regions, annotations, init and body that may use them."""
        for iv in s.iter_vars:
            self.visit_iter_var(iv)
        for buffer in s.alloc_buffers:
            self.visit_buffer_def(buffer)
        for match in s.match_buffers:
            self.visit_match_buffer(match)
        for region in s.reads:
            self.visit_buffer_region(region)
        for region in s.writes:
            self.visit_buffer_region(region)
        self.visit_annotations(s.annotations)
        if s.init is not None:
            self.visit_stmt(s.init)
        self.visit_stmt(s.body)

    def visit_BlockRealize(self, s: tir.BlockRealize) -> None:
        for value in s.iter_values:
            self.visit_expr(value)
        self.visit_expr(s.predicate)
        self.visit_stmt(s.block)
