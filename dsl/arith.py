"""Arithmetic on TIR expressions: constant folding, linear forms, simplification
and simple integer bounds, shared by every layer that builds or reads index
arithmetic (parser, legalization, lowering, printer).

- `fold(kind, a, b)` builds `a <kind> b` the way TVM's operators do
  (`TryConstFold`): two immediates give an immediate, `x + 0`, `x * 1`, ... give
  `x`. Kernels built through it print as TVM prints them.
- `cast(dtype, e)` is `tvm::cast`: immediates are converted, not wrapped.
- `const_int` / `difference` see through sums: `(i + 4) - i` is 4.
- `Simplify` folds the integer arithmetic of existing IR (floats are left to
  LLVM, which knows the IEEE rules better).
- `IntBounds` is an interval analysis: the inclusive range of `e` as some vars
  run over their ranges, symbolic (region inference, through `bounds(e, ranges)`)
  or constant (the bounds checks of a checked build).

Integer results wrap to their dtype's width, as the machine (and TVM) does.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import uses
from tvmlite.dsl.tir_functor import TIRFunctor
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace

Bounds = tuple[tir.PrimExpr, tir.PrimExpr]  # inclusive [lo, hi]


def as_int(e: tir.PrimExpr) -> int | None:
    """The value of an integer (not bool) immediate, else None."""
    return e.value if type(e) is tir.IntImm and e.dtype != "bool" else None


def wrap(value: int, dtype: str) -> int:
    """`value` as an integer of `dtype` holds it (two's complement for signed)."""
    if dt.is_bool(dtype):
        return int(value != 0)
    bits = dt.bits(dtype)
    value &= (1 << bits) - 1
    if dt.is_int(dtype) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def const(value: int | float | bool, dtype: str) -> tir.PrimExpr:
    """An immediate of `dtype` (integers wrap to its width); a vector dtype gives
    the broadcast of the scalar immediate."""
    lanes = dt.lanes(dtype)
    if lanes > 1:
        return tir.Broadcast(const(value, dt.element_of(dtype)), lanes, dtype)
    if dt.is_float(dtype):
        return tir.FloatImm(dtype, float(value))
    return tir.IntImm(dtype, wrap(int(value), dtype))


def value_of(e: tir.PrimExpr) -> int | float | None:
    """The number an immediate holds, else None."""
    return e.value if isinstance(e, tir.IntImm | tir.FloatImm) else None


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


_COMPARE = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


def _fold_numbers(kind: str, x: int | float, y: int | float, is_int: bool) -> float | None:
    """`x <kind> y` on two immediates' values, None where TVM does not fold."""
    if kind == "add":
        return x + y
    if kind == "sub":
        return x - y
    if kind == "mul":
        return x * y
    if kind == "min":
        return min(x, y)
    if kind == "max":
        return max(x, y)
    if kind in _COMPARE:
        return _COMPARE[kind](x, y)
    if y == 0 or kind not in ("div", "mod", "floordiv", "floormod"):
        return None
    if is_int:
        x, y = int(x), int(y)
        if kind == "div":
            return _trunc_div(x, y)
        if kind == "mod":
            return x - _trunc_div(x, y) * y
        return x // y if kind == "floordiv" else x % y
    if kind == "div":
        return x / y
    quotient = x / y
    if kind == "floordiv" and math.isfinite(quotient):
        return float(math.floor(quotient))
    return None


def fold(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """`a <kind> b` (operands of one dtype) with TVM's constant folding: two
    immediates give an immediate (not a division by zero, not logic), and
    `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`, `x / 1`, `x // 1` give `x`;
    integer `x * 0` gives 0 and integer `x % 1` (floormod) 0."""
    is_bool = kind in _COMPARE or kind in tir.LOGIC_OPS
    out = dt.with_lanes("bool", dt.lanes(a.dtype)) if is_bool else a.dtype
    if kind in tir.LOGIC_OPS:
        return tir.BinaryOp(kind, a, b, out)
    x, y = value_of(a), value_of(b)
    is_int = not dt.is_float(a.dtype)
    if x is not None and y is not None:
        value = _fold_numbers(kind, x, y, is_int)
        if value is not None:
            return const(value, out)
    if kind == "add":
        if x == 0:
            return b
        if y == 0:
            return a
    elif kind == "sub" and y == 0:
        return a
    elif kind == "mul":
        if x == 1:
            return b
        if y == 1:
            return a
        if is_int and (x == 0 or y == 0):
            return const(0, out)
    elif kind in ("div", "floordiv") and y == 1:
        return a
    elif kind == "floormod" and y == 1 and is_int:
        return const(0, out)
    return tir.BinaryOp(kind, a, b, out)


def cast(dtype: str, e: tir.PrimExpr) -> tir.PrimExpr:
    """`e` as `dtype` (`tvm::cast`): nothing when it already is, an immediate for
    an immediate (a value that does not fit the dtype, as a float beyond an integer
    dtype or 65535 as float16, stays a Cast: converted as the machine does)."""
    if e.dtype == dtype:
        return e
    value = value_of(e)
    if value is None or dt.lanes(dtype) != 1:
        return tir.Cast(dtype, e)
    if dt.is_float(dtype):
        if dt.range_error(dtype, float(value)) is not None:
            return tir.Cast(dtype, e)
        return tir.FloatImm(dtype, float(value))
    if dt.is_bool(dtype):
        return tir.IntImm(dtype, int(value != 0))
    if isinstance(value, float):
        if not math.isfinite(value):
            return tir.Cast(dtype, e)
        value = int(value)
        if wrap(value, dtype) != value:
            return tir.Cast(dtype, e)
    return tir.IntImm(dtype, wrap(value, dtype))


# ---------------------------------------------------------------- linear forms


@dataclass(frozen=True, slots=True)
class _Atom:
    """A non-linear sub-expression compared structurally (vars by identity)."""

    expr: tir.PrimExpr


Linear = tuple[dict[_Atom, int], int]


def linear_form(e: tir.PrimExpr) -> Linear | None:
    """Integer `e` as {atom: coefficient} + constant, through `+`, `-` and
    multiplication by immediates; None for a non-integer expression."""
    if isinstance(e, tir.IntImm):
        return {}, e.value
    if isinstance(e, tir.BinaryOp) and e.kind in ("add", "sub"):
        left, right = linear_form(e.a), linear_form(e.b)
        if left is None or right is None:
            return None
        sign = 1 if e.kind == "add" else -1
        terms = dict(left[0])
        for atom, coeff in right[0].items():
            terms[atom] = terms.get(atom, 0) + sign * coeff
        return terms, left[1] + sign * right[1]
    if isinstance(e, tir.BinaryOp) and e.kind == "mul":
        for scale, other in ((e.a, e.b), (e.b, e.a)):
            if isinstance(scale, tir.IntImm):
                inner = linear_form(other)
                if inner is None:
                    return None
                return {k: v * scale.value for k, v in inner[0].items()}, inner[1] * scale.value
    if not dt.is_integer_like(e.dtype):
        return None
    return {_Atom(e): 1}, 0


def const_int(e: tir.PrimExpr) -> int | None:
    """The value of an integer expression whose vars cancel out (`4`, `(i + 4) - i`),
    else None."""
    form = linear_form(e) if dt.is_integer_like(e.dtype) else None
    if form is None or any(coeff != 0 for coeff in form[0].values()):
        return None
    return form[1]


def difference(stop: tir.PrimExpr, start: tir.PrimExpr) -> tir.PrimExpr:
    """`stop - start` (integers of one dtype), an immediate when the difference is
    constant, `stop` when `start` is 0."""
    if as_int(start) == 0:
        return stop
    value = const_int(tir.BinaryOp("sub", stop, start, stop.dtype))
    if value is not None:
        return const(value, stop.dtype)
    return tir.BinaryOp("sub", stop, start, stop.dtype)


# ---------------------------------------------------------------- simplification


class Simplify(StmtExprMutator):
    """Folds integer arithmetic on immediates and casts of integer immediates to
    integer dtypes; leaves everything else (and every float) as it is."""

    def visit_BinaryOp(self, e: tir.BinaryOp) -> tir.PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        if as_int(a) is not None and as_int(b) is not None:
            folded = fold(e.kind, a, b)
            if isinstance(folded, tir.IntImm):
                return folded
        return replace(e, a=a, b=b)

    def visit_Cast(self, e: tir.Cast) -> tir.PrimExpr:
        value = self.visit_expr(e.value)
        if as_int(value) is not None and dt.is_integer_like(e.dtype) and not dt.is_bool(e.dtype):
            return cast(e.dtype, value)
        if value.dtype == e.dtype:
            return value
        return replace(e, value=value)


def simplify(e: tir.PrimExpr) -> tir.PrimExpr:
    """`e` with its integer arithmetic on immediates folded (see `Simplify`)."""
    return Simplify().visit_expr(e)


# ---------------------------------------------------------------- bounds


class IntBounds(TIRFunctor):
    """Interval analysis: the inclusive bounds (lo, hi) of a scalar integer
    expression while each var of `ranges` runs over its bounds.

    A var not in `ranges` is fixed, so its bounds are itself and results may be
    symbolic (`i * 4 + n` for i in [0, 7] is [n, 28 + n]): what region inference
    needs. With `any_value=True` it may instead hold any value of its dtype, and
    so may any expression this does not follow: every result is then constant,
    what a bounds check compares with an extent.

    Constant bounds are exact (Python ints) and kept only while they fit the
    dtype: a result that may not fit could have wrapped around, so it is None
    (or, with `any_value`, the whole dtype). Symbolic bounds assume index
    arithmetic does not wrap. Followed: +, -, min, max, casts, `Let`, `Select`
    and `if_then_else`, and *, /, //, %, mod with an immediate operand or two
    constant intervals.
    """

    def __init__(
        self, ranges: Mapping[tir.Var, Bounds] | None = None, *, any_value: bool = False
    ) -> None:
        self.ranges: dict[tir.Var, Bounds] = dict(ranges or {})
        self.any_value = any_value

    def of(self, e: tir.PrimExpr) -> Bounds | None:
        """(lo, hi) of `e`, or None when `e` is not a scalar integer or (without
        `any_value`) combines the ranged vars in a way this does not follow."""
        whole = dt.int_range(e.dtype)
        if whole is None:
            return None
        if not self.any_value and not uses(e, self.ranges):
            return e, e
        method = self._expr_table.get(type(e))
        found = None if method is None else _fit(method(self, e), whole)
        if found is None and self.any_value:
            return const(whole[0], e.dtype), const(whole[1], e.dtype)
        return found

    def ints(self, e: tir.PrimExpr) -> tuple[int, int] | None:
        """`of(e)` when both bounds are constant, as ints."""
        return _ints(self.of(e))

    def loop_range(self, s: tir.For) -> Bounds | None:
        """Where the loop var of `s` is while the body runs: [min, min + extent - 1]
        (a body that runs has extent >= 1); None for a step that may not be positive."""
        if s.step is not None:
            step = self.ints(s.step)
            if step is None or step[0] < 1:
                return None
        lo, extent = self.of(s.min), self.of(s.extent)
        if lo is None or extent is None:
            return None
        last = _exact("add", lo[1], extent[1])
        last = None if last is None else _exact("sub", last, const(1, last.dtype))
        return _pair(lo[0], last)

    # ------------------------------------------------------------ nodes

    def visit_IntImm(self, e: tir.IntImm) -> Bounds | None:
        return e, e

    def visit_Var(self, e: tir.Var) -> Bounds | None:
        return self.ranges.get(e, None if self.any_value else (e, e))

    def visit_Cast(self, e: tir.Cast) -> Bounds | None:
        found = self.ints(e.value)
        if found is None:
            return None
        return _pair(_imm(found[0], e.dtype), _imm(found[1], e.dtype))

    def visit_Select(self, e: tir.Select) -> Bounds | None:
        return self._union(e.true_value, e.false_value)

    def visit_Call(self, e: tir.Call) -> Bounds | None:
        return self._union(e.args[1], e.args[2]) if e.op == "if_then_else" else None

    def visit_Let(self, e: tir.Let) -> Bounds | None:
        found, saved = self.of(e.value), self.ranges.pop(e.var, None)
        if found is not None:
            self.ranges[e.var] = found
        try:
            return self.of(e.body)
        finally:
            self.ranges.pop(e.var, None)
            if saved is not None:
                self.ranges[e.var] = saved

    def visit_BinaryOp(self, e: tir.BinaryOp) -> Bounds | None:
        a, b = self.of(e.a), self.of(e.b)
        if a is None or b is None:
            return None
        if e.kind == "add":
            return _pair(_exact("add", a[0], b[0]), _exact("add", a[1], b[1]))
        if e.kind == "sub":
            return _pair(_exact("sub", a[0], b[1]), _exact("sub", a[1], b[0]))
        if e.kind in ("min", "max"):
            return fold(e.kind, a[0], b[0]), fold(e.kind, a[1], b[1])
        found = _scaled(e, a, b)
        if found is None:
            x, y = _ints(a), _ints(b)
            numbers = None if x is None or y is None else _combine(e.kind, x, y)
            found = (
                None
                if numbers is None
                else _pair(_imm(numbers[0], e.dtype), _imm(numbers[1], e.dtype))
            )
        return found

    def _union(self, a: tir.PrimExpr, b: tir.PrimExpr) -> Bounds | None:
        x, y = self.ints(a), self.ints(b)
        if x is None or y is None:
            return None
        return const(min(x[0], y[0]), a.dtype), const(max(x[1], y[1]), a.dtype)


def bounds(e: tir.PrimExpr, ranges: Mapping[tir.Var, tir.Range]) -> Bounds | None:
    """Inclusive (lo, hi) of integer `e` while each var of `ranges` runs over its
    range and every other var stays fixed (`IntBounds`); None when `e` combines
    them in a way that is not followed or a constant bound would wrap around.
    Bounds are expressions, folded where they are constant."""
    if not uses(e, ranges):
        return e, e
    analysis = IntBounds()
    for var, r in ranges.items():
        end = _exact("add", r.min, r.extent)
        last = None if end is None else _exact("sub", end, const(1, r.extent.dtype))
        if last is None:
            if uses(e, {var}):
                return None  # its last value does not fit its dtype
            continue
        analysis.ranges[var] = r.min, last
    return analysis.of(e)


def _imm(value: int, dtype: str) -> tir.IntImm | None:
    """An immediate holding `value` exactly; None when the dtype cannot hold it (a
    value that may have wrapped around bounds nothing)."""
    whole = dt.int_range(dtype)
    return tir.IntImm(dtype, value) if whole and whole[0] <= value <= whole[1] else None


def _ints(found: Bounds | None) -> tuple[int, int] | None:
    if found is None:
        return None
    lo, hi = as_int(found[0]), as_int(found[1])
    return None if lo is None or hi is None else (lo, hi)


def _fit(found: Bounds | None, whole: tuple[int, int]) -> Bounds | None:
    """`found`, unless a constant bound lies outside the dtype (it may have wrapped)."""
    if found is None:
        return None
    for bound in found:
        value = value_of(bound)
        if value is not None and not whole[0] <= value <= whole[1]:
            return None
    return found


def _exact(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr | None:
    """`fold(kind, a, b)` for add, sub, mul, or None when two immediates overflow."""
    x, y = as_int(a), as_int(b)
    if x is not None and y is not None:
        value = x + y if kind == "add" else x - y if kind == "sub" else x * y
        if wrap(value, a.dtype) != value:
            return None
    return fold(kind, a, b)


def _pair(lo: tir.PrimExpr | None, hi: tir.PrimExpr | None) -> Bounds | None:
    return None if lo is None or hi is None else (lo, hi)


def _scaled(e: tir.BinaryOp, a: Bounds, b: Bounds) -> Bounds | None:
    """Bounds of `a * c`, `c * b`, `a // c` and `a % c` for an immediate `c`."""
    scale = as_int(e.b)
    if e.kind == "mul" and scale is None and as_int(e.a) is not None:
        scale, a = as_int(e.a), b
    if scale is None:
        return None
    if e.kind == "mul":
        c = const(scale, e.dtype)
        found = _pair(_exact("mul", a[0], c), _exact("mul", a[1], c))
        return found if found is None or scale >= 0 else (found[1], found[0])
    if e.kind == "floordiv" and scale > 0:
        return fold("floordiv", a[0], e.b), fold("floordiv", a[1], e.b)
    if e.kind == "floormod" and scale > 0:
        x = _ints(a)
        if x is not None and x[0] // scale == x[1] // scale:  # one period: no wrap to 0
            shift = x[0] // scale * scale
            return const(x[0] - shift, e.dtype), const(x[1] - shift, e.dtype)
        return const(0, e.dtype), const(scale - 1, e.dtype)
    return None


def _combine(kind: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """Bounds of `a <kind> b` for two constant intervals: a product, or a division
    or remainder by a positive divisor (a divisor that may be zero or negative, or
    truncation of a negative dividend, is not followed)."""
    if kind == "mul":
        return _corners(operator.mul, a, b)
    if kind not in ("div", "floordiv", "mod", "floormod") or b[0] < 1:
        return None
    if kind in ("div", "mod") and a[0] < 0:
        return None
    if kind in ("div", "floordiv"):
        return _corners(operator.floordiv, a, b)
    if a[0] >= 0 and a[1] < b[0]:
        return a  # already below every divisor
    return 0, b[1] - 1


def _corners(
    op: Callable[[int, int], int], a: tuple[int, int], b: tuple[int, int]
) -> tuple[int, int]:
    values = [op(x, y) for x in a for y in b]
    return min(values), max(values)


# ---------------------------------------------------------------- operators


def _operand(b: tir.PrimExpr | int, like: tir.PrimExpr) -> tir.PrimExpr:
    return b if isinstance(b, tir.PrimExpr) else const(b, like.dtype)


def add(a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    """`a + b` folded as TVM's operator does; an int `b` takes `a`'s dtype (so do
    the operators below)."""
    return fold("add", a, _operand(b, a))


def sub(a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    return fold("sub", a, _operand(b, a))


def mul(a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    return fold("mul", a, _operand(b, a))


def floordiv(a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    return fold("floordiv", a, _operand(b, a))


def floormod(a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    return fold("floormod", a, _operand(b, a))


def minimum(a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    return fold("min", a, _operand(b, a))


def maximum(a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    return fold("max", a, _operand(b, a))


def compare(kind: str, a: tir.PrimExpr, b: tir.PrimExpr | int) -> tir.PrimExpr:
    """`a <kind> b` for a comparison kind (lt, le, gt, ge, eq, ne)."""
    return fold(kind, a, _operand(b, a))


def as_bool(e: tir.PrimExpr) -> bool | None:
    """The value of a boolean immediate, else None."""
    return bool(e.value) if type(e) is tir.IntImm and e.dtype == "bool" else None


def logical_and(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """`a && b` with TVM's folding of constant operands."""
    if as_bool(a) is False or as_bool(b) is False:
        return const(False, "bool")
    if as_bool(a) is True:
        return b
    if as_bool(b) is True:
        return a
    return tir.BinaryOp("and", a, b, "bool")
