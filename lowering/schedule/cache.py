"""Caching and storage: cache_read, cache_write, reindex, set_scope,
storage_align.

A cache stage is a copy block `<buffer>_<scope>` (axes `v0, v1, ...` under
loops `ax0, ax1, ...`) between the original buffer and a new one in the given
storage scope: cache_read copies before the readers and points them at the
copy; cache_write points the writer at the copy and copies back after it.
`reindex` does the same with a buffer indexed by the block's own axes.
`set_scope` and `storage_align` change how an intermediate buffer is stored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl.analysis import substitute, uses
from tvmlite.lowering.schedule import navigate
from tvmlite.lowering.schedule.cache_location import Location, copied_region, insert, locate
from tvmlite.lowering.schedule.inline import recompute_regions
from tvmlite.lowering.schedule.regions import Interval
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    Node,
    ScheduleMutator,
    Tree,
    all_realizes,
    merge_reuse,
    replace_block,
    replace_in,
    stmt_of,
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


def _stage(
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
        (tir.BufferRegion(src, _point(src_idx)),),
        (tir.BufferRegion(dst, _point(dst_idx)),),
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


def _cache_stage(
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
        return _stage(name, src, dst, axes, _from_zero(extents), starts), cache
    cache = dataclasses.replace(cache, shape=tuple(extents))

    def shifted(axes: tuple[tir.Var, ...]) -> tuple[tir.PrimExpr, ...]:
        return tuple(arith.add(lo, v) for lo, v in zip(starts, axes, strict=True))

    if into_cache:
        return _stage(name, original, cache, _from_zero(extents), src_at=shifted), cache
    return _stage(name, cache, original, _from_zero(extents), dst_at=shifted), cache


def _point(indices: tuple[tir.PrimExpr, ...]) -> tuple[tir.Range, ...]:
    return tuple(tir.Range(i, arith.const(1, i.dtype)) for i in indices)


class _SwapBuffer(ScheduleMutator):
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


def _position(scope_body: tir.Stmt, blocks: list[tir.Block], before: bool) -> int:
    """Index in the scope's top sequence of the first (last) subtree holding one of
    `blocks`: a stage goes before the first reader or after the last writer."""
    items = list(scope_body.seq) if isinstance(scope_body, tir.SeqStmt) else [scope_body]
    ids = {id(b) for b in blocks}
    hits = [i for i, s in enumerate(items) if any(id(r.block) in ids for r in all_realizes(s))]
    if not hits:
        return 0 if before else len(items)
    return hits[0] if before else hits[-1] + 1


def cache_read(
    tree: Tree, block: tir.Block, index: int, scope_name: str, consumers: list[tir.Block]
) -> tuple[Change, str]:
    buffer = nth_buffer(block, index, "read", "cache_read")
    check_scope(scope_name, "cache_read")
    scope = tree.scope_of(block)
    deps = navigate.Scope(tree, scope)
    writers = deps.writers.get(buffer, [])
    if len(writers) > 1:
        raise ScheduleError(f"cache_read: more than one block writes '{buffer.name}'")
    readers = consumers or [b for b in deps.children if any(r.buffer is buffer for r in b.reads)]
    cache = with_scope(buffer, scope_name)
    name = f"{buffer.name}_{scope_name}"
    if writers:
        writer = writers[0]
        # Like TVM, every consumer of the writer counts, whatever buffer it reads.
        related = consumers or deps.consumers(writer)
        where = locate(tree, scope, writer, related)
        written = next(r for r in writer.writes if r.buffer is buffer)
        region = copied_region(tree, writer, written, where.node)
    else:
        where = locate(tree, scope, None, [])
        region = [Interval(arith.const(0, e.dtype), arith.sub(e, 1)) for e in buffer.shape]
    compact = where.node is scope
    stage, cache = _cache_stage(name, buffer, cache, region, compact, into_cache=True)
    start = tuple(r.lo for r in region) if compact else None
    swap = _SwapBuffer(buffer, cache, readers, start)
    return _install(tree, scope, where, stage, cache, swap), name


def cache_write(
    tree: Tree, block: tir.Block, index: int, scope_name: str, consumers: list[tir.Block]
) -> tuple[Change, str]:
    buffer = nth_buffer(block, index, "write", "cache_write")
    check_scope(scope_name, "cache_write")
    scope = tree.scope_of(block)
    deps = navigate.Scope(tree, scope)
    if len(deps.writers.get(buffer, [])) != 1:
        raise ScheduleError(
            f"cache_write: block '{block.name}' must be the only writer of '{buffer.name}'"
        )
    cache = with_scope(buffer, scope_name)
    name = f"{buffer.name}_{scope_name}"
    related = [b for b in deps.consumers(block) if not any(b is c for c in consumers)]
    where = locate(tree, scope, block, related)
    written = next(r for r in block.writes if r.buffer is buffer)
    region = copied_region(tree, block, written, where.node)
    compact = where.node is scope
    stage, cache = _cache_stage(name, buffer, cache, region, compact, into_cache=False)
    start = tuple(r.lo for r in region) if compact else None
    swap = _SwapBuffer(buffer, cache, [block, *consumers], start)
    return _install(tree, scope, where, stage, cache, swap), name


def _install(
    tree: Tree,
    scope: tir.Block,
    where: Location,
    stage: tir.Stmt,
    cache: tir.Buffer,
    swap: _SwapBuffer,
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


def _check_reindex_order(tree: Tree, block: tir.Block, buffer: tir.Buffer, kind: str) -> None:
    """The copy runs before (read) or after (write) the loop nest holding the block:
    no other access to the buffer may be in that nest, nor in the block itself on
    the other side."""
    if any(r.buffer is buffer for r in (block.writes if kind == "read" else block.reads)):
        raise ScheduleError(f"reindex: block '{block.name}' both reads and writes '{buffer.name}'")
    top: Node = block
    scope = tree.scope_of(block)
    while tree.parent_of(top) is not scope:
        top = tree.parent_of(top)  # type: ignore[assignment]
    for r in all_realizes(stmt_of(tree, top)):
        other = r.block
        regions = other.writes if kind == "read" else other.reads
        if other is not block and any(x.buffer is buffer for x in regions):
            raise ScheduleError(
                f"reindex: block '{other.name}' {'writes' if kind == 'read' else 'reads'} "
                f"'{buffer.name}' in the loop nest of block '{block.name}'"
            )


def reindex(tree: Tree, block: tir.Block, buffer_spec: object) -> tuple[Change, str]:
    if not (
        isinstance(buffer_spec, (tuple, list))
        and len(buffer_spec) == 2
        and buffer_spec[0] in ("read", "write")
    ):
        raise ScheduleError(
            f"reindex: buffer must be ('read' | 'write', index), got {buffer_spec!r}"
        )
    kind, index = buffer_spec
    buffer = nth_buffer(block, index, kind, "reindex")
    if len(tree.child_blocks(block)) > 0:
        raise ScheduleError(f"reindex: block '{block.name}' is not a leaf block")
    regions = [r for r in (block.reads if kind == "read" else block.writes) if r.buffer is buffer]
    _check_reindex_order(tree, block, buffer, kind)
    used: list[tir.IterVar] = []
    for r in regions[0].region:
        if arith.as_int(r.extent) != 1:
            raise ScheduleError(
                f"reindex: block '{block.name}' accesses '{buffer.name}' by a range"
            )
        for iv in block.iter_vars:
            if uses(r.min, {iv.var: None}) and all(u is not iv for u in used):
                used.append(iv)
    used.sort(key=lambda iv: block.iter_vars.index(iv))
    analyzer = canonical.Analyzer()
    shape = tuple(analyzer.simplify(arith.add(iv.dom.min, iv.dom.extent)) for iv in used)
    name = f"{buffer.name}_reindex"
    data = tir.Var(name, "handle", (buffer.dtype, buffer.scope))
    new_buffer = dataclasses.replace(buffer, name=name, data=data, shape=shape, strides=())
    idx = tuple(iv.var for iv in used)
    scope = tree.scope_of(block)

    class _Rewrite(ScheduleMutator):
        def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
            e = super().visit_BufferLoad(e)
            if e.buffer is buffer:
                return tir.BufferLoad(new_buffer, idx, e.dtype)
            return e

        def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
            s = super().visit_BufferStore(s)
            if s.buffer is buffer:
                return tir.BufferStore(new_buffer, s.value, idx)
            return s

    new_block = recompute_regions(
        dataclasses.replace(
            block,
            body=_Rewrite().visit_stmt(block.body),
            init=None if block.init is None else _Rewrite().visit_stmt(block.init),
        )
    )

    # The copy indexes the original buffer as the block did, by the copy's axes;
    # it is named after the buffer it writes (TVM's naming).
    for iv in block.iter_vars:
        analyzer.bind_range(iv.var, iv.dom)
    indices = [analyzer.simplify(r.min) for r in regions[0].region]

    def original(axes: tuple[tir.Var, ...]) -> tuple[tir.PrimExpr, ...]:
        mapping = {iv.var: v for iv, v in zip(used, axes, strict=True)}
        return tuple(substitute(i, mapping) for i in indices)

    axes = [iv.dom for iv in used]
    if kind == "write":
        stage_name = name
        stage = _stage(stage_name, new_buffer, buffer, axes, dst_at=original)
    else:
        stage_name = f"{name}_reindex"
        stage = _stage(stage_name, buffer, new_buffer, axes, src_at=original)
    realize = tree.realize_of[id(block)]
    body, reuse = replace_in(
        scope.body, {id(realize): dataclasses.replace(realize, block=new_block)}
    )
    reuse[id(block)] = new_block
    position = _position(body, [new_block], before=kind == "read")
    new_scope = dataclasses.replace(
        scope,
        body=insert(body, position, stage),
        alloc_buffers=(*scope.alloc_buffers, new_buffer),
    )
    return replace_block(tree, scope, new_scope, reuse), stage_name


def set_scope(tree: Tree, block: tir.Block, index: int, scope_name: str) -> Change | None:
    buffer = nth_buffer(block, index, "write", "set_scope")
    if buffer.scope == scope_name:
        return None
    check_scope(scope_name, "set_scope")
    site = _allocation_site(tree, block, buffer, "set_scope")
    new_buffer = with_scope(buffer, scope_name)
    swap = _SwapBuffer(buffer, new_buffer, None)
    new_site = swap.visit_stmt(site)
    assert isinstance(new_site, tir.Block)
    return replace_block(tree, site, new_site, swap.reuse)


def _allocation_site(tree: Tree, block: tir.Block, buffer: tir.Buffer, primitive: str) -> tir.Block:
    node: tir.Block | tir.For | None = block
    while node is not None:
        if isinstance(node, tir.Block) and any(b is buffer for b in node.alloc_buffers):
            return node
        node = tree.parent_of(node)
    raise ScheduleError(
        f"{primitive}: buffer '{buffer.name}' is not allocated inside the function (it is a "
        "parameter): its storage cannot be changed"
    )


def storage_align(
    tree: Tree, block: tir.Block, index: int, axis: int, factor: int, offset: int
) -> Change:
    buffer = nth_buffer(block, index, "write", "storage_align")
    if not isinstance(factor, int) or factor <= 0:
        raise ScheduleError(
            f"storage_align: factor for buffer '{buffer.name}' of block '{block.name}' must be "
            f"a positive integer, got {factor!r}"
        )
    ndim = len(buffer.shape)
    if not isinstance(axis, int) or not -ndim <= axis < ndim:
        raise ScheduleError(
            f"storage_align: axis {axis!r} is out of range for buffer '{buffer.name}' with "
            f"{ndim} dimensions"
        )
    axis %= ndim
    _allocation_site(tree, block, buffer, "storage_align")
    current = dict(block.annotations).get("buffer_dim_align", ())
    entries = [tuple(e) for e in current]
    new_entry = (index, axis, factor, offset)
    for i, e in enumerate(entries):
        if e[0] == index and e[1] == axis:
            entries[i] = new_entry
            break
    else:
        entries.append(new_entry)
    items = [(k, v) for k, v in block.annotations if k != "buffer_dim_align"]
    items.append(("buffer_dim_align", tuple(entries)))
    return replace_block(tree, block, dataclasses.replace(block, annotations=tuple(items)))
