"""Layout: transform_layout (a buffer's indices) and transform_block_layout
(a block's iteration space), both through an index map.

`transform_layout` gives an intermediate buffer a new shape, the index map's
image of the old one, and rewrites every access `B[i]` to `B[map(i)]`.
`transform_block_layout` renames a block's axes by a permutation, rebuilding
the loop nest (`ax0`, `ax1`, ...) over the permuted domain.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tvmlite.dsl import arith, canonical, iter_map, tir
from tvmlite.dsl.iter_map import Extent
from tvmlite.dsl.regions import infer_regions
from tvmlite.lowering.schedule.affine_map import analyse, inverse
from tvmlite.lowering.schedule.cache import nth_buffer
from tvmlite.lowering.schedule.index_map import IndexMap
from tvmlite.lowering.schedule.regions import condition_bounds
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    ScheduleMutator,
    Tree,
    finish,
    realizes_under,
    replace_block,
)


def _buffer_spec(block: tir.Block, spec: Any, primitive: str) -> tir.Buffer:
    if isinstance(spec, str):
        for region in (*block.reads, *block.writes):
            if region.buffer.name == spec:
                return region.buffer
        raise ScheduleError(f"{primitive}: block '{block.name}' does not access buffer '{spec}'")
    if (
        isinstance(spec, (tuple, list))
        and len(spec) == 2
        and spec[0] in ("read", "write")
        and isinstance(spec[1], int)
    ):
        return nth_buffer(block, spec[1], spec[0], primitive)
    raise ScheduleError(
        f"{primitive}: buffer must be a name or ('read' | 'write', index), got {spec!r}"
    )


class _Remap(ScheduleMutator):
    """Rewrites every access of `old` to `new` at mapped indices."""

    def __init__(self, old: tir.Buffer, new: tir.Buffer, index_map: IndexMap) -> None:
        super().__init__()
        self.old, self.new, self.index_map = old, new, index_map
        self.analyzer = canonical.Analyzer()
        self.iters: dict[tir.Var, tuple[int, int]] = {}

    def indices(self, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        """The mapped indices, simplified, then in iteration-map normal form over the
        loops and axes around them when they are affine in those (TVM's rewrite)."""
        mapped = tuple(canonical.Analyzer().simplify(e) for e in self.index_map.map(indices))
        return iter_map.simplify_bindings(mapped, self.iters)

    def _within(self, ranges: dict[tir.Var, tuple[int, int]], visit: Callable[[], Any]) -> Any:
        saved = dict(self.iters)
        self.iters.update(ranges)
        try:
            return visit()
        finally:
            self.iters = saved

    def visit_For(self, s: tir.For) -> tir.Stmt:
        return self._within(
            _known({s.loop_var: tir.Range(s.min, s.extent)}),
            lambda: super(_Remap, self).visit_For(s),
        )

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        ranges = _known({iv.var: iv.dom for iv in s.iter_vars})
        block = self._within(ranges, lambda: super(_Remap, self).visit_Block(s))
        assert isinstance(block, tir.Block)
        if block is s:
            return block
        # Regions of the new buffer are inferred again from the rewritten body.
        reads, writes = infer_regions(
            block.body, block.init, block.alloc_buffers, block.match_buffers
        )
        new_block = dataclasses.replace(
            block,
            reads=_with_inferred(block.reads, reads, self.new),
            writes=_with_inferred(block.writes, writes, self.new),
        )
        self.reuse[id(s)] = new_block
        return new_block

    def visit_Call(self, e: tir.Call) -> tir.PrimExpr:
        if e.op != "if_then_else" or len(e.args) != 3:
            return super().visit_Call(e)
        # The true branch sees the loops and axes narrowed by the condition.
        cond, then, other = e.args
        narrowed, _ = condition_bounds(cond, self.iters)
        then = self._within(narrowed, lambda: self.visit_expr(then))
        return dataclasses.replace(e, args=(self.visit_expr(cond), then, self.visit_expr(other)))

    def visit_buffer_def(self, buffer: tir.Buffer) -> tir.Buffer:
        return self.new if buffer is self.old else buffer

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        e = super().visit_BufferLoad(e)
        if e.buffer is self.old:
            return tir.BufferLoad(self.new, self.indices(e.indices), e.dtype)
        return e

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        s = super().visit_BufferStore(s)
        if s.buffer is self.old:
            return tir.BufferStore(self.new, s.value, self.indices(s.indices))
        return s

    def visit_buffer_region(self, region: tir.BufferRegion) -> tir.BufferRegion:
        region = super().visit_buffer_region(region)
        if region.buffer is not self.old:
            return region
        if all(arith.as_int(r.extent) == 1 for r in region.region):
            points = self.indices(tuple(r.min for r in region.region))
            return tir.BufferRegion(
                self.new, tuple(tir.Range(p, arith.const(1, p.dtype)) for p in points)
            )
        dom = dict(zip(self.index_map.initial_indices, region.region, strict=True))
        ranges = []
        for axis, e in enumerate(self.index_map.final_indices):
            bound = arith.bounds(e, dom)
            if bound is None:
                shape = self.new.shape[axis]
                ranges.append(tir.Range(arith.const(0, shape.dtype), shape))
                continue
            lo = self.analyzer.simplify(bound[0])
            extent = self.analyzer.simplify(arith.add(arith.sub(bound[1], bound[0]), 1))
            ranges.append(tir.Range(lo, extent))
        return tir.BufferRegion(self.new, tuple(ranges))


def _known(ranges: dict[tir.Var, tir.Range]) -> dict[tir.Var, tuple[int, int]]:
    out = {}
    for v, r in ranges.items():
        lo, extent = arith.as_int(r.min), arith.as_int(r.extent)
        if lo is not None and extent is not None:
            out[v] = (lo, extent)
    return out


def _with_inferred(
    regions: tuple[tir.BufferRegion, ...],
    inferred: tuple[tir.BufferRegion, ...],
    buffer: tir.Buffer,
) -> tuple[tir.BufferRegion, ...]:
    found = next((r for r in inferred if r.buffer is buffer), None)
    if found is None:
        return regions
    return tuple(found if r.buffer is buffer else r for r in regions)


def transform_layout(
    tree: Tree, block: tir.Block, buffer_spec: Any, index_map: Any, pad_value: Any
) -> tuple[Change, IndexMap]:
    buffer = _buffer_spec(block, buffer_spec, "transform_layout")
    imap = IndexMap.from_func(index_map, buffer.shape[0].dtype)
    what = f"transform_layout of buffer '{buffer.name}'"
    if len(imap.initial_indices) != len(buffer.shape):
        raise ScheduleError(
            f"{what}: the index map takes {len(imap.initial_indices)} indices but "
            f"buffer '{buffer.name}' has {len(buffer.shape)} dimensions"
        )
    if pad_value is not None:
        raise ScheduleError(f"{what}: pad_value is not supported")
    affine = analyse(imap, buffer.shape, what, bijective=False)
    # The allocating block, or the root block for a parameter (whose signature changes).
    site = tree.root
    node: tir.Block | tir.For | None = block
    while node is not None:
        if isinstance(node, tir.Block) and any(b is buffer for b in node.alloc_buffers):
            site = node
            break
        node = tree.parent_of(node)
    if site is None:
        raise ScheduleError(f"{what}: the function has no root block")
    dtype = buffer.shape[0].dtype
    shape = tuple(_extent_expr(e, dtype) for e in affine.extents)
    new_buffer = dataclasses.replace(buffer, shape=shape, strides=())
    remap = _Remap(buffer, new_buffer, imap)
    new_site = remap.visit_stmt(site)
    assert isinstance(new_site, tir.Block)
    change = replace_block(tree, site, new_site, remap.reuse)
    if site is tree.root:
        buffer_map = tuple((v, new_buffer if b is buffer else b) for v, b in change.func.buffer_map)
        change.func = dataclasses.replace(change.func, buffer_map=buffer_map)
    return change, imap


def _extent_expr(extent: Extent, dtype: str) -> tir.PrimExpr:
    return extent if isinstance(extent, tir.PrimExpr) else arith.const(extent, dtype)


def transform_block_layout(tree: Tree, block: tir.Block, index_map: Any) -> tuple[Change, IndexMap]:
    """Give `block` the iteration space of the index map's image: new loops
    `ax0, ax1, ...` bound one to one to new axes `v0, v1, ...`, the old axes
    rewritten through the map's inverse."""
    realize = tree.realize_of[id(block)]
    loops = tree.loops_above(block)
    imap = IndexMap.from_func(index_map, _iter_dtype(block))
    what = f"transform_block_layout of block '{block.name}'"
    n = len(block.iter_vars)
    if len(imap.initial_indices) != n:
        raise ScheduleError(
            f"{what}: the index map takes {len(imap.initial_indices)} indices but the block "
            f"has {n} axes"
        )
    under = realizes_under(loops[0]) if loops else []
    if len(under) != 1 or under[0] is not realize:
        raise ScheduleError(f"{what}: the block must be alone under its loops")
    trivial = len(loops) == n and all(
        value is lp.loop_var and arith.as_int(lp.min) == 0
        for value, lp in zip(realize.iter_values, loops, strict=True)
    )
    if not trivial or arith.as_bool(realize.predicate) is not True:
        raise ScheduleError(
            f"{what}: the block's bindings must be the loops above it, in order, each "
            "starting at 0, with no predicate"
        )
    domain = [iv.dom.extent for iv in block.iter_vars]
    affine = analyse(imap, domain, what, bijective=True)
    kind_of = {
        iv_map: iv.kind for iv_map, iv in zip(imap.initial_indices, block.iter_vars, strict=True)
    }
    new_iters = []
    for k, extent in enumerate(affine.extents):
        kinds = {kind_of[v] for v in affine.leaves(k)}
        if len(kinds) != 1:
            raise ScheduleError(
                f"{what}: output {k} of the index map mixes axes of different kinds "
                f"({', '.join(sorted(kinds))})"
            )
        var = tir.Var(f"v{k}", block.iter_vars[0].var.dtype)
        dom = tir.Range(arith.const(0, var.dtype), _extent_expr(extent, var.dtype))
        new_iters.append(tir.IterVar(var, dom, kinds.pop()))
    old_of = dict(zip(imap.initial_indices, block.iter_vars, strict=True))
    m = _AccessSimplifier({iv.var: (0, e) for iv, e in zip(new_iters, affine.extents, strict=True)})
    for index, value in inverse(affine, [iv.var for iv in new_iters]).items():
        m.var_remap[old_of[index].var] = value
    new_block = dataclasses.replace(
        block,
        iter_vars=tuple(new_iters),
        reads=tuple(m.visit_buffer_region(r) for r in block.reads),
        writes=tuple(m.visit_buffer_region(r) for r in block.writes),
        body=m.visit_stmt(block.body),
        init=None if block.init is None else m.visit_stmt(block.init),
    )
    new_loops = [tir.Var(f"ax{k}", iv.var.dtype) for k, iv in enumerate(new_iters)]
    body: tir.Stmt = tir.BlockRealize(tuple(new_loops), realize.predicate, new_block)
    for var, iv in reversed(list(zip(new_loops, new_iters, strict=True))):
        body = tir.For(var, iv.dom.min, iv.dom.extent, tir.SERIAL, body)
    change = finish(tree, {id(loops[0]): body})
    change.reuse[id(block)] = new_block
    return change, imap


class _AccessSimplifier(ScheduleMutator):
    """Substitutes, then writes buffer indices and region starts in iteration-map
    normal form over the block's new axes (what TVM does to a re-laid-out block)."""

    def __init__(self, iters: dict[tir.Var, tuple[int, int]]) -> None:
        super().__init__()
        self.iters = iters
        self.analyzer = canonical.Analyzer()

    def _indices(self, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        return iter_map.simplify_bindings(indices, self.iters)

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        e = super().visit_BufferLoad(e)
        assert isinstance(e, tir.BufferLoad)
        return dataclasses.replace(e, indices=self._indices(e.indices))

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        s = super().visit_BufferStore(s)
        assert isinstance(s, tir.BufferStore)
        return dataclasses.replace(s, indices=self._indices(s.indices))

    def visit_buffer_region(self, region: tir.BufferRegion) -> tir.BufferRegion:
        region = super().visit_buffer_region(region)
        mins = self._indices(tuple(r.min for r in region.region))
        ranges = tuple(
            tir.Range(lo, self.analyzer.simplify(r.extent))
            for lo, r in zip(mins, region.region, strict=True)
        )
        return dataclasses.replace(region, region=ranges)


def _iter_dtype(block: tir.Block) -> str:
    return block.iter_vars[0].var.dtype if block.iter_vars else "int64"
