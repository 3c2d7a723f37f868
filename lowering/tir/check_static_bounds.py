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
- its index is linear in the vars of enclosing loops whose bounds are linear in
  values fixed for the call (constants, scalar parameters, shape vars; let
  bindings and widening casts are seen through), so each var takes every value of
  its range independently and the index reaches exactly the extremes computed
  here, when its loops run;
- those extremes and the extent of the axis differ by a constant: `j` of
  `range(65)` against 64, `i` of `range(n + 1)` against `n`.
A loop of a symbolic extent runs no iteration when the extent is 0 or less: an
access under one is refused "whenever the loop over i runs", since a call that
runs it writes past the buffer. `tvms check --target` runs it too.
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

from tvmlite.diagnostics import VerifyError
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


# A linear integer expression: {loop var or other atom: coefficient}, constant.
Form = tuple[dict[object, int], int]


class _StaticBounds(StmtExprVisitor):
    """Raise on the first access that is out of bounds whenever it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.ranges: dict[tir.Var, tuple[Form, Form]] = {}  # loop var -> (least, greatest)
        self.lets: dict[tir.Var, tir.PrimExpr] = {}  # let var -> its value, lets expanded
        self.conditional = 0  # depth of branches around the node being visited
        self.unknown: list[tir.Var] = []  # enclosing loops of a symbolic extent

    # ------------------------------------------------------------ scopes

    def visit_For(self, s: tir.For) -> None:
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        low, extent = self._form(s.min), self._form(s.extent)
        count = as_int(s.extent)
        if low is None or extent is None or (count is not None and count < 1):
            # Runs an unknown part of its range, or never: nothing in it is certain.
            self.conditional += 1
            self.visit_stmt(s.body)
            self.conditional -= 1
            return
        # Runs every value from low to low + extent - 1 (when it runs at all: a
        # symbolic extent may be 0, which the message then says).
        self.ranges[s.loop_var] = (low, _plus(_plus(low, extent), ({}, -1)))
        if count is None:
            self.unknown.append(s.loop_var)
        self.visit_stmt(s.body)
        if count is None:
            self.unknown.pop()
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
            found, size = self._range(index), self._form(extent)
            if found is None or size is None:
                continue
            low, high = found
            below = _constant(low)
            beyond = _constant(_plus(high, _scaled(size, -1)))
            if not ((below is not None and below < 0) or (beyond is not None and beyond >= 0)):
                continue
            on_axis = f" on axis {axis}" if len(indices) > 1 else ""
            values = _values(low, high)
            when = "on every call"
            if self.unknown:
                loops = ", ".join(v.name for v in self.unknown)
                plural = "s" if len(self.unknown) > 1 else ""
                when = f"whenever the loop{plural} over {loops} run{'' if plural else 's'}"
            raise VerifyError(
                f"{what} buffer {buffer.name} is out of bounds {when}: index "
                f"{expr_text(index)}{on_axis} {values}, outside [0, {expr_text(extent)})",
                span,
                span.source.filename if span is not None else None,
            )

    def _range(self, index: tir.PrimExpr) -> tuple[Form, Form] | None:
        """The exact least and greatest value `index` takes, when it is linear in
        loop vars (of bounds linear in values fixed for the call), else None."""
        if dt.lanes(index.dtype) != 1:
            return None
        form = self._form(index)
        if form is None:
            return None
        terms, const = form
        low: Form = ({}, const)
        high: Form = ({}, const)
        for key, coeff in terms.items():
            if isinstance(key, tir.Var) and key in self.ranges:
                first, last = self.ranges[key]
                low = _plus(low, _scaled(first if coeff > 0 else last, coeff))
                high = _plus(high, _scaled(last if coeff > 0 else first, coeff))
            elif isinstance(key, tir.Var) and key not in self.lets:
                low, high = _plus(low, ({key: coeff}, 0)), _plus(high, ({key: coeff}, 0))
            else:
                return None  # a load, a call: may differ from one iteration to the next
        # Index arithmetic wraps at its dtype's width: beyond it the extremes are not exact.
        whole = dt.int_range(index.dtype) if dt.is_int(index.dtype) else None
        for bound in (_constant(low), _constant(high)):
            if whole is None or (bound is not None and not whole[0] <= bound <= whole[1]):
                return None
        return low, high

    def _form(self, e: tir.PrimExpr) -> Form | None:
        """`e` (lets expanded) as a linear form over vars seen through widening casts."""
        form = linear_form(self._expand(e))
        if form is None:
            return None
        terms: dict[object, int] = {}
        for atom, coeff in form[0].items():
            key: object = _widened_var(atom.expr) or atom
            terms[key] = terms.get(key, 0) + coeff
        return terms, form[1]

    def _expand(self, e: tir.PrimExpr) -> tir.PrimExpr:
        return substitute(e, self.lets)


def _plus(a: Form, b: Form) -> Form:
    terms = dict(a[0])
    for key, coeff in b[0].items():
        terms[key] = terms.get(key, 0) + coeff
    return terms, a[1] + b[1]


def _scaled(a: Form, k: int) -> Form:
    return {key: coeff * k for key, coeff in a[0].items()}, a[1] * k


def _constant(a: Form) -> int | None:
    """The value of `a` when its vars cancel out, else None."""
    return a[1] if not any(a[0].values()) else None


def _values(low: Form, high: Form) -> str:
    """How the message says what an index takes: `is 5`, `runs from 1 to 4`,
    `runs from 0 to n`."""
    if _constant(_plus(high, _scaled(low, -1))) == 0:
        return f"is {_text(low)}"
    return f"runs from {_text(low)} to {_text(high)}"


def _text(form: Form) -> str:
    parts = []
    for key, coeff in form[0].items():
        if coeff:
            name = key.name if isinstance(key, tir.Var) else "(...)"
            parts.append((coeff, name if abs(coeff) == 1 else f"{abs(coeff)} * {name}"))
    if form[1] or not parts:
        parts.append((form[1], str(abs(form[1]))))
    text = ("-" if parts[0][0] < 0 else "") + parts[0][1]
    for coeff, part in parts[1:]:
        text += f" {'-' if coeff < 0 else '+'} {part}"
    return text


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
        check_static_bounds(func)
        return func


def check_static_bounds(func: tir.PrimFunc) -> None:
    """Raise a located VerifyError at the first access of `func` that is out of
    bounds whenever it runs (see the module docstring)."""
    body = LowerBlocks().transform(func).body  # a copy; no-op without blocks
    exits = _HasExit()
    exits.visit_stmt(body)
    if not exits.found:
        _StaticBounds().visit_stmt(body)
