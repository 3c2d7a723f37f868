"""Affine iteration maps: recognising block bindings as splits and fusions of
loop variables, and writing them back in normal form.

After a loop split or fusion, a block's bindings are expressions such as
`(i0_0 * 4 + i0_1) // 6 % 2` over the new loops. `simplify_bindings` reads each
binding as a sum of *splits* `(mark // lower) % extent * scale`, where a *mark*
is a loop variable or an earlier fusion of several splits (a sum whose terms
chain scales `e1*e2, e2, 1`), and prints it back the way TVM's iteration-map
simplifier does: a mark's full range prints as the mark, its top part as a
division, a middle part as `mark % (lower*extent) // lower`. A binding that is
not such a map is left as it was.

Extents are ints, or index expressions when a loop runs a symbolic number of
times (`n`, `(n + 15) // 16`): such a loop is an iterator like any other, and
dividing it by a constant needs the division proved exact (`n * 16` by 16).
Scales and the `lower` of a split stay constant: a binding scaled by a
symbolic amount is not an affine map here (TVM prints it as substituted).
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl import dtype as dt

Extent = int | tir.PrimExpr  # an int when constant


def extent_mul(a: Extent, b: Extent) -> Extent:
    """`a * b`, in canonical form when symbolic."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(a, int):
        a, b = b, a
    assert isinstance(a, tir.PrimExpr)
    return _constant_or(canonical.Analyzer().canonical_simplify(arith.mul(a, b)))


def extent_divides(c: int, e: Extent) -> bool:
    """Whether `c` provably divides `e`."""
    if isinstance(e, int):
        return e % c == 0
    return arith.as_int(canonical.Analyzer().canonical_simplify(arith.floormod(e, c))) == 0


def extent_div(e: Extent, c: int) -> Extent:
    """`e // c` (exact: `extent_divides(c, e)`)."""
    if isinstance(e, int):
        return e // c
    return _constant_or(canonical.Analyzer().canonical_simplify(arith.floordiv(e, c)))


def extent_equal(a: Extent, b: Extent) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, int) or isinstance(b, int):
        return False  # extents are ints whenever they are constant
    return canonical.Analyzer().can_prove_equal(a, b)


def as_extent(e: tir.PrimExpr) -> Extent:
    """A loop's extent as the iteration map holds it."""
    return _constant_or(e)


def _constant_or(e: tir.PrimExpr) -> Extent:
    value = arith.as_int(e)
    return e if value is None else value


@dataclass(eq=False)
class Mark:
    """An iterator over [0, extent): a loop var minus its start `offset`, or a
    fused `IterSum` of splits."""

    source: tir.Var | IterSum
    extent: Extent
    offset: int = 0

    def leaves(self) -> list[tir.Var]:
        """The loop vars the mark is made of."""
        if isinstance(self.source, tir.Var):
            return [self.source]
        return [v for split in self.source.args for v in split.mark.leaves()]


@dataclass
class Split:
    mark: Mark
    lower: int
    extent: Extent
    scale: int


@dataclass
class IterSum:
    args: list[Split]
    base: tir.PrimExpr


class _NotAffine(Exception):
    """The expression is not an affine map of the input iterators."""


