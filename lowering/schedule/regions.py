"""Buffer regions as symbolic intervals, relaxed over loops.

`relaxed_region` answers "which part of a buffer does this block touch while
these loops run": the block's bindings are substituted into its region and
each index bound is widened over the given loops' ranges by the interval
arithmetic of `arith.bounds`. Bounds that it cannot follow widen to the whole
buffer axis.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl.analysis import substitute


@dataclass(frozen=True)
class Interval:
    """`[lo, hi]`, both inclusive."""

    lo: tir.PrimExpr
    hi: tir.PrimExpr


def relax(
    region: tir.BufferRegion, ranges: dict[tir.Var, tir.Range], analyzer: canonical.Analyzer
) -> list[Interval]:
    """Per axis, the part of `region` covered while the vars of `ranges` run over
    them (`arith.bounds`), simplified; the whole axis where that cannot be told."""
    out = []
    for axis, r in enumerate(region.region):
        lo = arith.bounds(r.min, ranges)
        hi = arith.bounds(arith.sub(arith.add(r.min, r.extent), 1), ranges)
        if lo is None or hi is None:
            shape = region.buffer.shape[axis]
            out.append(Interval(arith.const(0, shape.dtype), arith.sub(shape, 1)))
        else:
            out.append(Interval(analyzer.simplify(lo[0]), analyzer.simplify(hi[1])))
    return out


def relaxed_region(
    region: tir.BufferRegion,
    realize: tir.BlockRealize,
    loops: list[tir.For],
    analyzer: canonical.Analyzer,
) -> list[Interval]:
    """The part of `region` (of the block `realize` instantiates) touched while
    `loops` run, per axis, in terms of the remaining outer variables."""
    binding = {
        iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values, strict=True)
    }
    ranges = {lp.loop_var: tir.Range(lp.min, lp.extent) for lp in loops}
    return relax(substitute_region(region, binding), ranges, analyzer)


def substitute_region(
    region: tir.BufferRegion, mapping: dict[tir.Var, tir.PrimExpr]
) -> tir.BufferRegion:
    ranges = tuple(
        tir.Range(substitute(r.min, mapping), substitute(r.extent, mapping)) for r in region.region
    )
    return tir.BufferRegion(region.buffer, ranges)


def union(regions: list[list[Interval]], analyzer: canonical.Analyzer) -> list[Interval]:
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


def condition_bounds(
    condition: tir.PrimExpr, ranges: dict[tir.Var, tuple[int, int]]
) -> tuple[dict[tir.Var, tuple[int, int]], bool]:
    """`ranges` (var -> (min, extent)) narrowed by the conjuncts `c <= v`, `v < c`
    (and mirrored) of `condition`, and whether every conjunct was of that form."""
    bounds = {v: [lo, lo + extent] for v, (lo, extent) in ranges.items()}
    flipped = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
    understood = True
    stack = [condition]
    while stack:
        c = stack.pop()
        if isinstance(c, tir.BinaryOp) and c.kind == "and":
            stack += [c.a, c.b]
            continue
        if arith.as_bool(c) is True:
            continue
        if not (isinstance(c, tir.BinaryOp) and c.kind in flipped):
            understood = False
            continue
        kind, a, b = c.kind, c.a, c.b
        if isinstance(b, tir.Var) and b in bounds:
            kind, a, b = flipped[kind], b, a
        value = arith.as_int(b)
        if not (isinstance(a, tir.Var) and a in bounds and value is not None):
            understood = False
            continue
        lo_hi = bounds[a]
        if kind == "lt":
            lo_hi[1] = min(lo_hi[1], value)
        elif kind == "le":
            lo_hi[1] = min(lo_hi[1], value + 1)
        elif kind == "gt":
            lo_hi[0] = max(lo_hi[0], value + 1)
        else:
            lo_hi[0] = max(lo_hi[0], value)
    return {v: (lo, max(hi - lo, 0)) for v, (lo, hi) in bounds.items()}, understood
