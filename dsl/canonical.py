"""Index arithmetic in TVM's normal forms: bounds under known variable ranges,
the canonical simplifier and the rewrite rules schedules need.

Schedules rewrite index expressions (loop splits, fusions, regions) and the
result is printed, so it has to be the expression TVM would print. TVM keeps
index sums in a canonical form: a sum of *split terms*
`((index % upper) // lower) * scale` plus a constant, merged when they name the
same index and ordered by descending scale. `Analyzer.canonical_simplify`
builds that form with the same merge rules and writes it back out through the
folding operators of `arith`; `Analyzer.simplify` adds the rewrite rules
(comparisons, min/max, selects decided by bounds), in TVM's order.

Only integer (index) expressions are rewritten; anything else is rebuilt from
its simplified children.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.arith import (
    add,
    as_bool,
    as_int,
    cast,
    const,
    floordiv,
    floormod,
    mul,
    sub,
)

INF = math.inf
Bound = tuple[float, float]  # inclusive [lo, hi]; +-inf when unknown


def is_index(e: tir.PrimExpr) -> bool:
    return dt.is_int(e.dtype) and dt.lanes(e.dtype) == 1


# ---------------------------------------------------------------- canonical form


@dataclass
class _Split:
    """`((index % upper) // lower) * scale`; `upper` None is infinity."""

    index: tir.PrimExpr
    lower: int = 1
    upper: int | None = None
    scale: int = 1

    def same_index(self, other: _Split) -> bool:
        return self.index is other.index or expr_equal(self.index, other.index)

    def copy(self) -> _Split:
        return _Split(self.index, self.lower, self.upper, self.scale)

    def normalize(self, sign: int = 1) -> tir.PrimExpr:
        if self.scale == 0:
            return const(0, self.index.dtype)
        e = self.index
        if self.upper is not None:
            e = floormod(e, self.upper)
        if self.lower != 1:
            e = floordiv(e, self.lower)
        return mul(e, self.scale * sign)


@dataclass
class _Sum:
    """`sum(terms) + base`; terms with the same index sit together, by
    descending `lower`."""

    dtype: str
    terms: list[_Split] = field(default_factory=list)
    base: int = 0

    def copy(self) -> _Sum:
        return _Sum(self.dtype, [t.copy() for t in self.terms], self.base)

    def is_zero(self) -> bool:
        return self.base == 0 and not self.terms

    def add_term(self, term: _Split, scale: int) -> None:
        if term.scale == 0:
            return
        start = next((i for i, t in enumerate(self.terms) if t.same_index(term)), len(self.terms))
        for j in range(start, len(self.terms)):
            t = self.terms[j]
            if not t.same_index(term) or term.lower > t.lower:
                new = term.copy()
                new.scale *= scale
                self.terms.insert(j, new)
                return
            if term.lower == t.lower and term.upper == t.upper:
                t.scale += term.scale * scale
                return
        new = term.copy()
        new.scale *= scale
        self.terms.append(new)

    def add_sum(self, other: _Sum, scale: int) -> None:
        for t in other.terms:
            self.add_term(t, scale)
        self.base += other.base * scale

    def mul(self, c: int) -> None:
        self.base *= c
        for t in self.terms:
            t.scale *= c

    def divisible(self, c: int) -> bool:
        return self.base % c == 0 and all(t.scale % c == 0 for t in self.terms)

    def divide(self, c: int) -> None:
        self.base //= c
        for t in self.terms:
            t.scale //= c

    def split_divisible(self, c: int) -> tuple[_Sum, _Sum]:
        """(the part whose coefficients `c` divides, the rest)."""
        yes, no = _Sum(self.dtype), _Sum(self.dtype)
        (yes if self.base % c == 0 else no).base = self.base
        for t in self.terms:
            (yes if t.scale % c == 0 else no).terms.append(t.copy())
        return yes, no

    def normalize(self) -> tir.PrimExpr:
        if not self.terms:
            return const(self.base, self.dtype)
        terms = _merge_terms([t.copy() for t in self.terms])
        out: tir.PrimExpr = const(0, self.dtype)
        for t in terms:
            if t.scale > 0:
                out = add(out, t.normalize())
        if self.base > 0:
            out = add(out, self.base)
        for t in terms:
            if t.scale < 0:
                out = sub(out, t.normalize(-1))
        if self.base < 0:
            out = sub(out, -self.base)
        return out


def _merge_terms(terms: list[_Split]) -> list[_Split]:
    """Fold equal terms and `(x // (c*s)) * s + (x % (c*s)) // c` pairs of one
    index, then order by descending scale, lower and upper factor (stable)."""
    for i, lhs in enumerate(terms):
        if lhs.scale == 0:
            continue
        for rhs in terms[i + 1 :]:
            if not lhs.same_index(rhs):
                break
            lhs_upper = INF if lhs.upper is None else lhs.upper
            if lhs_upper < rhs.lower:
                break
            if lhs.upper == rhs.upper and lhs.lower == rhs.lower:
                rhs.scale += lhs.scale
                lhs.scale = 0
            elif (
                lhs.lower == rhs.upper
                and rhs.scale != 0
                and lhs.scale % rhs.scale == 0
                and lhs.lower == (lhs.scale // rhs.scale) * rhs.lower
            ):
                rhs.upper = lhs.upper
                lhs.scale = 0
                break

    def key(t: _Split) -> tuple[float, float, float]:
        return (-t.scale, -t.lower, -(INF if t.upper is None else t.upper))

    return sorted(terms, key=key)


def expr_equal(a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
    """Expression equality with vars by identity (TVM's ExprDeepEqual)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, tir.Var):
        return False
    if isinstance(a, tir.BinaryOp):
        return (
            a.kind == b.kind
            and a.dtype == b.dtype
            and expr_equal(a.a, b.a)
            and expr_equal(a.b, b.b)
        )
    if isinstance(a, tir.Cast):
        return a.dtype == b.dtype and expr_equal(a.value, b.value)
    return a == b


# ---------------------------------------------------------------- the analyzer


class Analyzer:
    """Bounds and simplification of index expressions under known variable ranges
    (`bind`): loop variables, block iteration variables."""

    def __init__(self) -> None:
        self.ranges: dict[tir.Var, Bound] = {}
        self.values: dict[tir.Var, tir.PrimExpr] = {}  # vars with a single value
        # Vars whose range has a symbolic end: (first, last) as expressions.
        self.symbolic: dict[tir.Var, tuple[tir.PrimExpr, tir.PrimExpr]] = {}

    def bind(self, var: tir.Var, lo: tir.PrimExpr | int, extent: tir.PrimExpr | int) -> None:
        """`var` ranges over [lo, lo + extent); with extent 1 it is replaced by `lo`."""
        if (extent if isinstance(extent, int) else as_int(extent)) == 1:
            self.values[var] = lo if isinstance(lo, tir.PrimExpr) else const(lo, var.dtype)
        lo_b = self.const_bound(lo) if isinstance(lo, tir.PrimExpr) else (lo, lo)
        ext_b = self.const_bound(extent) if isinstance(extent, tir.PrimExpr) else (extent, extent)
        self.ranges[var] = (lo_b[0], lo_b[1] + ext_b[1] - 1)
        if isinstance(extent, tir.PrimExpr) and as_int(extent) is None:
            first = lo if isinstance(lo, tir.PrimExpr) else const(lo, var.dtype)
            self.symbolic[var] = (first, sub(add(first, extent), 1))

    def bind_range(self, var: tir.Var, r: tir.Range) -> None:
        self.bind(var, r.min, r.extent)

    # ------------------------------------------------------------ bounds

    def const_bound(self, e: tir.PrimExpr) -> Bound:
        """Inclusive constant bounds of an integer expression."""
        if isinstance(e, tir.IntImm):
            return (e.value, e.value)
        if isinstance(e, tir.Var):
            if e in self.ranges:
                return self.ranges[e]
            return _dtype_bound(e.dtype)
        if isinstance(e, tir.Cast):
            inner = self.const_bound(e.value)
            if dt.is_int(e.dtype) and dt.is_integer_like(e.value.dtype):
                full = _dtype_bound(e.dtype)
                if full[0] <= inner[0] and inner[1] <= full[1]:
                    return inner
            return _dtype_bound(e.dtype)
        if isinstance(e, tir.BinaryOp) and e.kind in _BOUND_RULES:
            return _BOUND_RULES[e.kind](self.const_bound(e.a), self.const_bound(e.b))
        if isinstance(e, tir.Select):
            a, b = self.const_bound(e.true_value), self.const_bound(e.false_value)
            return (min(a[0], b[0]), max(a[1], b[1]))
        return _dtype_bound(e.dtype)

    def difference_bound(self, diff: tir.PrimExpr) -> Bound:
        """Constant bounds of a difference of index expressions, also when they
        hold only symbolically: through the symbolic ends of loop ranges (`i * 16
        + j - n * 256` with `i` below `n * 16` and `j` below 16 is negative) and
        through rounding (`(n + 7) // 8 * 8 - n` is in [0, 7]), as TVM proves
        such comparisons."""
        lo, hi = self.const_bound(diff)
        top, bottom = self._expanded(diff, True), self._expanded(diff, False)
        if top is not None:
            hi = min(hi, self.const_bound(top)[1])
        if bottom is not None:
            lo = max(lo, self.const_bound(bottom)[0])
        return lo, hi

    def _expanded(self, e: tir.PrimExpr, top: bool) -> tir.PrimExpr | None:
        """An expression at least (`top`) or at most `e`, in which the terms of
        `e` that hide a relation between symbols are opened up: a var of a
        symbolic range becomes the end of its range, `(x // c) * (k * c)`
        becomes `k * x` less what the division drops (up to `c - 1`). None when
        `e` has no such term."""
        canon = self._canon(e)
        if not isinstance(canon, (_Sum, _Split)):
            return None
        whole = self._to_sum(canon, e.dtype)
        out = _Sum(e.dtype, [], whole.base)
        changed = False
        for t in whole.terms:
            ends = self.symbolic.get(t.index) if isinstance(t.index, tir.Var) else None
            if ends is not None and t.upper is None:
                end = ends[1] if (t.scale > 0) == top else ends[0]
                part = self._canon(floordiv(end, t.lower) if t.lower != 1 else end)
                out.add_sum(self._to_sum(part, e.dtype), t.scale)
                changed = True
            elif t.lower > 1 and t.upper is None and t.scale % t.lower == 0:
                k = t.scale // t.lower
                out.add_sum(self._to_sum(self._canon(t.index), e.dtype), k)
                if (k > 0) != top:
                    out.base -= k * (t.lower - 1)
                changed = True
            else:
                out.add_term(t, 1)
        return out.normalize() if changed else None

    def can_prove_ge(self, e: tir.PrimExpr, value: int) -> bool:
        return self.const_bound(e)[0] >= value

    def can_prove(self, cond: tir.PrimExpr) -> bool:
        return as_bool(self.simplify(cond)) is True

    def can_prove_equal(self, a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
        return as_int(self.simplify(sub(a, b))) == 0

    # ------------------------------------------------------------ simplification

    def simplify(self, e: tir.PrimExpr) -> tir.PrimExpr:
        """Canonical form, then the rewrite rules (comparisons, min/max, select)
        and canonical form again: TVM's `Analyzer.simplify` order."""
        e = self.canonical_simplify(e)
        if as_int(e) is not None:
            return e
        e = self.rewrite_simplify(e)
        if as_int(e) is not None:
            return e
        return self.canonical_simplify(e)

    def canonical_simplify(self, e: tir.PrimExpr) -> tir.PrimExpr:
        out = self._canon(e)
        return out.normalize() if isinstance(out, (_Sum, _Split)) else out

    def rewrite_simplify(self, e: tir.PrimExpr) -> tir.PrimExpr:
        return _Rewriter(self).visit(e)

    # The canonical visitor returns a _Sum, a _Split or a plain expression.
    def _canon(self, e: tir.PrimExpr) -> tir.PrimExpr | _Sum | _Split:
        if isinstance(e, tir.Var):
            return self.values.get(e, e)
        if isinstance(e, tir.BinaryOp) and is_index(e):
            method = _CANON_RULES.get(e.kind)
            if method is not None:
                return method(self, e)
        if isinstance(e, tir.Cast) and is_index(e) and is_index(e.value):
            value = self._canon(e.value)
            if dt.bits(e.dtype) >= dt.bits(e.value.dtype) and isinstance(value, (_Sum, _Split)):
                return _retype(value, e.dtype)
            return cast(e.dtype, _norm(value))
        return _rebuild(e, self.canonical_simplify)

    def _to_split(self, x: tir.PrimExpr | _Sum | _Split) -> _Split:
        if isinstance(x, _Split):
            return x.copy()
        if isinstance(x, _Sum):
            if x.base == 0 and len(x.terms) == 1:
                return x.terms[0].copy()
            x = x.normalize()
        return _Split(x)

    def _to_sum(self, x: tir.PrimExpr | _Sum | _Split, dtype: str) -> _Sum:
        if isinstance(x, _Sum):
            return x.copy()
        value = as_int(x) if isinstance(x, tir.PrimExpr) else None
        if value is not None:
            return _Sum(dtype, [], value)
        return _Sum(dtype, [self._to_split(x)])

    def _add(self, e: tir.BinaryOp, sign: int = 1) -> tir.PrimExpr | _Sum:
        a, b = self._canon(e.a), self._canon(e.b)
        x, y = _const(a), _const(b)
        if x is not None and y is not None:
            return const(x + sign * y, e.dtype)
        out = self._to_sum(a, e.dtype)
        if y is not None:
            out.base += sign * y
        elif isinstance(b, _Sum):
            out.add_sum(b, sign)
        else:
            out.add_term(self._to_split(b), sign)
        return out

    def _sub(self, e: tir.BinaryOp) -> tir.PrimExpr | _Sum:
        return self._add(e, -1)

    def _mul(self, e: tir.BinaryOp) -> tir.PrimExpr | _Sum | _Split:
        a, b = self._canon(e.a), self._canon(e.b)
        x, y = _const(a), _const(b)
        if x is not None and y is not None:
            return const(x * y, e.dtype)
        if x is not None:
            a, b, y = b, a, x
        if y is not None:
            if isinstance(a, _Sum):
                out = a.copy()
                out.mul(y)
                return out
            split = self._to_split(a)
            split.scale *= y
            return split
        # A product of symbols keeps their constant factors as its scale:
        # `(n * 3) * (m * 5)` is `n * m * 15`.
        (x_index, x_scale), (y_index, y_scale) = _scaled(a), _scaled(b)
        return _Split(mul(x_index, y_index), scale=x_scale * y_scale)

    def _floordiv(self, e: tir.BinaryOp) -> tir.PrimExpr | _Sum | _Split:
        a, b = self._canon(e.a), self._canon(e.b)
        x, c = _const(a), _const(b)
        if x is not None and c is not None and c != 0:
            return const(x // c, e.dtype)
        if c is None or c <= 0:
            return floordiv(_norm(a), _norm(b))
        if c == 1:
            return a
        if isinstance(a, _Sum):
            lhs, extra = a.split_divisible(c)
            lhs.divide(c)
            if extra.is_zero():
                return lhs
            rest = extra.normalize()
            rest_value = as_int(rest)
            if rest_value is not None:
                lhs.base += rest_value // c
            elif not (self.const_bound(rest)[1] < c and self.can_prove_ge(rest, 0)):
                lhs.add_term(self._split_div(self._to_split(rest), c), 1)
            return lhs
        lo, hi = self.const_bound(_norm(a))
        if lo >= 0 and hi < c:
            return const(0, e.dtype)
        return self._split_div(self._to_split(a), c)

    def _split_div(self, s: _Split, c: int) -> _Split:
        s = s.copy()
        if s.scale % c == 0:
            s.scale //= c
            return s
        if c % s.scale == 0:
            cc = c // s.scale
            if s.upper is None or s.upper % (s.lower * cc) == 0:
                s.scale, s.lower = 1, s.lower * cc
                return s
            if s.upper <= s.lower * cc:
                return _Split(const(0, s.index.dtype))
            return _Split(floormod(s.index, s.upper), s.lower * cc, None, 1)
        return _Split(s.normalize(), c)

    def _floormod(self, e: tir.BinaryOp) -> tir.PrimExpr | _Sum | _Split:
        a, b = self._canon(e.a), self._canon(e.b)
        x, c = _const(a), _const(b)
        if x is not None and c is not None and c != 0:
            return const(x % c, e.dtype)
        if c is None or c <= 0:
            return floormod(_norm(a), _norm(b))
        if isinstance(a, _Sum):
            _, extra = a.split_divisible(c)
            rest = extra.normalize()
            rest_value = as_int(rest)
            if rest_value is not None:
                return const(rest_value % c, e.dtype)
            if self.const_bound(rest)[1] < c and self.can_prove_ge(rest, 0):
                return rest
            extra.base %= c
            return self._split_mod(self._to_split(extra), c)
        lo, hi = self.const_bound(_norm(a))
        if lo >= 0 and hi < c:
            return a
        return self._split_mod(self._to_split(a), c)

    def _split_mod(self, s: _Split, c: int) -> _Split:
        s = s.copy()
        if s.scale % c == 0:
            s.scale = 0
            return s
        if c % s.scale == 0:
            new_upper = s.lower * (c // s.scale)
            if s.upper is None or s.upper % new_upper == 0:
                if s.upper is not None and new_upper < s.upper:
                    inner = self._to_split(self._canon(floormod(s.index, new_upper)))
                    if s.lower != 1:
                        inner = self._split_div(inner, s.lower)
                    inner.scale *= s.scale
                    return inner
                s.upper = new_upper
                return s
            if new_upper % s.upper == 0:
                return s
        return _Split(s.normalize(), 1, c, 1)


def _const(x: tir.PrimExpr | _Sum | _Split) -> int | None:
    return as_int(x) if isinstance(x, tir.PrimExpr) else None


def _scaled(x: tir.PrimExpr | _Sum | _Split) -> tuple[tir.PrimExpr, int]:
    """`x` as (expression, constant factor)."""
    if isinstance(x, _Sum) and x.base == 0 and len(x.terms) == 1:
        x = x.terms[0]
    if isinstance(x, _Split):
        unscaled = x.copy()
        unscaled.scale = 1
        return unscaled.normalize(), x.scale
    return _norm(x), 1


def _norm(x: tir.PrimExpr | _Sum | _Split) -> tir.PrimExpr:
    return x.normalize() if isinstance(x, (_Sum, _Split)) else x


def _retype(x: _Sum | _Split, dtype: str) -> _Sum | _Split:
    if isinstance(x, _Split):
        return _Split(cast(dtype, x.index), x.lower, x.upper, x.scale)
    return _Sum(dtype, [_retype(t, dtype) for t in x.terms], x.base)


_CANON_RULES = {
    "add": Analyzer._add,
    "sub": Analyzer._sub,
    "mul": Analyzer._mul,
    "floordiv": Analyzer._floordiv,
    "floormod": Analyzer._floormod,
}


def _rebuild(e: tir.PrimExpr, visit: object) -> tir.PrimExpr:
    """`e` with its direct sub-expressions passed through `visit`."""
    if isinstance(e, tir.BinaryOp):
        a, b = visit(e.a), visit(e.b)
        if a is e.a and b is e.b:
            return e
        return tir.BinaryOp(e.kind, a, b, e.dtype)
    if isinstance(e, tir.Cast):
        value = visit(e.value)
        return e if value is e.value else tir.Cast(e.dtype, value)
    if isinstance(e, tir.Select):
        parts = (visit(e.condition), visit(e.true_value), visit(e.false_value))
        if parts == (e.condition, e.true_value, e.false_value):
            return e
        return tir.Select(*parts, e.dtype)
    if isinstance(e, tir.Not):
        a = visit(e.a)
        return e if a is e.a else tir.Not(a)
    if isinstance(e, tir.Call):
        args = tuple(visit(x) for x in e.args)
        return (
            e
            if all(x is y for x, y in zip(args, e.args, strict=True))
            else tir.Call(e.dtype, e.op, args)
        )
    if isinstance(e, tir.BufferLoad):
        indices = tuple(visit(x) for x in e.indices)
        if all(x is y for x, y in zip(indices, e.indices, strict=True)):
            return e
        return tir.BufferLoad(e.buffer, indices, e.dtype)
    return e


def _dtype_bound(dtype: str) -> Bound:
    if dt.is_bool(dtype):
        return (0, 1)
    if dt.is_int(dtype) and dt.lanes(dtype) == 1:
        bits = dt.bits(dtype)
        return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if dt.is_uint(dtype) and dt.lanes(dtype) == 1:
        return (0, (1 << dt.bits(dtype)) - 1)
    return (-INF, INF)


def _mul_bound(a: Bound, b: Bound) -> Bound:
    products = [_safe_mul(x, y) for x in a for y in b]
    return (min(products), max(products))


def _safe_mul(x: float, y: float) -> float:
    if x == 0 or y == 0:
        return 0
    return x * y


def _floordiv_bound(a: Bound, b: Bound) -> Bound:
    if b[0] > 0:
        values = [_floor_div(x, y) for x in a for y in b]
        return (min(values), max(values))
    return (-INF, INF)


def _floor_div(x: float, y: float) -> float:
    if math.isinf(x) or math.isinf(y):
        return x / y if not math.isinf(y) else 0
    return x // y


def _floormod_bound(a: Bound, b: Bound) -> Bound:
    if b[0] > 0:
        if a[0] >= 0 and a[1] < b[0]:
            return a
        return (0, b[1] - 1)
    return (-INF, INF)


def _add_bound(a: Bound, b: Bound) -> Bound:
    return (a[0] + b[0], a[1] + b[1])


def _sub_bound(a: Bound, b: Bound) -> Bound:
    return (a[0] - b[1], a[1] - b[0])


def _min_bound(a: Bound, b: Bound) -> Bound:
    return (min(a[0], b[0]), min(a[1], b[1]))


def _max_bound(a: Bound, b: Bound) -> Bound:
    return (max(a[0], b[0]), max(a[1], b[1]))


_BOUND_RULES = {
    "add": _add_bound,
    "sub": _sub_bound,
    "mul": _mul_bound,
    "floordiv": _floordiv_bound,
    "floormod": _floormod_bound,
    "min": _min_bound,
    "max": _max_bound,
}


# ---------------------------------------------------------------- rewrite rules


class _Rewriter:
    """The few rewrite rules schedules need after canonical form: folding of
    comparisons, min/max and selects whose outcome the bounds decide."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer

    def visit(self, e: tir.PrimExpr) -> tir.PrimExpr:
        e = _rebuild(e, self.visit)
        if isinstance(e, tir.BinaryOp):
            return self.binary(e)
        if isinstance(e, tir.Select):
            cond = as_bool(e.condition)
            if cond is not None:
                return e.true_value if cond else e.false_value
        if isinstance(e, tir.Not):
            value = as_bool(e.a)
            if value is not None:
                return tir.IntImm("bool", int(not value))
        return e

    def move_constants(self, e: tir.BinaryOp) -> tir.PrimExpr:
        """`x + c1 < c2` -> `x < c2 - c1` (either side), and `x * c1 + y < c2` ->
        `x < c2 / c1` when `0 <= y < c1` and `c1` divides `c2` (TVM's rules)."""
        a, b = e.a, e.b
        if as_int(b) is not None and isinstance(a, tir.BinaryOp) and a.kind in ("add", "sub"):
            c = as_int(a.b)
            if c is not None:
                moved = sub(b, c) if a.kind == "add" else add(b, c)
                return self.move_constants(tir.BinaryOp(e.kind, a.a, moved, e.dtype))
            c2 = as_int(b)
            scaled = a.a if a.kind == "add" else None
            if (
                e.kind == "lt"
                and isinstance(scaled, tir.BinaryOp)
                and scaled.kind == "mul"
                and (c1 := as_int(scaled.b)) is not None
                and c1 > 0
                and c2 % c1 == 0
            ):
                lo, hi = self.analyzer.const_bound(a.b)
                if lo >= 0 and hi < c1:
                    return tir.BinaryOp("lt", scaled.a, const(c2 // c1, b.dtype), e.dtype)
        if as_int(a) is not None and isinstance(b, tir.BinaryOp) and b.kind in ("add", "sub"):
            c = as_int(b.b)
            if c is not None:
                moved = sub(a, c) if b.kind == "add" else add(a, c)
                return tir.BinaryOp(e.kind, moved, b.a, e.dtype)
        return e

    def binary(self, e: tir.BinaryOp) -> tir.PrimExpr:
        if e.kind in ("gt", "ge"):
            # TVM keeps only < and <=: `a > b` is rewritten as `b < a`.
            flipped = "lt" if e.kind == "gt" else "le"
            e = tir.BinaryOp(flipped, e.b, e.a, e.dtype)
        if e.kind in ("lt", "le", "eq", "ne") and is_index(e.a):
            diff = self.analyzer.canonical_simplify(sub(e.a, e.b))
            lo, hi = self.analyzer.difference_bound(diff)
            decided = {
                "lt": (hi < 0, lo >= 0),
                "le": (hi <= 0, lo > 0),
                "eq": (lo == hi == 0, lo > 0 or hi < 0),
                "ne": (lo > 0 or hi < 0, lo == hi == 0),
            }[e.kind]
            if decided[0]:
                return tir.IntImm("bool", 1)
            if decided[1]:
                return tir.IntImm("bool", 0)
            if e.kind in ("lt", "le"):
                return self.move_constants(e)
            return e
        if e.kind in ("and", "or"):
            a, b = as_bool(e.a), as_bool(e.b)
            if e.kind == "and":
                if a is False or b is False:
                    return tir.IntImm("bool", 0)
                if a is True:
                    return e.b
                if b is True:
                    return e.a
            else:
                if a is True or b is True:
                    return tir.IntImm("bool", 1)
                if a is False:
                    return e.b
                if b is False:
                    return e.a
            return e
        if e.kind in ("min", "max") and is_index(e):
            diff = self.analyzer.canonical_simplify(sub(e.a, e.b))
            if as_int(diff) is not None:
                a_first = as_int(diff) <= 0 if e.kind == "min" else as_int(diff) >= 0
                return e.a if a_first else e.b
            a, b = self.analyzer.const_bound(e.a), self.analyzer.const_bound(e.b)
            a_first = a[1] <= b[0] if e.kind == "min" else a[0] >= b[1]
            b_first = b[1] <= a[0] if e.kind == "min" else b[0] >= a[1]
            if not (a_first or b_first):
                lo, hi = self.analyzer.difference_bound(diff)
                a_first = hi <= 0 if e.kind == "min" else lo >= 0
                b_first = lo >= 0 if e.kind == "min" else hi <= 0
            if a_first:
                return e.a
            if b_first:
                return e.b
        return e
