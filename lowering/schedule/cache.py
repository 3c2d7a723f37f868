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

from tvmlite.dsl import arith, tir
from tvmlite.lowering.schedule import navigate
from tvmlite.lowering.schedule.inline import recompute_regions
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    ScheduleMutator,
    Tree,
    all_realizes,
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


def _stage(
    name: str, src: tir.Buffer, dst: tir.Buffer, shape: tuple[tir.PrimExpr, ...]
) -> tuple[tir.Stmt, tir.Block]:
    """`for ax...: dst[v...] = src[v...]` over the whole of `shape`."""
    loop_vars = [tir.Var(f"ax{i}", e.dtype) for i, e in enumerate(shape)]
    iter_vars = []
    for i, extent in enumerate(shape):
        var = tir.Var(f"v{i}", extent.dtype)
        iter_vars.append(
            tir.IterVar(var, tir.Range(arith.const(0, extent.dtype), extent), tir.SPATIAL)
        )
    idx = tuple(iv.var for iv in iter_vars)
    point = tuple(tir.Range(v, arith.const(1, v.dtype)) for v in idx)
    block = tir.Block(
        name,
        tuple(iter_vars),
        (tir.BufferRegion(src, point),),
        (tir.BufferRegion(dst, point),),
        tir.BufferStore(dst, tir.BufferLoad(src, idx, src.dtype), idx),
    )
    body: tir.Stmt = tir.BlockRealize(tuple(loop_vars), tir.IntImm("bool", 1), block)
    for var, extent in reversed(list(zip(loop_vars, shape, strict=True))):
        body = tir.For(var, arith.const(0, var.dtype), extent, tir.SERIAL, body)
    return body, block


class _SwapBuffer(ScheduleMutator):
    """Replaces `old` by `new` in the given blocks (all blocks when None)."""

    def __init__(self, old: tir.Buffer, new: tir.Buffer, only: list[tir.Block] | None) -> None:
        super().__init__()
        self.old, self.new = old, new
        self.only = None if only is None else {id(b) for b in only}
        self.active = only is None

    def visit_buffer(self, buffer: tir.Buffer) -> tir.Buffer:
        return self.new if self.active and buffer is self.old else buffer

    def visit_buffer_def(self, buffer: tir.Buffer) -> tir.Buffer:
        return self.new if buffer is self.old else buffer

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        if self.only is None or id(s) not in self.only:
            return super().visit_Block(s)
        saved, self.active = self.active, True
        try:
            return super().visit_Block(s)
        finally:
            self.active = saved


def _insert(body: tir.Stmt, position: int, stage: tir.Stmt) -> tir.Stmt:
    items = list(body.seq) if isinstance(body, tir.SeqStmt) else [body]
    items.insert(position, stage)
    return tir.seq(items)


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
    stage, _ = _stage(name, buffer, cache, buffer.shape)
    swap = _SwapBuffer(buffer, cache, readers)
    body = swap.visit_stmt(scope.body)
    if writers:
        position = _position(body, writers, before=False)
    else:
        position = _position(body, readers, before=True)
    new_scope = dataclasses.replace(
        scope, body=_insert(body, position, stage), alloc_buffers=(*scope.alloc_buffers, cache)
    )
    return replace_block(tree, scope, new_scope, swap.reuse), name


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
    stage, _ = _stage(name, cache, buffer, buffer.shape)
    swap = _SwapBuffer(buffer, cache, [block, *consumers])
    body = swap.visit_stmt(scope.body)
    readers = [
        b
        for b in deps.children
        if b is not block
        and not any(b is c for c in consumers)
        and any(r.buffer is buffer for r in b.reads)
    ]
    position = _position(body, readers, before=True) if readers else _position(body, [], False)
    new_scope = dataclasses.replace(
        scope, body=_insert(body, position, stage), alloc_buffers=(*scope.alloc_buffers, cache)
    )
    return replace_block(tree, scope, new_scope, swap.reuse), name


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
    axes = {iv.var: iv for iv in block.iter_vars}
    used: list[tir.IterVar] = []
    for r in regions[0].region:
        if arith.as_int(r.extent) != 1:
            raise ScheduleError(
                f"reindex: block '{block.name}' accesses '{buffer.name}' by a range"
            )
        for iv in block.iter_vars:
            from tvmlite.dsl.analysis import uses

            if uses(r.min, {iv.var: None}) and all(u is not iv for u in used):
                used.append(iv)
    used.sort(key=lambda iv: block.iter_vars.index(iv))
    shape = tuple(iv.dom.extent for iv in used)
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
    del axes
    if kind == "write":
        stage, _ = _stage(name, new_buffer, buffer, shape)
    else:
        stage, _ = _stage(name, buffer, new_buffer, shape)
    realize = tree.realize_of[id(block)]
    body, reuse = replace_in(
        scope.body, {id(realize): dataclasses.replace(realize, block=new_block)}
    )
    reuse[id(block)] = new_block
    position = _position(body, [new_block], before=kind == "read")
    new_scope = dataclasses.replace(
        scope,
        body=_insert(body, position, stage),
        alloc_buffers=(*scope.alloc_buffers, new_buffer),
    )
    return replace_block(tree, scope, new_scope, reuse), name


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
