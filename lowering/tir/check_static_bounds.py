"""CheckStaticBounds: refuse a prim function that accesses a buffer out of
bounds on every call, before it is compiled.

An unchecked build does not test indices at run time (as in TVM; a checked
build, InstrumentBoundCheckers, does), so `for i in T.grid(T.int64(10**11))`
writing `B[i]` of a 2-element buffer would write past the end of B and crash
the process. What can be known at compile time is refused with an error naming
the access, the range of its index and the extent.

The check only speaks when it is certain, so a valid program is never refused:
- the access is reached whenever the function runs: not under an `if`, a
  `while`, a branch of `T.if_then_else` or `T.Select`, nor in a function with
  `break`, `continue`, `T.ret`, an assert or an extern call, which can leave
  before it;
- its index is linear in the vars of enclosing loops with constant bounds (let
  bindings and widening casts are seen through), and every enclosing loop runs
  at least once, so each var takes every value of its range independently and
  the index reaches exactly the extremes computed here;
- the extent of the axis is a constant.
It looks at a function with its blocks lowered (a block's predicate and init
are `if`s there, its iter vars let bindings of the loop vars) and its buffers
not yet flattened, so each axis is checked against its own extent. Every build
runs it twice: at the schedule point, before any schedule (a schedule's splits
put `T.where` guards and `//`/`%` indices over the accesses, behind which the
check cannot see: a `T.grid(T.int64(10**11), ...)` over a 2-element axis is
certain as written, hidden once tiled), and in LowerTIR after LowerBlocks, for
the loops a hand-written schedule made.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import substitute
from tvmlite.dsl.arith import as_int, linear_form
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.lowering.tir.instrument_bound_checkers import expr_text, widens
from tvmlite.lowering.tir.lower_blocks import LowerBlocks
from tvmlite.lowering.transform import PrimFuncPass

# Statements after which the rest of a body may not run, and calls that may leave
# the function or the process (`T.ret`, code tvmlite does not see).
_EXITS = (tir.Break, tir.Continue, tir.Return, tir.AssertStmt, tir.While)
_EXIT_CALLS = frozenset(["ret", "call_extern", "call_packed", "call_cpacked", "call_llvm_intrin"])


class _HasExit(StmtExprVisitor):
    found = False

    def visit_stmt(self, s: tir.Stmt) -> None:
        if isinstance(s, _EXITS):
            self.found = True
        elif not self.found:
            super().visit_stmt(s)

    def visit_Call(self, e: tir.Call) -> None:
        if e.op in _EXIT_CALLS:
            self.found = True
        super().visit_Call(e)


class _StaticBounds(StmtExprVisitor):
    """Raise on the first access that is out of bounds whenever it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.ranges: dict[tir.Var, tuple[int, int]] = {}  # loop var -> (min, max)
        self.lets: dict[tir.Var, tir.PrimExpr] = {}  # let var -> its value, lets expanded
        self.conditional = 0  # depth of branches around the node being visited

    # ------------------------------------------------------------ scopes

    def visit_For(self, s: tir.For) -> None:
        low, extent = as_int(s.min), as_int(s.extent)
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        if low is None or extent is None or extent < 1:
            # Runs an unknown number of times, or never: nothing in it is certain.
            self.conditional += 1
            self.visit_stmt(s.body)
            self.conditional -= 1
            return
        self.ranges[s.loop_var] = (low, low + extent - 1)
        self.visit_stmt(s.body)
        del self.ranges[s.loop_var]

    def visit_Bind(self, s: tir.Bind) -> None:
        self.visit_expr(s.value)
        self.lets[s.var] = self._expand(s.value)

    def visit_LetStmt(self, s: tir.LetStmt) -> None:
        self.visit_expr(s.value)
        self.lets[s.var] = self._expand(s.value)
        self.visit_stmt(s.body)

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        self.visit_expr(s.condition)
        self.conditional += 1
        self.visit_stmt(s.then_case)
        if s.else_case is not None:
            self.visit_stmt(s.else_case)
        self.conditional -= 1

    def visit_Select(self, e: tir.Select) -> None:
        self.visit_expr(e.condition)
        self.conditional += 1
        self.visit_expr(e.true_value)
        self.visit_expr(e.false_value)
        self.conditional -= 1

    def visit_Call(self, e: tir.Call) -> None:
        if e.op != "if_then_else":
            super().visit_Call(e)
            return
        self.visit_expr(e.args[0])
        self.conditional += 1
        for arg in e.args[1:]:
            self.visit_expr(arg)
        self.conditional -= 1

    # ------------------------------------------------------------ accesses

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        super().visit_BufferStore(s)
        self._check(s.buffer, s.indices, "store to", s.span)

    def visit_BufferLoad(self, e: tir.BufferLoad) -> None:
        super().visit_BufferLoad(e)
        self._check(e.buffer, e.indices, "load from", e.span)

    def _check(
        self, buffer: tir.Buffer, indices: tuple[tir.PrimExpr, ...], what: str, span
    ) -> None:
        if self.conditional or len(indices) != len(buffer.shape):
            return
        for axis, (index, extent) in enumerate(zip(indices, buffer.shape, strict=True)):
            size = as_int(extent)
            found = self._range(index)
            if size is None or found is None or (0 <= found[0] and found[1] < size):
                continue
            where = f"{span.location()}: " if span is not None else ""
            on_axis = f" on axis {axis}" if len(indices) > 1 else ""
            low, high = found
            values = f"is {low}" if low == high else f"runs from {low} to {high}"
            raise TVMLiteError(
                f"{where}{what} buffer {buffer.name} is out of bounds on every call: index "
                f"{expr_text(index)}{on_axis} {values}, outside [0, {size})"
            )

    def _range(self, index: tir.PrimExpr) -> tuple[int, int] | None:
        """The exact least and greatest value `index` takes, when it is linear in
        loop vars of constant ranges (else None)."""
        if dt.lanes(index.dtype) != 1:
            return None
        form = linear_form(self._expand(index))
        if form is None:
            return None
        terms, low = form
        high = low
        for atom, coeff in terms.items():
            var = _widened_var(atom.expr)
            if var is None or var not in self.ranges:
                return None
            first, last = self.ranges[var]
            low += min(coeff * first, coeff * last)
            high += max(coeff * first, coeff * last)
        # Index arithmetic wraps at its dtype's width: beyond it the extremes are not exact.
        whole = dt.int_range(index.dtype) if dt.is_int(index.dtype) else None
        if whole is None or low < whole[0] or high > whole[1]:
            return None
        return low, high

    def _expand(self, e: tir.PrimExpr) -> tir.PrimExpr:
        return substitute(e, self.lets)


def _widened_var(e: tir.PrimExpr) -> tir.Var | None:
    """The var `e` is, through integer casts that keep every value."""
    while isinstance(e, tir.Cast) and widens(e.value.dtype, e.dtype):
        e = e.value
    return e if isinstance(e, tir.Var) else None


@dataclass(frozen=True)
class CheckStaticBounds(PrimFuncPass):
    """Refuse accesses that are out of bounds on every call (see the module
    docstring for where builds run it); the function is returned unchanged."""

    name: str = "CheckStaticBounds"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        body = LowerBlocks().transform(func).body  # a copy; no-op without blocks
        exits = _HasExit()
        exits.visit_stmt(body)
        if not exits.found:
            _StaticBounds().visit_stmt(body)
        return func
