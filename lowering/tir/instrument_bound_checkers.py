"""InstrumentBoundCheckers: checked builds, `build(mod, checked=True)` or the
PassContext config `tir.instrument_bound_checkers` (TVM's name for it).

Every buffer load and store gets a check that each of its indices lies in
[0, extent) of its axis. A check is an AssertStmt placed before the statement
that makes the access, so nothing is read or written out of bounds; a failed
check makes the kernel return its status, which the caller turns into a
TVMLiteError with the assert's message (the path of every TIR assert:
`signature.py`, `codegen/llvm_kernel.py`, the host's `run_kernel`). The message
names the access, the index with the value it had, and the extent (with its
value when it is symbolic); the caller adds the function. The values are
message parts that are expressions, filled in by the failing kernel.

- It runs after LowerBlocks and before FlattenBuffers, while buffers still have
  their dims: `B[i, j + 1]` is checked against axis 1's extent, not only
  against the end of B's storage (where it would land in the next row).
- Loads inside an expression are checked before the statement that evaluates
  it. A load in a branch of `T.if_then_else` (which evaluates lazily, as padding
  relies on) is checked only when that branch is taken, and a load under a `Let`
  sees the binding; a `while` condition is checked before every evaluation.
  `T.address_of(A[i])` takes an address and reads nothing: it is not checked.
- Vector indices: a Ramp is in bounds when both its ends are, a Broadcast when
  its value is; any other vector index is checked lane by lane.
- Checks that cannot fail are left out: `arith.IntBounds` knows the ranges of loop
  and let variables, and a loop var whose loop runs over `range(n)` indexes an
  axis of extent `n`. Only the half of a check that may fail is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import uses
from tvmlite.dsl.arith import Bounds, IntBounds
from tvmlite.dsl.module import CLASSIC
from tvmlite.dsl.ops.shape_arith import equal, show
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering.tir.flatten_buffers import INDEX, add, mul, to_index
from tvmlite.lowering.transform import PassContext, PrimFuncPass
from tvmlite.printer.names import NameTable
from tvmlite.printer.tir_expr import ExprPrinter

CHECKED_KEY = "tir.instrument_bound_checkers"
TRUE = tir.IntImm("bool", 1)
_TEXT_LIMIT = 120  # characters of an index in a message

# Scalar intrinsics that act lane by lane on vectors (what `_lane` may split).
_LANEWISE_CALLS = frozenset(
    ["if_then_else", "shift_left", "shift_right", "bitwise_and", "bitwise_or", "bitwise_xor"]
)


def bound_checks_enabled() -> bool:
    """Whether the current PassContext asks for a checked build."""
    return PassContext.current().get(CHECKED_KEY, False)  # a bool: PassContext checks


Scope = tuple[tir.Var, tir.PrimExpr] | tir.PrimExpr  # a let binding, or a guard


class _BoundChecker(StmtExprMutator):
    """Check every buffer access of one lowered-blocks PrimFunc."""

    def __init__(self) -> None:
        super().__init__()
        self.bounds = IntBounds(any_value=True)
        self.loops: dict[tir.Var, tir.For] = {}
        self.lets: dict[tir.Var, tir.PrimExpr] = {}
        self.checks: list[tir.Stmt] = []  # for the statement being visited
        self.scope: list[Scope] = []  # lets and guards around the expression being visited

    # ------------------------------------------------------------ statements

    def visit_stmt(self, s: tir.Stmt) -> tir.Stmt:
        outer, self.checks = self.checks, []
        try:
            new = super().visit_stmt(s)
            return tir.seq([*self.checks, new]) if self.checks else new
        finally:
            self.checks = outer

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        new = super().visit_BufferStore(s)
        assert isinstance(new, tir.BufferStore)
        self._check(new.buffer, new.indices, "store to")
        return new

    def visit_For(self, s: tir.For) -> tir.Stmt:
        with self._binding(s.loop_var, self.bounds.loop_range(s), loop=s):
            return super().visit_For(s)

    def visit_LetStmt(self, s: tir.LetStmt) -> tir.Stmt:
        value = self.visit_expr(s.value)
        with self._binding(s.var, self.bounds.of(value), value=value):
            return replace(s, value=value, body=self.visit_stmt(s.body))

    def visit_Bind(self, s: tir.Bind) -> tir.Stmt:
        value = self.visit_expr(s.value)
        # Known for the rest of the enclosing scope, where the var is visible.
        self.lets[s.var] = value
        found = self.bounds.of(value)
        if found is not None:
            self.bounds.ranges[s.var] = found
        return replace(s, value=value)

    def visit_While(self, s: tir.While) -> tir.Stmt:
        outer, self.checks = self.checks, []
        condition = self.visit_expr(s.condition)
        before, self.checks = self.checks, outer
        body = self.visit_stmt(s.body)
        if not before:
            return replace(s, condition=condition, body=body)
        # The condition runs before every iteration, so its checks must too.
        leave = tir.IfThenElse(tir.Not(condition), tir.Break())
        return tir.While(TRUE, tir.seq([*before, leave, body]), s.span)

    # ------------------------------------------------------------ expressions

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        new = super().visit_BufferLoad(e)
        assert isinstance(new, tir.BufferLoad)
        self._check(new.buffer, new.indices, "load from")
        return new

    def visit_Call(self, e: tir.Call) -> tir.PrimExpr:
        if e.op == "address_of" and isinstance(e.args[0], tir.BufferLoad):
            load = e.args[0]
            return replace(e, args=(replace(load, indices=self.visit_exprs(load.indices)),))
        if e.op == "if_then_else" and dt.lanes(e.args[0].dtype) == 1:
            cond = self.visit_expr(e.args[0])
            then = self._guarded(cond, e.args[1])
            other = self._guarded(tir.Not(cond), e.args[2])
            return replace(e, args=(cond, then, other))
        return super().visit_Call(e)

    def visit_Let(self, e: tir.Let) -> tir.PrimExpr:
        value = self.visit_expr(e.value)
        self.scope.append((e.var, value))
        try:
            with self._binding(e.var, self.bounds.of(value)):
                return replace(e, value=value, body=self.visit_expr(e.body))
        finally:
            self.scope.pop()

    def _guarded(self, guard: tir.PrimExpr, e: tir.PrimExpr) -> tir.PrimExpr:
        self.scope.append(guard)
        try:
            return self.visit_expr(e)
        finally:
            self.scope.pop()

    @contextmanager
    def _binding(
        self,
        var: tir.Var,
        bounds: Bounds | None,
        loop: tir.For | None = None,
        value: tir.PrimExpr | None = None,
    ) -> Iterator[None]:
        """What is known of `var` inside its scope (a var object bound again in an
        inner scope gets back its outer facts afterwards)."""
        tables: list[dict] = [self.bounds.ranges, self.loops, self.lets]
        saved = [table.get(var) for table in tables]
        for table, fact in zip(tables, (bounds, loop, value), strict=True):
            if fact is None:
                table.pop(var, None)
            else:
                table[var] = fact
        try:
            yield
        finally:
            for table, fact in zip(tables, saved, strict=True):
                if fact is None:
                    table.pop(var, None)
                else:
                    table[var] = fact

    # ------------------------------------------------------------ checks

    def _check(self, buffer: tir.Buffer, indices: tuple[tir.PrimExpr, ...], what: str) -> None:
        if len(indices) != len(buffer.shape):
            return  # FlattenBuffers reports the mismatch
        for axis, (index, extent) in enumerate(zip(indices, buffer.shape, strict=True)):
            for lane, point in _points(index, buffer):
                conds = self._in_bounds(point, extent)
                if not conds:
                    continue
                cond = conds[0]
                for c in conds[1:]:
                    cond = tir.BinaryOp("and", cond, c, "bool")
                at = "" if lane is None else f" at lane {lane}"
                on_axis = f" on axis {axis}" if len(indices) > 1 else ""
                # The values the index and a symbolic extent had when the check failed.
                message: list[str | tir.PrimExpr] = [
                    f"{what} buffer {buffer.name} out of bounds: index {expr_text(index)}{at} = ",
                    self._in_scope(point, guards=False),
                    f"{on_axis} is outside [0, {show(extent)})",
                ]
                if not isinstance(extent, tir.IntImm):
                    message += [f" ({show(extent)} = ", self._in_scope(extent, guards=False), ")"]
                assert_ = tir.AssertStmt(self._in_scope(cond), "RuntimeError", tuple(message))
                self.checks.append(assert_)

    def _in_bounds(self, x: tir.PrimExpr, extent: tir.PrimExpr) -> list[tir.PrimExpr]:
        """The parts of `0 <= x < extent` that may be false."""
        conds: list[tir.PrimExpr] = []
        found, limit = self.bounds.ints(x), self.bounds.ints(extent)
        if found is None or found[0] < 0:
            conds.append(tir.BinaryOp("le", tir.IntImm(INDEX, 0), to_index(x), "bool"))
        below = found is not None and limit is not None and found[1] < limit[0]
        if not below and not self._spans(x, extent):
            conds.append(tir.BinaryOp("lt", to_index(x), to_index(extent), "bool"))
        return conds

    def _spans(self, x: tir.PrimExpr, extent: tir.PrimExpr) -> bool:
        """Whether `x < extent` holds because `x` is the var of a loop over
        `range(extent)` (through widening casts and let bindings), or such a var
        plus something never positive."""
        if isinstance(x, tir.BinaryOp) and x.kind in ("add", "sub"):
            b = self.bounds.ints(x.b)
            if b is None or (b[1] > 0 if x.kind == "add" else b[0] < 0):
                return False
            return self._spans(x.a, extent)
        while True:
            if isinstance(x, tir.Cast) and widens(x.value.dtype, x.dtype):
                x = x.value
            elif isinstance(x, tir.Var) and x in self.lets:
                x = self.lets[x]
            else:
                break
        loop = self.loops.get(x) if isinstance(x, tir.Var) else None
        if loop is None or self.bounds.ints(loop.min) != (0, 0):
            return False
        return equal(loop.extent, extent)

    def _in_scope(self, e: tir.PrimExpr, guards: bool = True) -> tir.PrimExpr:
        """`e` evaluated where the access is: under its lets, and (a condition) only
        when the branches of `if_then_else` it sits in are taken."""
        for item in reversed(self.scope):
            if isinstance(item, tuple):
                var, value = item
                if uses(e, {var}):
                    e = tir.Let(var, value, e, e.dtype)
            elif guards:
                e = tir.Call("bool", "if_then_else", (item, e, TRUE))
        return e


def widens(source: str, target: str) -> bool:
    """An integer cast that keeps every value."""
    if not (dt.is_integer_like(source) and dt.is_integer_like(target)):
        return False
    if dt.is_uint(source):
        return dt.bits(target) > dt.bits(source) or (
            dt.is_uint(target) and dt.bits(target) == dt.bits(source)
        )
    return dt.is_int(target) and dt.bits(target) >= dt.bits(source)


def _points(index: tir.PrimExpr, buffer: tir.Buffer) -> list[tuple[int | None, tir.PrimExpr]]:
    """(lane, scalar expression) pairs that are in bounds exactly when every lane
    of `index` is; the lane is None for a scalar or a broadcast."""
    lanes = dt.lanes(index.dtype)
    if lanes == 1:
        return [(None, index)]
    if isinstance(index, tir.Ramp):
        last = mul(to_index(index.stride), tir.IntImm(INDEX, lanes - 1))
        return [(0, index.base), (lanes - 1, add(to_index(index.base), last))]
    if isinstance(index, tir.Broadcast):
        return [(None, index.value)]
    try:
        return [(k, _lane(index, k)) for k in range(lanes)]
    except TVMLiteError as err:
        raise TVMLiteError(
            f"a checked build cannot check the index {expr_text(index)} "
            f"of buffer {buffer.name}: {err}"
        ) from None


def _lane(e: tir.PrimExpr, k: int) -> tir.PrimExpr:
    """Lane `k` of a vector expression, as a scalar expression."""
    if dt.lanes(e.dtype) == 1:
        return e
    elem = dt.element_of(e.dtype)
    if isinstance(e, tir.Ramp):
        return add(e.base, mul(e.stride, tir.IntImm(e.base.dtype, k)))
    if isinstance(e, tir.Broadcast):
        return e.value
    if isinstance(e, tir.BinaryOp):
        return tir.BinaryOp(e.kind, _lane(e.a, k), _lane(e.b, k), elem)
    if isinstance(e, tir.Cast):
        return tir.Cast(elem, _lane(e.value, k))
    if isinstance(e, tir.Not):
        return tir.Not(_lane(e.a, k))
    if isinstance(e, tir.Select):
        parts = (_lane(e.condition, k), _lane(e.true_value, k), _lane(e.false_value, k))
        return tir.Select(*parts, elem)
    if isinstance(e, tir.BufferLoad) and any(dt.lanes(i.dtype) > 1 for i in e.indices):
        return tir.BufferLoad(e.buffer, tuple(_lane(i, k) for i in e.indices), elem)
    if isinstance(e, tir.Call) and e.op in _LANEWISE_CALLS:
        return tir.Call(elem, e.op, tuple(_lane(a, k) for a in e.args))
    if isinstance(e, tir.Let) and dt.lanes(e.value.dtype) == 1:
        return tir.Let(e.var, e.value, _lane(e.body, k), elem)
    raise TVMLiteError(f"its lanes cannot be told apart ({type(e).__name__} of {e.dtype})")


def expr_text(e: tir.PrimExpr) -> str:
    text = ExprPrinter(CLASSIC, NameTable(reserved=())).expr(e)
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 3] + "..."


@dataclass(frozen=True)
class InstrumentBoundCheckers(PrimFuncPass):
    """A bounds check before every buffer access of every prim function (checked builds:
    `LowerTIR` runs it when the PassContext asks)."""

    name: str = "InstrumentBoundCheckers"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return _BoundChecker().visit_prim_func(func)
