"""set_scope and storage_align: how an intermediate buffer is stored."""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import tir
from tvmlite.lowering.schedule.cache import SwapBuffer, check_scope, nth_buffer, with_scope
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import Change, Tree, replace_block


def set_scope(tree: Tree, block: tir.Block, index: int, scope_name: str) -> Change | None:
    buffer = nth_buffer(block, index, "write", "set_scope")
    if buffer.scope == scope_name:
        return None
    check_scope(scope_name, "set_scope")
    site = _allocation_site(tree, block, buffer, "set_scope")
    new_buffer = with_scope(buffer, scope_name)
    swap = SwapBuffer(buffer, new_buffer, None)
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
