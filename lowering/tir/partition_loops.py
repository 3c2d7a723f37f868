"""PartitionLoops: run the whole vectors of a guarded loop without the guard.

A schedule that splits a loop of K iterations by a vector width W that does
not divide K (197 tokens, a symbolic sequence `s`) guards the last step:
`T.where(k_0 * 16 + k_1 < K)`, which LowerBlocks turns into an `if` around
the block's body. LLVM then keeps the vector loop scalar (a reduction over
4001 columns ran 20x slower than over 4000). As TVM's LoopPartition does,
a serial or parallel loop `o` whose body holds such tests, each a conjunct

    a * o + f(inner) + g < 0        (also written `x < y`, `x <= y`, `x > y`)

with `a > 0` a constant, `f` linear in loops inside `o` of constant range
and `g` not changing inside `o`, runs as two loops: `o` over [0, M) with the
tests dropped (true for every inner iteration: M is the first `o` where the
largest `f` can fail) and `o` over [M, extent) with the tests kept. Tests of
another form (a fused index `f // 28 < n`) stay where they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl.analysis import substitute, uses
from tvmlite.dsl.arith import linear_form
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering.transform import PrimFuncPass

_PARTITIONED = (tir.SERIAL, tir.PARALLEL)


def _conjuncts(e: tir.PrimExpr) -> list[tir.PrimExpr]:
    if isinstance(e, tir.BinaryOp) and e.kind == "and":
        return [*_conjuncts(e.a), *_conjuncts(e.b)]
    return [e]


def _as_negative(test: tir.PrimExpr) -> tir.PrimExpr | None:
    """An integer `d` such that the test is `d < 0`."""
    if not isinstance(test, tir.BinaryOp) or test.kind not in ("lt", "le", "gt", "ge"):
        return None
    a, b = (test.a, test.b) if test.kind in ("lt", "le") else (test.b, test.a)
    if not (canonical.is_index(a) and canonical.is_index(b)) or a.dtype != b.dtype:
        return None
    d = arith.sub(a, b)
    return d if test.kind in ("lt", "gt") else arith.sub(d, 1)


class _Inside(StmtExprVisitor):
    """What a loop body defines: loop vars with their constant ranges, and
    every other var it binds; and the `if` statements without `else`."""

    def __init__(self) -> None:
        self.ranges: dict[tir.Var, tuple[int, int]] = {}
        self.defined: set[tir.Var] = set()
        self.tests: list[tir.IfThenElse] = []

    def visit_For(self, s: tir.For) -> None:
        self.defined.add(s.loop_var)
        lo, extent = arith.as_int(s.min), arith.as_int(s.extent)
        if lo is not None and extent is not None and extent > 0 and s.step is None:
            self.ranges[s.loop_var] = (lo, lo + extent - 1)
        super().visit_For(s)

    def visit_LetStmt(self, s: tir.LetStmt) -> None:
        self.defined.add(s.var)
        super().visit_LetStmt(s)

    def visit_Bind(self, s: tir.Bind) -> None:
        self.defined.add(s.var)
        super().visit_Bind(s)

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        if s.else_case is None:
            self.tests.append(s)
        super().visit_IfThenElse(s)


def _bound(test: tir.PrimExpr, loop: tir.For, inside: _Inside) -> tir.PrimExpr | None:
    """M such that the test holds for every `o < M` and every inner iteration,
    when it has the form above; else None."""
    d = _as_negative(test)
    form = None if d is None else linear_form(d)
    if d is None or form is None:
        return None
    terms, const = form
    a = sum(coeff for atom, coeff in terms.items() if atom.expr is loop.loop_var)
    if a <= 0:
        return None
    largest: tir.PrimExpr = arith.const(const, d.dtype)
    for atom, coeff in terms.items():
        e = atom.expr
        if e is loop.loop_var or coeff == 0:
            continue
        if isinstance(e, tir.Var) and e in inside.ranges:
            lo, hi = inside.ranges[e]
            largest = arith.add(largest, coeff * (hi if coeff > 0 else lo))
        elif uses(e, inside.defined) or uses(e, {loop.loop_var}):
            return None
        else:
            largest = arith.add(largest, arith.mul(e, coeff))
    # a * o + largest < 0  <=>  o < ceil(-largest / a)
    first_fail = arith.floordiv(arith.add(arith.sub(arith.const(0, d.dtype), largest), a - 1), a)
    return canonical.Analyzer().simplify(arith.cast(loop.loop_var.dtype, first_fail))


class _DropTests(StmtExprMutator):
    """The `if` statements of `tests` without the conjuncts of `drop`."""

    def __init__(self, drop: dict[int, list[tir.PrimExpr]]) -> None:
        super().__init__()
        self.drop = drop

    def visit_IfThenElse(self, s: tir.IfThenElse) -> tir.Stmt:
        dropped = self.drop.get(id(s))
        s2 = super().visit_IfThenElse(s)
        if dropped is None or not isinstance(s2, tir.IfThenElse):
            return s2
        kept = [c for c in _conjuncts(s.condition) if not any(c is d for d in dropped)]
        if not kept:
            return s2.then_case
        condition = kept[0]
        for c in kept[1:]:
            condition = tir.BinaryOp("and", condition, c, "bool")
        return replace(s2, condition=condition)


class _PartitionLoops(StmtExprMutator):
    def visit_For(self, s: tir.For) -> tir.Stmt:
        loop = super().visit_For(s)
        assert isinstance(loop, tir.For)
        if loop.kind not in _PARTITIONED or loop.step is not None or arith.as_int(loop.min) != 0:
            return loop
        inside = _Inside()
        inside.visit_stmt(loop.body)
        drop: dict[int, list[tir.PrimExpr]] = {}
        bounds: list[tir.PrimExpr] = []
        for test in inside.tests:
            for c in _conjuncts(test.condition):
                bound = _bound(c, loop, inside)
                if bound is not None:
                    drop.setdefault(id(test), []).append(c)
                    bounds.append(bound)
        if not bounds:
            return loop
        return _split(loop, bounds, _DropTests(drop).visit_stmt(loop.body))


def _split(loop: tir.For, bounds: list[tir.PrimExpr], unguarded: tir.Stmt) -> tir.Stmt:
    """`loop` as [0, M) running `unguarded` and [M, extent) running its body."""
    analyzer = canonical.Analyzer()
    split = bounds[0]
    for b in bounds[1:]:
        split = arith.minimum(split, b)
    split = analyzer.simplify(arith.minimum(arith.maximum(split, 0), loop.extent))
    if arith.as_int(split) == 0:
        return loop
    main = replace(loop, extent=split, body=unguarded)
    if canonical.expr_equal(split, loop.extent):
        return main
    var = tir.Var(loop.loop_var.name, loop.loop_var.dtype)
    rest = analyzer.simplify(arith.sub(loop.extent, split))
    tail = replace(
        loop, loop_var=var, min=split, extent=rest, body=substitute(loop.body, {loop.loop_var: var})
    )
    return tir.seq([main, tail])


@dataclass(frozen=True)
class PartitionLoops(PrimFuncPass):
    """Loops guarded by a tail test, run as the whole part without the test and
    the tail with it."""

    name: str = "PartitionLoops"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return _PartitionLoops().visit_prim_func(func)
