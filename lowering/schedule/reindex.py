"""reindex: a copy of a buffer indexed by a block's own axes.

The block then reads (writes) `<buffer>_reindex[axes]`, and a copy block
before (after) its loop nest moves the data between that buffer and the
original, indexed the way the block indexed it.
"""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl.analysis import substitute, uses
from tvmlite.lowering.schedule.cache import copy_stage, nth_buffer
from tvmlite.lowering.schedule.cache_location import insert
from tvmlite.lowering.schedule.inline import recompute_regions
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    Node,
    ScheduleMutator,
    Tree,
    all_realizes,
    replace_block,
    replace_in,
    stmt_of,
)


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
        stage = copy_stage(stage_name, new_buffer, buffer, axes, dst_at=original)
    else:
        stage_name = f"{name}_reindex"
        stage = copy_stage(stage_name, buffer, new_buffer, axes, src_at=original)
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


def _position(scope_body: tir.Stmt, blocks: list[tir.Block], before: bool) -> int:
    """Index in the scope's top sequence of the first (last) subtree holding one of
    `blocks`: a stage goes before the first reader or after the last writer."""
    items = list(scope_body.seq) if isinstance(scope_body, tir.SeqStmt) else [scope_body]
    ids = {id(b) for b in blocks}
    hits = [i for i, s in enumerate(items) if any(id(r.block) in ids for r in all_realizes(s))]
    if not hits:
        return 0 if before else len(items)
    return hits[0] if before else hits[-1] + 1
