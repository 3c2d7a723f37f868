"""SimplifyIndices: buffer indices in terms of the loops, simplified with the
loops' ranges (what TVM's lowering gets from substituting block bindings and
running its simplifier).

After LowerBlocks an access of a scheduled block reads through the bindings of
its iteration variables: `w[v_ff // 32, ..., v_ff % 32]` with `v_ff = f // 392 *
32 + ff_1` bound by a LetStmt. Knowing `0 <= ff_1 < 32`, that is `w[f // 392,
..., ff_1]`, contiguous in the vectorized loop `ff_1`; LLVM cannot see it once
the loop bounds are no longer constants (a parallel loop's task runs a range it
is given), and then does not vectorize. Here each integer index has the
bindings substituted and is put in canonical form (`dsl/canonical.py`) under the
ranges of the loops around it. The LetStmts stay for whatever else reads them;
indices that use no binding are left as they are (so lowering is idempotent).
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import canonical, tir
from tvmlite.dsl.analysis import loads, substitute, uses
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering.transform import PrimFuncPass

_INDEX = ("int32", "int64")


class _SimplifyIndices(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.analyzer = canonical.Analyzer()
        self.bindings: dict[tir.Var, tir.PrimExpr] = {}

    def _index(self, e: tir.PrimExpr) -> tir.PrimExpr:
        """Only indices through bindings change: what is already in loop
        variables (a lowered module lowered again) stays as it is."""
        e = self.visit_expr(e)
        if e.dtype not in _INDEX or not uses(e, self.bindings):
            return e
        return self.analyzer.simplify(substitute(e, self.bindings))

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        indices = tuple(self._index(i) for i in e.indices)
        return replace(e, buffer=self.visit_buffer(e.buffer), indices=indices)

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        indices = tuple(self._index(i) for i in s.indices)
        value = self.visit_expr(s.value)
        return replace(s, buffer=self.visit_buffer(s.buffer), value=value, indices=indices)

    def _bind(self, var: tir.Var, value: tir.PrimExpr) -> None:
        if var.dtype in _INDEX and value.dtype in _INDEX and not loads(value):
            self.bindings[var] = substitute(value, self.bindings)
        else:
            self.bindings.pop(var, None)  # a var bound twice: the earlier value is gone

    def visit_LetStmt(self, s: tir.LetStmt) -> tir.Stmt:
        self._bind(s.var, s.value)
        return super().visit_LetStmt(s)

    def visit_Bind(self, s: tir.Bind) -> tir.Stmt:
        self._bind(s.var, s.value)
        return super().visit_Bind(s)

    def visit_For(self, s: tir.For) -> tir.Stmt:
        """The body is simplified knowing the loop's range, and only the body: a
        var reused by a later loop must not keep this one's range."""
        var, known = s.loop_var, self.analyzer
        saved = known.ranges.pop(var, None), known.values.pop(var, None)
        constant = isinstance(s.min, tir.IntImm) and isinstance(s.extent, tir.IntImm)
        if constant and s.step is None and s.extent.value > 0:
            known.bind(var, s.min.value, s.extent.value)
        try:
            return super().visit_For(s)
        finally:
            known.ranges.pop(var, None)
            known.values.pop(var, None)
            if saved[0] is not None:
                known.ranges[var] = saved[0]
            if saved[1] is not None:
                known.values[var] = saved[1]


@dataclass(frozen=True)
class SimplifyIndices(PrimFuncPass):
    """Buffer indices of every prim function in loop variables, simplified."""

    name: str = "SimplifyIndices"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return _SimplifyIndices().visit_prim_func(func)
