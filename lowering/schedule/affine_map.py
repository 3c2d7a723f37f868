"""What an index map does to a box of indices, as TVM's layout primitives see it.

`transform_layout` and `transform_block_layout` accept an index map only when
it is an *affine* map of the indices in TVM's iteration-map sense: every output
is one split `(mark // lower) % extent` of a mark (an index, or a dense fusion
`i * 6 + j` of indices), no two outputs share a digit of the same mark, and each
split divides its mark evenly. Then the outputs run independently over
`[0, extent)` and the image is a whole box, so the new buffer has no padding
(TVM asks for a `pad_value` otherwise, which tvmlite does not support) and no
holes (`i * 2`). `transform_block_layout` further needs the map to be
bijective: every digit of every index used exactly once, which gives the
inverse that rewrites the block's body. A symbolic extent (a buffer of `n`
rows) is an index like another; only the top part of an index (`i // 4` of
`n` rows, when 4 provably divides `n`) can have a symbolic extent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tvmlite.dsl import arith, canonical, iter_map, tir
from tvmlite.dsl.iter_map import Extent, as_extent, extent_equal, extent_mul
from tvmlite.lowering.schedule.index_map import IndexMap
from tvmlite.lowering.schedule.state import ScheduleError


@dataclass
class AffineMap:
    """An index map over a box, read as one split per output."""

    index_map: IndexMap
    sums: list[iter_map.IterSum]
    extents: tuple[Extent, ...]  # of each output

    def leaves(self, output: int) -> list[tir.Var]:
        """The indices an output is computed from."""
        return [v for split in self.sums[output].args for v in split.mark.leaves()]


def analyse(
    index_map: IndexMap, domain: Sequence[tir.PrimExpr], what: str, bijective: bool
) -> AffineMap:
    """`index_map` over indices running in `[0, domain[k])`, checked as above;
    `what` starts the error messages (the primitive and the buffer or block)."""
    text = index_map.as_lambda()
    iters = {v: (0, as_extent(d)) for v, d in zip(index_map.initial_indices, domain, strict=True)}
    sums = iter_map.detect(index_map.final_indices, iters)
    if sums is None:
        raise ScheduleError(
            f"{what}: the index map {text} is not an affine map whose outputs split the "
            "indices evenly (it would need padding or is not a sum of index splits)"
        )
    extents = []
    for k, s in enumerate(sums):
        if arith.as_int(s.base) != 0 or (s.args and s.args[0].scale != 1):
            raise ScheduleError(
                f"{what}: output {k} of the index map {text} does not run densely from 0"
            )
        extents.append(s.args[0].extent if s.args else 1)
    _check_independent(sums, what, text)
    if bijective:
        _check_bijective(index_map, sums, what, text)
    return AffineMap(index_map, sums, tuple(extents))


def _pieces(sums: list[iter_map.IterSum]) -> dict[int, tuple[iter_map.Mark, list[iter_map.Split]]]:
    """The splits the outputs take of each mark (by mark identity)."""
    out: dict[int, tuple[iter_map.Mark, list[iter_map.Split]]] = {}
    for s in sums:
        for split in s.args:
            out.setdefault(id(split.mark), (split.mark, []))[1].append(split)
    return out


def _check_independent(sums: list[iter_map.IterSum], what: str, text: str) -> None:
    owner: dict[tir.Var, int] = {}
    for key, (mark, splits) in _pieces(sums).items():
        for a in splits:
            for b in splits:
                if a is not b and _overlap(a, b):
                    raise ScheduleError(
                        f"{what}: the outputs of the index map {text} are not independent "
                        "(two of them use the same part of an index)"
                    )
        for var in mark.leaves():
            if owner.setdefault(var, key) != key:
                raise ScheduleError(
                    f"{what}: the outputs of the index map {text} are not independent "
                    f"(index '{var.name}' appears in two of them)"
                )


def _overlap(a: iter_map.Split, b: iter_map.Split) -> bool:
    """Whether two splits of one mark share a digit. A symbolic extent is the
    top part of its mark: it reaches above every constant part."""
    top_a, top_b = extent_mul(a.lower, a.extent), extent_mul(b.lower, b.extent)
    if isinstance(top_a, int) and isinstance(top_b, int):
        return max(a.lower, b.lower) < min(top_a, top_b)
    if not isinstance(top_a, int) and not isinstance(top_b, int):
        return True
    high, low_top = (a, top_b) if not isinstance(top_a, int) else (b, top_a)
    assert isinstance(low_top, int)
    return high.lower < low_top


def _check_bijective(
    index_map: IndexMap, sums: list[iter_map.IterSum], what: str, text: str
) -> None:
    fail = ScheduleError(f"{what}: the index map {text} is not bijective affine")
    reached: set[tir.Var] = set()
    for mark, splits in _pieces(sums).values():
        covered: Extent = 1
        for split in sorted(splits, key=lambda s: s.lower):
            if split.lower != covered:
                raise fail
            covered = extent_mul(covered, split.extent)
        if not extent_equal(covered, mark.extent):
            raise fail
        reached.update(mark.leaves())
    if any(not s.args for s in sums):
        raise fail
    if any(v not in reached for v in index_map.initial_indices):
        raise fail


def inverse(affine: AffineMap, outputs: Sequence[tir.Var]) -> dict[tir.Var, tir.PrimExpr]:
    """Each index of a bijective map as an expression of the output variables,
    written as TVM writes the inverse: a mark is the sum of its digits by
    descending weight, a part of a fused mark its top (`m // 6`), bottom
    (`m % 6`) or middle (`m % 24 // 6`), simplified under the outputs' ranges."""
    digits: dict[int, list[tuple[int, tir.PrimExpr]]] = {}
    marks: list[iter_map.Mark] = []

    def give(mark: iter_map.Mark, lower: int, value: tir.PrimExpr) -> None:
        if id(mark) not in digits:
            digits[id(mark)] = []
            marks.append(mark)
        digits[id(mark)].append((lower, value))

    for s, var in zip(affine.sums, outputs, strict=True):
        for split in s.args:
            give(split.mark, split.lower, var)
    analyzer = canonical.Analyzer()
    for var, extent in zip(outputs, affine.extents, strict=True):
        analyzer.bind(var, 0, extent)
    out: dict[tir.Var, tir.PrimExpr] = {}
    for mark in marks:  # grows while fused marks hand digits to their parts
        value: tir.PrimExpr | None = None
        for lower, digit in sorted(digits[id(mark)], key=lambda d: -d[0]):
            term = arith.mul(digit, lower)
            value = term if value is None else arith.add(value, term)
        assert value is not None
        if isinstance(mark.source, tir.Var):
            out[mark.source] = analyzer.simplify(value)
            continue
        for part in mark.source.args:
            give(part.mark, part.lower, _part(value, part, mark.extent))
    return out


def _part(value: tir.PrimExpr, part: iter_map.Split, whole: Extent) -> tir.PrimExpr:
    """The digit of a fused mark that `part` (weight `part.scale`) stands for."""
    top = extent_mul(part.scale, part.extent)
    if extent_equal(top, whole):
        return arith.floordiv(value, part.scale)
    if part.scale == 1:
        return arith.floormod(value, part.extent)
    return arith.floordiv(arith.floormod(value, top), part.scale)
