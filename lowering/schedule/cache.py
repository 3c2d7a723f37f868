"""Caching: cache_read and cache_write, and the copy blocks and buffer swaps
that `reindex` and `set_scope` share.

A cache stage is a copy block `<buffer>_<scope>` (axes `v0, v1, ...` under
loops `ax0, ax1, ...`) between the original buffer and a new one in the given
storage scope: cache_read copies before the readers and points them at the
copy; cache_write points the writer at the copy and copies back after it
(`cache_location.py` says where).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from tvmlite.dsl import arith, canonical, tir
from tvmlite.lowering.schedule import navigate
from tvmlite.lowering.schedule.cache_location import Location, copied_region, insert, locate
from tvmlite.lowering.schedule.regions import Interval
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    ScheduleMutator,
    Tree,
    merge_reuse,
    replace_block,
    replace_in,
)

SCOPES = ("global", "shared", "shared.dyn", "local", "warp", "global.texture", "local.fragment")


def check_scope(scope: str, primitive: str) -> None:
    if not isinstance(scope, str) or not (
        scope in SCOPES or scope.startswith(("wmma.", "m16n8k8.", "global.", "shared."))
    ):
        raise ScheduleError(f"{primitive}: unknown storage scope {scope!r}")


def nth_buffer(block: tir.Block, index: int, kind: str, primitive: str) -> tir.Buffer:
    regions = block.reads if kind == "read" else block.writes
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(regions):
        raise ScheduleError(
            f"{primitive}: block '{block.name}' has {len(regions)} {kind} buffer"
            f"{'' if len(regions) == 1 else 's'}; index {index!r} is out of range"
        )
    return regions[index].buffer


def with_scope(buffer: tir.Buffer, scope: str) -> tir.Buffer:
    name = f"{buffer.name}_{scope}"
    data = tir.Var(name, "handle", (buffer.dtype, scope))
    return dataclasses.replace(buffer, name=name, data=data, scope=scope)


Indexer = Callable[[tuple[tir.Var, ...]], tuple[tir.PrimExpr, ...]]


def copy_stage(
    name: str,
    src: tir.Buffer,
    dst: tir.Buffer,
    axes: list[tir.Range],
    loops: list[tir.Range] | None = None,
    starts: list[tir.PrimExpr] | None = None,
    src_at: Indexer | None = None,
    dst_at: Indexer | None = None,
) -> tir.Stmt:
    """`dst[v...] = src[v...]` for axes `v` over `axes`, bound to loops `ax...`
    over `loops` (default: the axes' ranges) plus `starts`; `src_at` / `dst_at`
    index a side by other expressions of the axes."""
    loops = axes if loops is None else loops
    loop_vars = [tir.Var(f"ax{i}", r.extent.dtype) for i, r in enumerate(loops)]
    iter_vars = [
        tir.IterVar(tir.Var(f"v{i}", r.extent.dtype), r, tir.SPATIAL) for i, r in enumerate(axes)
    ]
    idx = tuple(iv.var for iv in iter_vars)
    src_idx = idx if src_at is None else src_at(idx)
    dst_idx = idx if dst_at is None else dst_at(idx)
    block = tir.Block(
        name,
        tuple(iter_vars),
        (tir.BufferRegion(src, point_region(src_idx)),),
        (tir.BufferRegion(dst, point_region(dst_idx)),),
        tir.BufferStore(dst, tir.BufferLoad(src, src_idx, src.dtype), dst_idx),
    )
    values: tuple[tir.PrimExpr, ...] = tuple(loop_vars)
    if starts is not None:
        values = tuple(arith.add(lo, v) for lo, v in zip(starts, loop_vars, strict=True))
    body: tir.Stmt = tir.BlockRealize(values, tir.IntImm("bool", 1), block)
    for var, r in reversed(list(zip(loop_vars, loops, strict=True))):
        body = tir.For(var, r.min, r.extent, tir.SERIAL, body)
    return body


def _from_zero(extents: Sequence[tir.PrimExpr]) -> list[tir.Range]:
    return [tir.Range(arith.const(0, e.dtype), e) for e in extents]


def _cachecopy_stage(
    name: str,
    original: tir.Buffer,
    cache: tir.Buffer,
    region: list[Interval],
    compact: bool,
    into_cache: bool,
) -> tuple[tir.Stmt, tir.Buffer]:
    """The copy between `original` and its `cache` over `region`, into the cache
    (cache_read) or out of it (cache_write). A `compact` cache has the region's
    shape and is indexed from the region's start."""
    analyzer = canonical.Analyzer()
    extents = [analyzer.simplify(arith.add(arith.sub(r.hi, r.lo), 1)) for r in region]
    starts = [r.lo for r in region]
    if not compact:
        src, dst = (original, cache) if into_cache else (cache, original)
        axes = _from_zero(original.shape)
        return copy_stage(name, src, dst, axes, _from_zero(extents), starts), cache
    cache = dataclasses.replace(cache, shape=tuple(extents))

    def shifted(axes: tuple[tir.Var, ...]) -> tuple[tir.PrimExpr, ...]:
        return tuple(arith.add(lo, v) for lo, v in zip(starts, axes, strict=True))

    if into_cache:
        return copy_stage(name, original, cache, _from_zero(extents), src_at=shifted), cache
    return copy_stage(name, cache, original, _from_zero(extents), dst_at=shifted), cache


def point_region(indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.Range, ...]:
    return tuple(tir.Range(i, arith.const(1, i.dtype)) for i in indices)


class SwapBuffer(ScheduleMutator):
    """Replaces `old` by `new` in the given blocks (all blocks when None); with
    `start`, the accesses move to `new`'s indices (the old ones minus `start`)."""

    def __init__(
        self,
        old: tir.Buffer,
        new: tir.Buffer,
        only: list[tir.Block] | None,
        start: tuple[tir.PrimExpr, ...] | None = None,
    ) -> None:
        super().__init__()
        self.old, self.new = old, new
        self.only = None if only is None else {id(b) for b in only}
        self.active = only is None
        self.start = start
        self.analyzer = canonical.Analyzer()

    def _shift(self, indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        if self.start is None:
            return indices
        return tuple(
            self.analyzer.simplify(arith.sub(i, lo))
            for i, lo in zip(indices, self.start, strict=True)
        )

    def visit_buffer(self, buffer: tir.Buffer) -> tir.Buffer:
        return self.new if self.active and buffer is self.old else buffer

    def visit_buffer_def(self, buffer: tir.Buffer) -> tir.Buffer:
        return self.new if buffer is self.old else buffer

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        out = super().visit_BufferLoad(e)
        if e.buffer is self.old and isinstance(out, tir.BufferLoad) and out.buffer is self.new:
            return dataclasses.replace(out, indices=self._shift(out.indices))
        return out

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        out = super().visit_BufferStore(s)
        if s.buffer is self.old and isinstance(out, tir.BufferStore) and out.buffer is self.new:
            return dataclasses.replace(out, indices=self._shift(out.indices))
        return out

    def visit_buffer_region(self, region: tir.BufferRegion) -> tir.BufferRegion:
        out = super().visit_buffer_region(region)
        if region.buffer is self.old and out.buffer is self.new and self.start is not None:
            mins = self._shift(tuple(r.min for r in out.region))
            ranges = tuple(tir.Range(m, r.extent) for m, r in zip(mins, out.region, strict=True))
            return dataclasses.replace(out, region=ranges)
        return out

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        if self.only is None or id(s) not in self.only:
            return super().visit_Block(s)
        saved, self.active = self.active, True
        try:
            return super().visit_Block(s)
        finally:
            self.active = saved


def cache_read(
    tree: Tree, block: tir.Block, index: int, scope_name: str, consumers: list[tir.Block]
) -> tuple[Change, str]:
    buffer = nth_buffer(block, index, "read", "cache_read")
    scope, deps, cache = _cache_of(tree, block, buffer, scope_name, "cache_read")
    writers = deps.writers.get(buffer, [])
    if len(writers) > 1:
        raise ScheduleError(f"cache_read: more than one block writes '{buffer.name}'")
    readers = consumers or [b for b in deps.children if any(r.buffer is buffer for r in b.reads)]
    if writers:
        # Like TVM, every consumer of the writer counts, whatever buffer it reads.
        return _cached(
            tree,
            scope,
            writers[0],
            buffer,
            cache,
            consumers or deps.consumers(writers[0]),
            readers,
            True,
        )
    region = [Interval(arith.const(0, e.dtype), arith.sub(e, 1)) for e in buffer.shape]
    where = locate(tree, scope, None, [])
    return _cached_at(tree, scope, where, region, buffer, cache, readers, True)


def cache_write(
    tree: Tree, block: tir.Block, index: int, scope_name: str, consumers: list[tir.Block]
) -> tuple[Change, str]:
    buffer = nth_buffer(block, index, "write", "cache_write")
    scope, deps, cache = _cache_of(tree, block, buffer, scope_name, "cache_write")
    if len(deps.writers.get(buffer, [])) != 1:
        raise ScheduleError(
            f"cache_write: block '{block.name}' must be the only writer of '{buffer.name}'"
        )
    related = [b for b in deps.consumers(block) if not any(b is c for c in consumers)]
    return _cached(tree, scope, block, buffer, cache, related, [block, *consumers], False)


def _cache_of(
    tree: Tree, block: tir.Block, buffer: tir.Buffer, scope_name: str, primitive: str
) -> tuple[tir.Block, navigate.Scope, tir.Buffer]:
    check_scope(scope_name, primitive)
    scope = tree.scope_of(block)
    return scope, navigate.Scope(tree, scope), with_scope(buffer, scope_name)


def _cached(
    tree: Tree,
    scope: tir.Block,
    writer: tir.Block,
    buffer: tir.Buffer,
    cache: tir.Buffer,
    related: list[tir.Block],
    users: list[tir.Block],
    into_cache: bool,
) -> tuple[Change, str]:
    """The stage placed between the buffer's `writer` and the `related` blocks,
    copying what the writer produces there; `users` switch to the cache."""
    where = locate(tree, scope, writer, related)
    written = next(r for r in writer.writes if r.buffer is buffer)
    region = copied_region(tree, writer, written, where.node)
    return _cached_at(tree, scope, where, region, buffer, cache, users, into_cache)


def _cached_at(
    tree: Tree,
    scope: tir.Block,
    where: Location,
    region: list[Interval],
    buffer: tir.Buffer,
    cache: tir.Buffer,
    users: list[tir.Block],
    into_cache: bool,
) -> tuple[Change, str]:
    compact = where.node is scope
    stage, cache = _cachecopy_stage(cache.name, buffer, cache, region, compact, into_cache)
    start = tuple(r.lo for r in region) if compact else None
    swap = SwapBuffer(buffer, cache, users, start)
    return _install(tree, scope, where, stage, cache, swap), cache.name


def _install(
    tree: Tree,
    scope: tir.Block,
    where: Location,
    stage: tir.Stmt,
    cache: tir.Buffer,
    swap: SwapBuffer,
) -> Change:
    """Put `stage` in place, point the blocks at the cache and allocate it."""
    body, reuse = scope.body, {}
    if isinstance(where.node, tir.For):
        loop = dataclasses.replace(where.node, body=insert(where.node.body, where.position, stage))
        body, reuse = replace_in(body, {id(where.node): loop})
    else:
        body = insert(body, where.position, stage)
    body = swap.visit_stmt(body)
    new_scope = dataclasses.replace(scope, body=body, alloc_buffers=(*scope.alloc_buffers, cache))
    return replace_block(tree, scope, new_scope, merge_reuse(reuse, swap.reuse))