class _Detector:
    def __init__(self, iters: dict[tir.Var, tuple[int, Extent]], trivial: bool) -> None:
        self.iters = iters
        self.simplify_trivial = trivial
        self.marks: dict[tir.Var, Mark] = {}
        self.fused: list[tuple[list[tuple[int, int, Extent, int]], Mark]] = []

    def rewrite(self, e: tir.PrimExpr) -> IterSum:
        if isinstance(e, tir.Var):
            if e not in self.iters:
                return IterSum([], e)
            lo, extent = self.iters[e]
            if extent == 1 and self.simplify_trivial:
                return IterSum([], arith.const(lo, e.dtype))
            mark = self.marks.setdefault(e, Mark(e, extent, lo))
            return IterSum([Split(mark, 1, extent, 1)], arith.const(lo, e.dtype))
        if isinstance(e, tir.IntImm):
            return IterSum([], e)
        if isinstance(e, tir.Cast) and canonical.is_index(e) and canonical.is_index(e.value):
            inner = self.rewrite(e.value)
            if inner.args and dt.bits(e.dtype) < dt.bits(e.value.dtype):
                raise _NotAffine
            return IterSum(inner.args, arith.cast(e.dtype, inner.base))
        if isinstance(e, tir.BinaryOp) and canonical.is_index(e):
            if e.kind in ("add", "sub"):
                a, b = self.rewrite(e.a), self.rewrite(e.b)
                sign = 1 if e.kind == "add" else -1
                args = list(a.args) + [
                    Split(s.mark, s.lower, s.extent, s.scale * sign) for s in b.args
                ]
                base = arith.add(a.base, b.base) if sign == 1 else arith.sub(a.base, b.base)
                return IterSum(args, base)
            if e.kind == "mul":
                a, b = self.rewrite(e.a), self.rewrite(e.b)
                if a.args and b.args:
                    raise _NotAffine
                if not a.args and not b.args:
                    return IterSum([], arith.mul(a.base, b.base))
                if not a.args:
                    a, b = b, a
                c = arith.as_int(b.base)
                if c is None:
                    raise _NotAffine
                return IterSum(
                    [Split(s.mark, s.lower, s.extent, s.scale * c) for s in a.args],
                    arith.mul(a.base, c),
                )
            if e.kind in ("floordiv", "floormod"):
                a, b = self.rewrite(e.a), self.rewrite(e.b)
                if b.args:
                    raise _NotAffine
                if not a.args:
                    op = arith.floordiv if e.kind == "floordiv" else arith.floormod
                    return IterSum([], op(a.base, b.base))
                c = arith.as_int(b.base)
                if c is None:
                    return self.by_whole(self.to_split(a), b.base, e.kind, e.dtype)
                if c <= 0:
                    raise _NotAffine
                split = self.to_split(a)
                if e.kind == "floordiv":
                    return self.split_div(split, c, e.dtype)
                return self.split_mod(split, c, e.dtype)
        if self.uses_iters(e):
            raise _NotAffine
        return IterSum([], e)

    def uses_iters(self, e: tir.PrimExpr) -> bool:
        from tvmlite.dsl.analysis import uses

        return uses(e, self.iters)

    def to_split(self, s: IterSum) -> Split:
        if arith.as_int(s.base) != 0:
            raise _NotAffine
        if len(s.args) == 1:
            return s.args[0]
        return self.fuse(s.args)

    def fuse(self, args: list[Split]) -> Split:
        """Fuse `args` into one split over a new mark: their scales must chain
        (the smallest `c`, then `c * e`, then `c * e * e'`, ...); only the
        outermost part may have a symbolic extent."""
        remaining = list(args)
        smallest = min(remaining, key=lambda s: abs(s.scale))
        base_scale = smallest.scale
        if base_scale <= 0:
            raise _NotAffine
        ordered: list[Split] = []
        expected = base_scale
        extent: Extent = 1
        while remaining:
            found = next((s for s in reversed(remaining) if s.scale == expected), None)
            if found is None:
                raise _NotAffine
            remaining.remove(found)
            ordered.append(found)
            extent = extent_mul(extent, found.extent)
            if remaining and not isinstance(found.extent, int):
                raise _NotAffine
            expected *= found.extent if isinstance(found.extent, int) else 1
        ordered.reverse()
        key = [(id(s.mark), s.lower, s.extent, s.scale // base_scale) for s in ordered]
        for known, mark in self.fused:
            if _same_key(known, key):
                return Split(mark, 1, extent, base_scale)
        inner = [Split(s.mark, s.lower, s.extent, s.scale // base_scale) for s in ordered]
        zero = arith.const(0, _dtype_of(inner[0]))
        mark = Mark(IterSum(inner, zero), extent)
        self.fused.append((key, mark))
        return Split(mark, 1, extent, base_scale)

    def by_whole(self, s: Split, whole: tir.PrimExpr, kind: str, dtype: str) -> IterSum:
        """`s // whole` or `s % whole` for a symbolic `whole`: only when it is the
        split's whole range (`fused % (n * 28)` of a loop over `n * 28`)."""
        if not extent_equal(extent_mul(s.scale, s.extent), as_extent(whole)):
            raise _NotAffine
        if kind == "floordiv":
            return IterSum([], arith.const(0, dtype))
        return IterSum([s], arith.const(0, dtype))

    def split_div(self, s: Split, c: int, dtype: str) -> IterSum:
        if s.scale % c == 0:
            return IterSum([Split(s.mark, s.lower, s.extent, s.scale // c)], arith.const(0, dtype))
        if c % s.scale != 0:
            raise _NotAffine
        c //= s.scale
        if not extent_divides(c, s.extent):
            raise _NotAffine
        return IterSum(
            [Split(s.mark, s.lower * c, extent_div(s.extent, c), 1)], arith.const(0, dtype)
        )

    def split_mod(self, s: Split, c: int, dtype: str) -> IterSum:
        if s.scale % c == 0:
            return IterSum([], arith.const(0, dtype))
        if c % s.scale != 0:
            raise _NotAffine
        c //= s.scale
        if not extent_divides(c, s.extent):
            raise _NotAffine
        return IterSum([Split(s.mark, s.lower, c, s.scale)], arith.const(0, dtype))

    def top(self, e: tir.PrimExpr) -> IterSum:
        """A whole binding: several terms must fuse into one iterator."""
        s = self.rewrite(e)
        if len(s.args) > 1:
            split = self.fuse(s.args)
            return IterSum([split], s.base)
        return s


def _same_key(a: list[tuple[int, int, Extent, int]], b: list[tuple[int, int, Extent, int]]) -> bool:
    return len(a) == len(b) and all(
        x[0] == y[0] and x[1] == y[1] and x[3] == y[3] and extent_equal(x[2], y[2])
        for x, y in zip(a, b, strict=True)
    )


def _dtype_of(s: Split) -> str:
    source = s.mark.source
    return source.dtype if isinstance(source, tir.Var) else _dtype_of(source.args[0])


def normalize(s: IterSum, dtype: str) -> tir.PrimExpr:
    """An iteration sum written as an expression (TVM's normal form)."""
    out: tir.PrimExpr = arith.const(0, dtype)
    for split in s.args:
        out = arith.add(out, _split_expr(split, dtype))
    return arith.add(out, s.base)


def _split_expr(s: Split, dtype: str) -> tir.PrimExpr:
    source = s.mark.source
    if isinstance(source, tir.Var):
        # A var starting at `lo` is the mark `var - lo` (the binding adds `lo` back).
        e = arith.sub(source, s.mark.offset) if s.mark.offset else source
    else:
        e = normalize(source, dtype)
    if s.lower == 1 and extent_equal(s.extent, s.mark.extent):
        return arith.mul(e, s.scale)
    if extent_equal(s.mark.extent, extent_mul(s.lower, s.extent)):
        if s.extent == 1 and s.mark.extent != 1:
            return arith.const(0, dtype)
        return arith.mul(arith.floordiv(e, s.lower), s.scale)
    full = extent_mul(s.lower, s.extent)
    return arith.mul(arith.floordiv(arith.floormod(e, full), s.lower), s.scale)


def detect(
    values: tuple[tir.PrimExpr, ...],
    iters: dict[tir.Var, tuple[int, Extent]],
    preserve_unit_iters: bool = True,
) -> list[IterSum] | None:
    """Each value as an iteration sum over `iters`, or None when one is not affine."""
    detector = _Detector(iters, not preserve_unit_iters)
    try:
        return [detector.top(v) for v in values]
    except _NotAffine:
        return None


def simplify_bindings(
    values: tuple[tir.PrimExpr, ...],
    iters: dict[tir.Var, tuple[int, Extent]],
    preserve_unit_iters: bool = True,
) -> tuple[tir.PrimExpr, ...]:
    """`values` in normal form when every one is an affine map of `iters`
    (var -> (min, extent), the min constant); otherwise `values` unchanged."""
    sums = detect(values, iters, preserve_unit_iters)
    if sums is None:
        return values
    return tuple(normalize(s, v.dtype) for s, v in zip(sums, values, strict=True))
