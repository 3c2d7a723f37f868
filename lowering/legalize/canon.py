"""Index arithmetic in the canonical form TVM's simplifier prints.

Reshape-style kernels compute `(flat // stride) % dim`; TVM simplifies those
through sums of split terms `((x % upper) // lower) * scale`, sorted by scale,
then lower factor, then upper factor (all descending). `IndexSum` keeps that
form for constant factors and falls back to plain expressions for symbolic ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import tir
from tvmlite.lowering.legalize import texpr as E


@dataclass(frozen=True, slots=True)
class Split:
    """`((index % upper) // lower) * scale`; upper None = no modulo."""

    index: tir.PrimExpr
    lower: int = 1
    upper: int | None = None
    scale: int = 1

    def key(self) -> tuple[int, int, float]:
        return (-self.scale, -self.lower, -(self.upper or float("inf")))

    def expr(self) -> tir.PrimExpr:
        e = self.index
        if self.upper is not None:
            e = E.floormod(e, self.upper)
        if self.lower != 1:
            e = E.floordiv(e, self.lower)
        return E.mul(e, self.scale) if self.scale != 1 else e


@dataclass(frozen=True, slots=True)
class IndexSum:
    terms: tuple[Split, ...]

    @staticmethod
    def of(e: tir.PrimExpr) -> IndexSum:
        return IndexSum((Split(e),))

    def expr(self) -> tir.PrimExpr:
        terms = sorted(self.terms, key=Split.key)
        if not terms:
            return E.idx(0)
        out = terms[0].expr()
        for t in terms[1:]:
            out = E.add(out, t.expr())
        return out

    def __add__(self, other: IndexSum) -> IndexSum:
        return IndexSum(self.terms + other.terms)

    def mul(self, c: tir.PrimExpr) -> IndexSum:
        k = E.value_of(c)
        if not isinstance(k, int):
            return IndexSum.of(E.mul(self.expr(), c))
        return IndexSum(tuple(Split(t.index, t.lower, t.upper, t.scale * k) for t in self.terms))

    def floordiv(self, d: tir.PrimExpr) -> IndexSum:
        k = E.value_of(d)
        if not isinstance(k, int) or k == 0:  # 0: a dim of an empty tensor, never run
            return IndexSum.of(E.floordiv(self.expr(), d))
        if k == 1:
            return self
        exact = [
            Split(t.index, t.lower, t.upper, t.scale // k) for t in self.terms if t.scale % k == 0
        ]
        rest = [t for t in self.terms if t.scale % k != 0]
        if not rest:
            return IndexSum(tuple(exact))
        if len(rest) == 1 and rest[0].scale == 1:
            t = rest[0]
            return IndexSum((*exact, Split(t.index, t.lower * k, t.upper, 1)))
        return IndexSum((*exact, Split(IndexSum(tuple(rest)).expr(), k)))

    def floormod(self, m: tir.PrimExpr) -> IndexSum:
        k = E.value_of(m)
        if not isinstance(k, int) or k == 0:
            return IndexSum.of(E.floormod(self.expr(), m))
        if k == 1:
            return IndexSum(())
        rest = [t for t in self.terms if t.scale % k != 0]
        if not rest:
            return IndexSum(())
        if len(rest) == 1 and rest[0].scale == 1:
            t = rest[0]
            upper = t.lower * k
            if t.upper is None or t.upper % upper == 0:
                return IndexSum((Split(t.index, t.lower, upper, 1),))
        return IndexSum((Split(IndexSum(tuple(rest)).expr(), 1, k),))


def ravel(indices: tuple[tir.PrimExpr, ...], shape: tuple[tir.PrimExpr, ...]) -> IndexSum:
    """The flat row-major position of `indices` in `shape` (Horner form)."""
    flat = IndexSum(())
    for i, (v, dim) in enumerate(zip(indices, shape, strict=True)):
        flat = IndexSum.of(v) if i == 0 else flat.mul(dim) + IndexSum.of(v)
    return flat


def unravel(flat: IndexSum, shape: tuple[tir.PrimExpr, ...]) -> list[tir.PrimExpr]:
    """Indices into `shape` of the flat position `flat`."""
    out: list[tir.PrimExpr] = []
    for dim in reversed(shape):
        out.append(flat.floormod(dim).expr())
        flat = flat.floordiv(dim)
    return out[::-1]
