"""Constant bounds of integer expressions, from the ranges of the loop and let
variables in scope: what InstrumentBoundCheckers uses to leave out the checks
that cannot fail (`A[i]` in `for i in range(16)` on a 16-element buffer).

Bounds are computed exactly (Python ints), then compared with the range of the
expression's dtype: a result that may not fit could have wrapped around, so it
is widened to the whole dtype range. Anything this analysis does not model (a
loaded value, a call, a float) also gets its dtype's range, which is always
sound; it only ever costs a check that could have been dropped.
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir

Bounds = tuple[int, int]  # inclusive [lo, hi]


def dtype_bounds(dtype: str) -> Bounds | None:
    """Every value of a scalar integer dtype; None for floats and handles."""
    if dt.is_bool(dtype):
        return (0, 1)
    if dt.is_uint(dtype):
        return (0, (1 << dt.bits(dtype)) - 1)
    if dt.is_int(dtype):
        half = 1 << (dt.bits(dtype) - 1)
        return (-half, half - 1)
    return None


def _corners(op: Callable[[int, int], int], a: Bounds, b: Bounds) -> Bounds:
    values = [op(x, y) for x in a for y in b]
    return (min(values), max(values))


class IntBounds:
    """Bounds of scalar integer expressions, given `ranges`: what is known of the
    variables in scope (the user keeps it in step with loop and let scopes)."""

    def __init__(self) -> None:
        self.ranges: dict[tir.Var, Bounds] = {}

    def loop_range(self, s: tir.For) -> Bounds | None:
        """Where the loop var of `s` can be while the body runs: [min, min + extent
        - 1] (a body that runs has extent >= 1); None for a non-positive step."""
        if s.step is not None:
            step = self.of(s.step)
            if step is None or step[0] < 1:
                return None
        lo, hi = self.of(s.min), self.of(s.extent)
        if lo is None or hi is None:
            return None
        return self._fit((lo[0], lo[1] + hi[1] - 1), s.loop_var.dtype)

    def of(self, e: tir.PrimExpr) -> Bounds | None:
        """[lo, hi] of a scalar integer `e`, or None when `e` is not one."""
        whole = dtype_bounds(e.dtype)
        if whole is None:
            return None
        found = self._exact(e)
        return whole if found is None else self._fit(found, e.dtype)

    def _fit(self, bounds: Bounds, dtype: str) -> Bounds | None:
        whole = dtype_bounds(dtype)
        if whole is None:
            return None
        if bounds[0] < whole[0] or bounds[1] > whole[1]:
            return whole  # may have wrapped around
        return bounds

    def _exact(self, e: tir.PrimExpr) -> Bounds | None:
        if isinstance(e, tir.IntImm):
            return (int(e.value), int(e.value))
        if isinstance(e, tir.Var):
            return self.ranges.get(e)
        if isinstance(e, tir.Cast):
            return self.of(e.value)
        if isinstance(e, tir.BinaryOp):
            return self._binary(e)
        if isinstance(e, tir.Select):
            return self._union(e.true_value, e.false_value)
        if isinstance(e, tir.Call) and e.op == "if_then_else":
            return self._union(e.args[1], e.args[2])
        if isinstance(e, tir.Let):
            return self._let(e)
        return None

    def _let(self, e: tir.Let) -> Bounds | None:
        bound, saved = self.of(e.value), self.ranges.pop(e.var, None)
        if bound is not None:
            self.ranges[e.var] = bound
        try:
            return self.of(e.body)
        finally:
            self.ranges.pop(e.var, None)
            if saved is not None:
                self.ranges[e.var] = saved

    def _union(self, a: tir.PrimExpr, b: tir.PrimExpr) -> Bounds | None:
        x, y = self.of(a), self.of(b)
        if x is None or y is None:
            return None
        return (min(x[0], y[0]), max(x[1], y[1]))

    def _binary(self, e: tir.BinaryOp) -> Bounds | None:
        a, b = self.of(e.a), self.of(e.b)
        if a is None or b is None:
            return None
        kind = e.kind
        if kind == "add":
            return (a[0] + b[0], a[1] + b[1])
        if kind == "sub":
            return (a[0] - b[1], a[1] - b[0])
        if kind == "mul":
            return _corners(int.__mul__, a, b)
        if kind == "min":
            return (min(a[0], b[0]), min(a[1], b[1]))
        if kind == "max":
            return (max(a[0], b[0]), max(a[1], b[1]))
        if kind in ("div", "floordiv", "mod", "floormod"):
            return _division(kind, a, b)
        return None


def _division(kind: str, a: Bounds, b: Bounds) -> Bounds | None:
    """Bounds of `a / b` or `a % b` for a positive divisor (others are not modelled:
    a divisor that may be zero or negative, or truncation of a negative dividend)."""
    if b[0] < 1 or (kind in ("div", "mod") and a[0] < 0):
        return None
    if kind in ("div", "floordiv"):
        return _corners(int.__floordiv__, a, b)
    if a[0] >= 0 and a[1] < b[0]:
        return a  # already below every divisor
    return (0, b[1] - 1)
