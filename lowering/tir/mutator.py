"""The TIR mutator every lowering pass builds on.

Dispatch is a dict from node class to bound method, built once per instance, so a
pass overrides `visit_<ClassName>` and nothing else. Nodes are rebuilt only when a
child changed: "nothing changed" is an `is` check, and untouched subtrees are
shared between the input and the output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tvmlite.dsl import tir

EXPR_CLASSES: tuple[type, ...] = (
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
    tir.Let,
    tir.Call,
    tir.BufferLoad,
)
STMT_CLASSES: tuple[type, ...] = (
    tir.BufferStore,
    tir.LetStmt,
    tir.Bind,
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


def replace(node: Any, **changes: Any) -> Any:
    """`dataclasses.replace` that returns `node` itself when no field changed."""
    if all(getattr(node, key) is value for key, value in changes.items()):
        return node
    return dataclasses.replace(node, **changes)


class StmtExprMutator:
    """Identity transform over TIR statements and expressions."""

    def __init__(self) -> None:
        self._expr: dict[type, Callable[[Any], tir.PrimExpr]] = {
            cls: getattr(self, f"visit_{cls.__name__}") for cls in EXPR_CLASSES
        }
        self._stmt: dict[type, Callable[[Any], tir.Stmt]] = {
            cls: getattr(self, f"visit_{cls.__name__}") for cls in STMT_CLASSES
        }

    # ------------------------------------------------------------ entry points

    def expr(self, e: tir.PrimExpr) -> tir.PrimExpr:
        return self._expr[type(e)](e)

    def stmt(self, s: tir.Stmt) -> tir.Stmt:
        return self._stmt[type(s)](s)

    def exprs(self, items: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        new = tuple(self.expr(e) for e in items)
        return items if all(a is b for a, b in zip(new, items, strict=True)) else new

    def buffer(self, b: tir.Buffer) -> tir.Buffer:
        """Hook for passes that swap buffers (match_buffer views, flattening)."""
        return b

    def run(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return replace(func, body=self.stmt(func.body))

    # ------------------------------------------------------------ expressions

    def visit_Var(self, e: tir.Var) -> tir.PrimExpr:
        return e

    def visit_IntImm(self, e: tir.IntImm) -> tir.PrimExpr:
        return e

    def visit_FloatImm(self, e: tir.FloatImm) -> tir.PrimExpr:
        return e

    def visit_StringImm(self, e: tir.StringImm) -> tir.PrimExpr:
        return e

    def visit_Cast(self, e: tir.Cast) -> tir.PrimExpr:
        return replace(e, value=self.expr(e.value))

    def visit_BinaryOp(self, e: tir.BinaryOp) -> tir.PrimExpr:
        return replace(e, a=self.expr(e.a), b=self.expr(e.b))

    def visit_Not(self, e: tir.Not) -> tir.PrimExpr:
        return replace(e, a=self.expr(e.a))

    def visit_Select(self, e: tir.Select) -> tir.PrimExpr:
        return replace(
            e,
            condition=self.expr(e.condition),
            true_value=self.expr(e.true_value),
            false_value=self.expr(e.false_value),
        )

    def visit_Ramp(self, e: tir.Ramp) -> tir.PrimExpr:
        return replace(e, base=self.expr(e.base), stride=self.expr(e.stride))

    def visit_Broadcast(self, e: tir.Broadcast) -> tir.PrimExpr:
        return replace(e, value=self.expr(e.value))

    def visit_Let(self, e: tir.Let) -> tir.PrimExpr:
        return replace(e, value=self.expr(e.value), body=self.expr(e.body))

    def visit_Call(self, e: tir.Call) -> tir.PrimExpr:
        return replace(e, args=self.exprs(e.args))

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        return replace(e, buffer=self.buffer(e.buffer), indices=self.exprs(e.indices))

    # ------------------------------------------------------------ statements

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        return replace(
            s, buffer=self.buffer(s.buffer), value=self.expr(s.value), indices=self.exprs(s.indices)
        )

    def visit_LetStmt(self, s: tir.LetStmt) -> tir.Stmt:
        return replace(s, value=self.expr(s.value), body=self.stmt(s.body))

    def visit_Bind(self, s: tir.Bind) -> tir.Stmt:
        return replace(s, value=self.expr(s.value))

    def visit_AttrStmt(self, s: tir.AttrStmt) -> tir.Stmt:
        body = None if s.body is None else self.stmt(s.body)
        value = self.expr(s.value) if isinstance(s.value, tir.PrimExpr) else s.value
        return replace(s, value=value, body=body)

    def visit_AssertStmt(self, s: tir.AssertStmt) -> tir.Stmt:
        return replace(s, condition=self.expr(s.condition))

    def visit_For(self, s: tir.For) -> tir.Stmt:
        step = None if s.step is None else self.expr(s.step)
        return replace(
            s, min=self.expr(s.min), extent=self.expr(s.extent), body=self.stmt(s.body), step=step
        )

    def visit_While(self, s: tir.While) -> tir.Stmt:
        return replace(s, condition=self.expr(s.condition), body=self.stmt(s.body))

    def visit_Break(self, s: tir.Break) -> tir.Stmt:
        return s

    def visit_Continue(self, s: tir.Continue) -> tir.Stmt:
        return s

    def visit_IfThenElse(self, s: tir.IfThenElse) -> tir.Stmt:
        else_case = None if s.else_case is None else self.stmt(s.else_case)
        return replace(
            s,
            condition=self.expr(s.condition),
            then_case=self.stmt(s.then_case),
            else_case=else_case,
        )

    def visit_SeqStmt(self, s: tir.SeqStmt) -> tir.Stmt:
        seq = tuple(self.stmt(x) for x in s.seq)
        return s if all(a is b for a, b in zip(seq, s.seq, strict=True)) else replace(s, seq=seq)

    def visit_Evaluate(self, s: tir.Evaluate) -> tir.Stmt:
        return replace(s, value=self.expr(s.value))

    def visit_Return(self, s: tir.Return) -> tir.Stmt:
        return replace(s, value=self.expr(s.value))

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> tir.Stmt:
        return replace(s, buffer=self.buffer(s.buffer))

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        init = None if s.init is None else self.stmt(s.init)
        return replace(s, body=self.stmt(s.body), init=init)

    def visit_BlockRealize(self, s: tir.BlockRealize) -> tir.Stmt:
        block = self.stmt(s.block)
        assert isinstance(block, tir.Block)
        return replace(
            s,
            iter_values=self.exprs(s.iter_values),
            predicate=self.expr(s.predicate),
            block=block,
        )


def seq(stmts: list[tir.Stmt]) -> tir.Stmt:
    """One statement from a list, flattening nested sequences."""
    flat: list[tir.Stmt] = []
    for s in stmts:
        flat.extend(s.seq if isinstance(s, tir.SeqStmt) else (s,))
    return flat[0] if len(flat) == 1 else tir.SeqStmt(tuple(flat))
