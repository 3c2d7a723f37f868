"""PartitionLoops: run the whole vectors of a guarded loop without the guard.

A schedule that splits a loop of K iterations by a vector width W that does
not divide K (197 tokens, a symbolic sequence `s`) guards the last step:
`T.where(k_0 * 16 + k_1 < K)`, which LowerBlocks turns into an `if` around
the block's body. LLVM then keeps the vector loop scalar (a reduction over
4001 columns ran 20x slower than over 4000). The tests considered are the
conjuncts of `if` statements (without `else`) of the form

    a * o + f(inner) + g < 0        (also written `x < y`, `x <= y`, `x > y`)

for a loop `o`, with `a > 0` a constant, `f` linear in loops inside `o` of
constant range and `g` not changing inside `o`. From the outermost loop in:

- when every effect in the loop's body sits under one such test without an
  `f` (the test bounds `o` alone: a vector loop over a guarded row
  `f % 3 * 16 + l < 40`, the rows of a last tile), the loop runs only the
  iterations that pass, without the test;
- else a serial or parallel loop holding such tests runs, as TVM's
  LoopPartition does, as two loops: `o` over [0, M) with the tests dropped
  (true for every inner iteration: M is the first `o` where the largest `f`
  can fail) and `o` over [M, extent) with the tests kept (their vector loops
  then cut short by the first rule).

Tests of another form (a fused index `f // 28 < n`) stay where they are.
Unrolled loops keep their constant trip counts.
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


def _all_of(conds: list[tir.PrimExpr]) -> tir.PrimExpr:
    out = conds[0]
    for c in conds[1:]:
        out = tir.BinaryOp("and", out, c, "bool")
    return out


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
    """What a loop body defines (loop vars, with their constant ranges, and
    every other var it binds) and its `if` statements without `else`."""

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


@dataclass(frozen=True)
class _Bound:
    """A test holds for every inner iteration while the loop var is below
    `first_fail`; `exact` when no inner loop takes part (it then fails for
    every iteration from there on)."""

    first_fail: tir.PrimExpr
    exact: bool


def _bound(test: tir.PrimExpr, loop: tir.For, inside: _Inside) -> _Bound | None:
    d = _as_negative(test)
    form = None if d is None else linear_form(d)
    if d is None or form is None:
        return None
    terms, const = form
    a = sum(coeff for atom, coeff in terms.items() if atom.expr is loop.loop_var)
    if a <= 0:
        return None
    largest: tir.PrimExpr = arith.const(const, d.dtype)
    exact = True
    for atom, coeff in terms.items():
        e = atom.expr
        if e is loop.loop_var or coeff == 0:
            continue
        if isinstance(e, tir.Var) and e in inside.ranges:
            lo, hi = inside.ranges[e]
            largest = arith.add(largest, coeff * (hi if coeff > 0 else lo))
            exact = False
        elif uses(e, inside.defined) or uses(e, {loop.loop_var}):
            return None
        else:
            largest = arith.add(largest, arith.mul(e, coeff))
    # a * o + largest < 0  <=>  o < ceil(-largest / a)
    first_fail = arith.floordiv(arith.add(arith.sub(arith.const(0, d.dtype), largest), a - 1), a)
    simplified = canonical.Analyzer().simplify(arith.cast(loop.loop_var.dtype, first_fail))
    return _Bound(simplified, exact)


class _Effects(StmtExprVisitor):
    """The tests every effect (store, call, assert) of a body runs under; an
    effect outside any test makes the list empty for good."""

    def __init__(self) -> None:
        self.open: list[tir.PrimExpr] = []
        self.guards: list[list[tir.PrimExpr]] = []
        self.unguarded = False

    def _effect(self) -> None:
        if not self.open:
            self.unguarded = True
        self.guards.append([c for cond in self.open for c in _conjuncts(cond)])

    def shared(self) -> list[tir.PrimExpr]:
        """The conjuncts every effect runs under."""
        if self.unguarded or not self.guards:
            return []
        first, *rest = self.guards
        return [c for c in first if all(any(canonical.expr_equal(c, g) for g in r) for r in rest)]

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        if s.else_case is not None:
            self._effect()  # both branches run under the tests around
            return
        self.open.append(s.condition)
        self.visit_stmt(s.then_case)
        self.open.pop()

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        self._effect()

    def visit_Evaluate(self, s: tir.Evaluate) -> None:
        self._effect()

    def visit_AssertStmt(self, s: tir.AssertStmt) -> None:
        self._effect()


class _DropTests(StmtExprMutator):
    """The `if` statements of a body without the conjuncts equal to `drop`."""

    def __init__(self, drop: list[tir.PrimExpr]) -> None:
        super().__init__()
        self.drop = drop

    def visit_IfThenElse(self, s: tir.IfThenElse) -> tir.Stmt:
        s2 = super().visit_IfThenElse(s)
        if not isinstance(s2, tir.IfThenElse) or s2.else_case is not None:
            return s2
        kept = [
            c
            for c in _conjuncts(s2.condition)
            if not any(canonical.expr_equal(c, d) for d in self.drop)
        ]
        if len(kept) == len(_conjuncts(s2.condition)):
            return s2
        return replace(s2, condition=_all_of(kept)) if kept else s2.then_case


def _least(values: list[tir.PrimExpr]) -> tir.PrimExpr:
    out = values[0]
    for v in values[1:]:
        out = arith.minimum(out, v)
    return out


def _shrink(loop: tir.For) -> tir.For | None:
    """The loop cut to the iterations its shared exact tests let through."""
    inside = _Inside()
    inside.visit_stmt(loop.body)
    effects = _Effects()
    effects.visit_stmt(loop.body)
    tests, bounds = [], []
    for c in effects.shared():
        bound = _bound(c, loop, inside)
        if bound is not None and bound.exact:
            tests.append(c)
            bounds.append(bound.first_fail)
    if not bounds:
        return None
    runs = arith.minimum(arith.maximum(arith.sub(_least(bounds), loop.min), 0), loop.extent)
    body = _DropTests(tests).visit_stmt(loop.body)
    return replace(loop, extent=canonical.Analyzer().simplify(runs), body=body)


def _partition(loop: tir.For) -> tir.Stmt | None:
    """The loop as its unguarded whole steps and its guarded rest."""
    inside = _Inside()
    inside.visit_stmt(loop.body)
    tests, bounds = [], []
    for test in inside.tests:
        for c in _conjuncts(test.condition):
            bound = _bound(c, loop, inside)
            if bound is not None:
                tests.append(c)
                bounds.append(bound.first_fail)
    if not bounds:
        return None
    analyzer = canonical.Analyzer()
    split = analyzer.simplify(arith.minimum(arith.maximum(_least(bounds), 0), loop.extent))
    if arith.as_int(split) == 0:
        return None
    main = replace(loop, extent=split, body=_DropTests(tests).visit_stmt(loop.body))
    if canonical.expr_equal(split, loop.extent):
        return main
    var = tir.Var(loop.loop_var.name, loop.loop_var.dtype)
    rest = analyzer.simplify(arith.sub(loop.extent, split))
    body = substitute(loop.body, {loop.loop_var: var})
    return tir.seq([main, replace(loop, loop_var=var, min=split, extent=rest, body=body)])


class _PartitionLoops(StmtExprMutator):
    def visit_For(self, s: tir.For) -> tir.Stmt:
        if s.kind != tir.UNROLLED and s.step is None:
            done: tir.Stmt | None = _shrink(s)
            if done is None and s.kind in _PARTITIONED and arith.as_int(s.min) == 0:
                done = _partition(s)
            if done is not None:
                # The tests it used are gone: the loops made are visited for others.
                return self.visit_stmt(done)
        return super().visit_For(s)


@dataclass(frozen=True)
class PartitionLoops(PrimFuncPass):
    """Loops guarded by a tail test, run as the whole part without the test and
    the tail with it."""

    name: str = "PartitionLoops"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return _PartitionLoops().visit_prim_func(func)
