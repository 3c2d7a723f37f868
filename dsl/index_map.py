"""Index maps, `T.index_map(lambda n, c, h, w: (n, c // 4, h, w, c % 4))`, and
the analysis that gives their output shape and their inverse.

An `IndexMap` is the value of `R.layout_transform`'s `index_map` attribute: the
lambda's parameters (int64 vars, TVM's default index dtype) and the index
expressions it yields. The parser builds it from the lambda's text without
evaluating anything; the printer writes it back as TVM does.

`analyze` reads the map as TVM's iter-map detection does for the layouts used in
practice: every output index is a *split* `F // lower % extent` of a *fused*
input `F = v0 * s0 + v1 * s1 + ...` (strides the products of the inner dims), and
the splits of one fused input tile it from the innermost (`lower` 1) outwards.
That covers permutations, NCHW <-> NCHWc, flattening and re-tiling with padding
(`(i * 6 + j) // 5, (i * 6 + j) % 5`). The outermost split of a group takes
`ceildiv(total, lower)` positions, so it may overhang the input: those are the
padding positions that `pad_value` fills. A map outside this form is rejected
with a reason (TVM rejects offsets such as `i + 1` too).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tvmlite.diagnostics import Span
from tvmlite.dsl import tir
from tvmlite.dsl.ops import shape_arith as sa

INDEX = "int64"


@dataclass(frozen=True, slots=True)
class IndexMap:
    """`lambda *initial_indices: final_indices`; `inverse_index_map` is the
    optional user-given inverse TVM keeps (and prints) alongside."""

    initial_indices: tuple[tir.Var, ...]
    final_indices: tuple[tir.PrimExpr, ...]
    inverse_index_map: IndexMap | None = None
    span: Span | None = field(default=None, compare=False, repr=False)


class IndexMapError(ValueError):
    """The map is not a bijective tiling of its input that `analyze` can invert."""


class IndexMapOffset(IndexMapError):
    """An index starts away from 0 (`i + 1`): TVM rejects such a map outright."""


@dataclass(frozen=True)
class Fused:
    """`sum(var * stride)`: vars outermost first, strides in the same order."""

    vars: tuple[tir.Var, ...]
    strides: tuple[int, ...]


@dataclass(frozen=True)
class Split:
    """Output index `fused // lower % mod` (no modulo when `mod` is None)."""

    fused: Fused
    lower: int
    mod: int | None


@dataclass(frozen=True)
class Group:
    """The outputs that tile one fused input, outermost first: `outputs[k]` is the
    position in the final indices of the split `splits[k]`."""

    fused: Fused
    total: tir.PrimExpr  # the number of positions of the fused input
    outputs: tuple[int, ...]
    splits: tuple[Split, ...]
    padded: bool  # the outermost split may overhang the input


@dataclass(frozen=True)
class Layout:
    """What an index map does to a tensor of a given shape."""

    shape: tuple[tir.PrimExpr, ...]  # the output shape
    groups: tuple[Group, ...]

    @property
    def padded(self) -> bool:
        """Some output positions may lie outside the input."""
        return any(g.padded for g in self.groups)


def _linear(e: tir.PrimExpr, dims: dict[tir.Var, tir.PrimExpr]) -> dict[tir.Var, int]:
    """`e` as var -> constant coefficient, for sums of constant multiples of vars."""
    if isinstance(e, tir.Var) and e in dims:
        return {e: 1}
    if isinstance(e, tir.BinaryOp) and e.kind in ("add", "sub"):
        a, b = _linear(e.a, dims), _linear(e.b, dims)
        sign = 1 if e.kind == "add" else -1
        for v, c in b.items():
            a[v] = a.get(v, 0) + sign * c
        return {v: c for v, c in a.items() if c}
    if isinstance(e, tir.BinaryOp) and e.kind == "mul":
        for x, k in ((e.a, e.b), (e.b, e.a)):
            c = sa.as_int(k)
            if c is not None:
                return {v: c * w for v, w in _linear(x, dims).items()} if c else {}
    if sa.as_int(e):
        raise IndexMapOffset("an index does not start at 0 (it has a constant offset)")
    raise IndexMapError(f"cannot read the index {sa.show(e)} as a sum of input indices")


def _fused(e: tir.PrimExpr, dims: dict[tir.Var, tir.PrimExpr]) -> Fused:
    coeffs = _linear(e, dims)
    if not coeffs:
        raise IndexMapError("an index uses no input index")
    order = sorted(coeffs, key=lambda v: -coeffs[v])
    strides = tuple(coeffs[v] for v in order)
    if strides[-1] != 1 or any(c < 0 for c in strides):
        raise IndexMapError(f"the index {sa.show(e)} is not a row-major fusion of its inputs")
    for k in range(len(order) - 1):
        inner = sa.as_int(dims[order[k + 1]])
        if inner is None or strides[k] != strides[k + 1] * inner:
            raise IndexMapError(f"the index {sa.show(e)} is not a row-major fusion of its inputs")
    return Fused(tuple(order), strides)


def _split(e: tir.PrimExpr, dims: dict[tir.Var, tir.PrimExpr]) -> Split:
    if isinstance(e, tir.BinaryOp) and e.kind in ("floordiv", "floormod"):
        c = sa.as_int(e.b)
        if c is None or c <= 0:
            raise IndexMapError(f"{sa.show(e)} divides by something other than a positive constant")
        inner = _split(e.a, dims)
        if e.kind == "floormod":
            if inner.mod is not None and inner.mod % c:
                raise IndexMapError(f"{sa.show(e)}: nested modulo that does not divide")
            return Split(inner.fused, inner.lower, c)
        if inner.mod is None:
            return Split(inner.fused, inner.lower * c, None)
        if inner.mod % c:  # (F % m) // c is a split only when c divides m
            raise IndexMapError(f"{sa.show(e)}: a division that does not divide the modulo")
        return Split(inner.fused, inner.lower * c, inner.mod // c)
    return Split(_fused(e, dims), 1, None)


def analyze(index_map: IndexMap, shape: tuple[tir.PrimExpr, ...]) -> Layout:
    """The output shape of `index_map` applied to a tensor of `shape`, and the
    tiling it stands for; raises IndexMapError when it is not such a tiling."""
    if len(shape) != len(index_map.initial_indices):
        raise IndexMapError(
            f"the map takes {len(index_map.initial_indices)} indices, the tensor has "
            f"{len(shape)} dimensions"
        )
    dims = dict(zip(index_map.initial_indices, (sa.to_index(d) for d in shape), strict=True))
    splits = [_split(e, dims) for e in index_map.final_indices]
    by_fused: dict[Fused, list[int]] = {}
    for pos, s in enumerate(splits):
        by_fused.setdefault(s.fused, []).append(pos)
    seen: set[tir.Var] = set()
    groups, extents = [], [sa.const(0)] * len(splits)
    for fused, positions in by_fused.items():
        if seen & set(fused.vars):
            raise IndexMapError("an input index is used by two different fused indices")
        seen |= set(fused.vars)
        total = sa.mul(dims[fused.vars[0]], sa.const(fused.strides[0]))
        order = sorted(positions, key=lambda p: -splits[p].lower)
        for outer, inner in zip(order, order[1:], strict=False):
            mod = splits[inner].mod
            if mod is None or splits[outer].lower != splits[inner].lower * mod:
                raise IndexMapError("the splits of an input do not tile it")
            extents[inner] = sa.const(mod)
        if splits[order[-1]].lower != 1:
            raise IndexMapError("the splits of an input leave out its innermost positions")
        head = splits[order[0]]
        extent = sa.ceildiv(total, sa.const(head.lower))
        n = sa.as_int(extent)
        if head.mod is not None:
            if n is None or n > head.mod:
                raise IndexMapError("the outermost split of an input wraps around")
            extent = sa.const(head.mod)  # `i % 16` is an axis of 16, padded, as TVM maps it
        padded = not sa.equal(sa.mul(extent, sa.const(head.lower)), total)
        extents[order[0]] = extent
        groups.append(Group(fused, total, tuple(order), tuple(splits[p] for p in order), padded))
    unused = [v.name for v in index_map.initial_indices if v not in seen]
    if unused:
        raise IndexMapError(f"the map drops the input index {unused[0]}")
    return Layout(tuple(extents), tuple(groups))
