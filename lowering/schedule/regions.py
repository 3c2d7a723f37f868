"""Buffer regions as symbolic intervals, relaxed over loops.

`relaxed_region` answers "which part of a buffer does this block touch while
these loops run": the block's bindings are substituted into its region and
each index bound is widened over the given loops' ranges by interval
arithmetic (sums, constant multiples, floor division and modulo, min/max).
Bounds that the arithmetic cannot follow widen to the whole buffer axis.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import arith, tir
from tvmlite.dsl.parse_tir_regions import substitute, uses


@dataclass(frozen=True)
class Interval:
    """`[lo, hi]`, both inclusive."""

    lo: tir.PrimExpr
    hi: tir.PrimExpr


def eval_interval(e: tir.PrimExpr, dom: dict[tir.Var, Interval]) -> Interval | None:
    """Bounds of `e` when each var of `dom` ranges over its interval (None when the
    arithmetic cannot bound it)."""
    if not uses(e, dom):
        return Interval(e, e)
    if isinstance(e, tir.Var):
        return dom[e]
    if isinstance(e, tir.Cast):
        inner = eval_interval(e.value, dom)
        if inner is None:
            return None
        return Interval(arith.cast(e.dtype, inner.lo), arith.cast(e.dtype, inner.hi))
    if not isinstance(e, tir.BinaryOp):
        return None
    a, b = eval_interval(e.a, dom), eval_interval(e.b, dom)
    if a is None or b is None:
        return None
    if e.kind == "add":
        return Interval(arith.add(a.lo, b.lo), arith.add(a.hi, b.hi))
    if e.kind == "sub":
        return Interval(arith.sub(a.lo, b.hi), arith.sub(a.hi, b.lo))
    if e.kind in ("min", "max"):
        op = arith.minimum if e.kind == "min" else arith.maximum
        return Interval(op(a.lo, b.lo), op(a.hi, b.hi))
    c = arith.const_value(e.b) if b.lo is b.hi else None
    if c is None:
        return None
    if e.kind == "mul":
        lo, hi = arith.mul(a.lo, c), arith.mul(a.hi, c)
        return Interval(lo, hi) if c >= 0 else Interval(hi, lo)
    if e.kind == "floordiv" and c > 0:
        return Interval(arith.floordiv(a.lo, c), arith.floordiv(a.hi, c))
    if e.kind == "floormod" and c > 0:
        if a.lo is a.hi:
            return Interval(e, e)
        return Interval(arith.imm(0, e.dtype), arith.imm(c - 1, e.dtype))
    return None


def relaxed_region(
    region: tir.BufferRegion,
    realize: tir.BlockRealize,
    loops: list[tir.For],
    analyzer: arith.Analyzer,
) -> list[Interval]:
    """The part of `region` (of the block `realize` instantiates) touched while
    `loops` run, per axis, in terms of the remaining outer variables."""
    binding = {
        iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values, strict=True)
    }
    dom = {
        lp.loop_var: Interval(lp.min, arith.sub(arith.add(lp.min, lp.extent), 1)) for lp in loops
    }
    out = []
    for axis, r in enumerate(region.region):
        lo = substitute(r.min, binding)
        hi = substitute(arith.sub(arith.add(r.min, r.extent), 1), binding)
        lo_i, hi_i = eval_interval(lo, dom), eval_interval(hi, dom)
        if lo_i is None or hi_i is None:
            shape = region.buffer.shape[axis]
            out.append(Interval(arith.imm(0, shape.dtype), arith.sub(shape, 1)))
        else:
            out.append(Interval(analyzer.simplify(lo_i.lo), analyzer.simplify(hi_i.hi)))
    return out


def union(regions: list[list[Interval]], analyzer: arith.Analyzer) -> list[Interval]:
    """The smallest per-axis intervals covering every region."""
    first = regions[0]
    if len(regions) == 1:
        return list(first)
    out = []
    for axis, r in enumerate(first):
        lo, hi = r.lo, r.hi
        for other in regions[1:]:
            lo = analyzer.simplify(arith.minimum(lo, other[axis].lo))
            hi = analyzer.simplify(arith.maximum(hi, other[axis].hi))
        out.append(Interval(lo, hi))
    return out
