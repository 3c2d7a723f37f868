"""Layout: transform_layout (a buffer's indices) and transform_block_layout
(a block's iteration space), both through an index map.

`transform_layout` gives an intermediate buffer a new shape, the index map's
image of the old one, and rewrites every access `B[i]` to `B[map(i)]`.
`transform_block_layout` renames a block's axes by a permutation, rebuilding
the loop nest (`ax0`, `ax1`, ...) over the permuted domain.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl.analysis import uses
from tvmlite.lowering.schedule.cache import nth_buffer
from tvmlite.lowering.schedule.index_map import IndexMap
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

    def indices(self, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        return tuple(self.analyzer.simplify(e) for e in self.index_map.map(indices))

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


def transform_layout(
    tree: Tree, block: tir.Block, buffer_spec: Any, index_map: Any, pad_value: Any
) -> tuple[Change, IndexMap]:
    buffer = _buffer_spec(block, buffer_spec, "transform_layout")
    imap = IndexMap.from_func(index_map, buffer.shape[0].dtype)
    if len(imap.initial_indices) != len(buffer.shape):
        raise ScheduleError(
            f"transform_layout: the index map takes {len(imap.initial_indices)} indices but "
            f"buffer '{buffer.name}' has {len(buffer.shape)} dimensions"
        )
    site = None
    node: tir.Block | tir.For | None = block
    while node is not None:
        if isinstance(node, tir.Block) and any(b is buffer for b in node.alloc_buffers):
            site = node
            break
        node = tree.parent_of(node)
    if site is None:
        raise ScheduleError(
            f"transform_layout: buffer '{buffer.name}' is a function parameter; only buffers "
            "allocated inside the function can change layout"
        )
    dom = {
        v: tir.Range(arith.const(0, v.dtype), s)
        for v, s in zip(imap.initial_indices, buffer.shape, strict=True)
    }
    analyzer = canonical.Analyzer()
    shape = []
    for e in imap.final_indices:
        bound = arith.bounds(e, dom)
        if bound is None or arith.as_int(analyzer.simplify(bound[0])) != 0:
            raise ScheduleError(
                "transform_layout: the index map's image does not start at 0 on every axis"
            )
        shape.append(analyzer.simplify(arith.add(bound[1], 1)))
    if pad_value is not None:
        raise ScheduleError("transform_layout: pad_value is not supported")
    new_buffer = dataclasses.replace(buffer, shape=tuple(shape), strides=())
    remap = _Remap(buffer, new_buffer, imap)
    new_site = remap.visit_stmt(site)
    assert isinstance(new_site, tir.Block)
    return replace_block(tree, site, new_site, remap.reuse), imap


def transform_block_layout(tree: Tree, block: tir.Block, index_map: Any) -> tuple[Change, IndexMap]:
    realize = tree.realize_of[id(block)]
    loops = tree.loops_above(block)
    imap = IndexMap.from_func(index_map, _iter_dtype(block))
    n = len(block.iter_vars)
    if len(imap.initial_indices) != n:
        raise ScheduleError(
            f"transform_block_layout: the index map takes {len(imap.initial_indices)} indices "
            f"but block '{block.name}' has {n} axes"
        )
    # Only permutations of the axes: each output is one input index, each used once.
    order = []
    for e in imap.final_indices:
        if not isinstance(e, tir.Var) or e not in imap.initial_indices or e in order:
            raise ScheduleError(
                "transform_block_layout: only permutations of the block axes are supported"
            )
        order.append(e)
    if len(order) != n:
        raise ScheduleError("transform_block_layout: the index map must keep every block axis")
    loop_vars = {lp.loop_var: lp for lp in loops}
    under = realizes_under(loops[0]) if loops else []
    if len(under) != 1 or under[0] is not realize:
        raise ScheduleError(
            f"transform_block_layout: block '{block.name}' must be alone under its loops"
        )
    for lp in loops:
        if arith.as_int(lp.min) != 0:
            raise ScheduleError("transform_block_layout: loops must start at 0")
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        if not (isinstance(value, tir.Var) and value in loop_vars):
            raise ScheduleError(
                f"transform_block_layout: axis '{iv.var.name}' of block '{block.name}' must be "
                "bound to a loop variable"
            )
        if iv.kind != tir.SPATIAL:
            raise ScheduleError("transform_block_layout: only spatial blocks are supported")
    position = {v: i for i, v in enumerate(imap.initial_indices)}
    new_iters = []
    mapping: dict[tir.Var, tir.PrimExpr] = {}
    for i, e in enumerate(order):
        old = block.iter_vars[position[e]]
        var = tir.Var(f"v{i}", old.var.dtype)
        new_iters.append(dataclasses.replace(old, var=var))
        mapping[old.var] = var
    m = ScheduleMutator()
    m.var_remap.update(mapping)
    new_block = dataclasses.replace(
        block,
        iter_vars=tuple(new_iters),
        reads=tuple(m.visit_buffer_region(r) for r in block.reads),
        writes=tuple(m.visit_buffer_region(r) for r in block.writes),
        body=m.visit_stmt(block.body),
        init=None if block.init is None else m.visit_stmt(block.init),
    )
    new_loops = [tir.Var(f"ax{i}", iv.var.dtype) for i, iv in enumerate(new_iters)]
    body: tir.Stmt = tir.BlockRealize(tuple(new_loops), realize.predicate, new_block)
    if uses(realize.predicate, loop_vars):
        raise ScheduleError("transform_block_layout: the block must not have a predicate")
    for var, iv in reversed(list(zip(new_loops, new_iters, strict=True))):
        body = tir.For(var, iv.dom.min, iv.dom.extent, tir.SERIAL, body)
    change = finish(tree, {id(loops[0]): body})
    change.reuse[id(block)] = new_block
    return change, imap


def _iter_dtype(block: tir.Block) -> str:
    return block.iter_vars[0].var.dtype if block.iter_vars else "int64"
