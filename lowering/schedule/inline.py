"""compute_inline and reverse_compute_inline.

Inlining removes an elementwise block and its intermediate buffer: a producer
`B[v] = f(...)` is substituted into every load of `B` in its consumers; a
consumer `C[g(v)] = h(B[v], ...)` is folded into the single block producing
`B`. The removed block's loops go with it when they held nothing else, and the
blocks that changed get their read/write regions recomputed from their bodies.
"""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl.analysis import loads, uses
from tvmlite.dsl.regions import infer_regions
from tvmlite.lowering.schedule import navigate
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    ScheduleMutator,
    Tree,
    removal_root,
    replace_block,
    replace_in,
)


def _complete(tree: Tree, block: tir.Block) -> bool:
    """Spatial axes only, the only writer of its outputs, reads nothing it writes."""
    if any(iv.kind != tir.SPATIAL for iv in block.iter_vars):
        return False
    scope = navigate.scope_of(tree, block)
    if any(len(scope.writers.get(w.buffer, [])) != 1 for w in block.writes):
        return False
    written = {w.buffer for w in block.writes}
    return not any(r.buffer in written for r in block.reads)


def is_output_block(tree: Tree, block: tir.Block) -> bool:
    """Writes a buffer that outlives its scope (not allocated by the scope block)."""
    local = set(tree.scope_of(block).alloc_buffers)
    return any(w.buffer not in local for w in block.writes)


def _check_common(tree: Tree, block: tir.Block, primitive: str) -> None:
    if block.init is not None:
        raise ScheduleError(f"{primitive}: block '{block.name}' is a reduction (has T.init())")


def compute_inline(tree: Tree, block: tir.Block) -> Change:
    _check_common(tree, block, "compute_inline")
    if len(block.writes) != 1:
        raise ScheduleError(
            f"compute_inline: block '{block.name}' must write exactly one buffer, "
            f"it writes {len(block.writes)}"
        )
    buffer = block.writes[0].buffer
    if is_output_block(tree, block):
        raise ScheduleError(
            f"compute_inline: block '{block.name}' writes '{buffer.name}', an output of its "
            "scope: an output block cannot be inlined"
        )
    if not _complete(tree, block):
        raise ScheduleError(
            f"compute_inline: block '{block.name}' is not a complete block (spatial axes "
            "only, the only writer of its output, reading nothing it writes)"
        )
    store = block.body
    if not (
        isinstance(store, tir.BufferStore)
        and len(store.indices) == len(block.iter_vars)
        and all(_trivial_index(i, iv) for i, iv in zip(store.indices, block.iter_vars, strict=True))
    ):
        raise ScheduleError(
            f"compute_inline: the body of block '{block.name}' must be a single store "
            "indexed by its axes in order"
        )
    scope = tree.scope_of(block)
    removed = removal_root(tree, block)
    inliner = _Inliner(buffer, [iv.var for iv in block.iter_vars], store.value, scope)
    new_scope_body, _ = replace_in(scope.body, {}, (removed,))
    new_scope_body = inliner.visit_stmt(new_scope_body)
    if inliner.opaque:
        raise ScheduleError(
            f"compute_inline: '{buffer.name}' is accessed opaquely (not by loads): cannot inline"
        )
    allocs = tuple(b for b in scope.alloc_buffers if b is not buffer)
    new_scope = dataclasses.replace(scope, body=new_scope_body, alloc_buffers=allocs)
    return replace_block(tree, scope, new_scope, inliner.reuse)


def _trivial_index(index: tir.PrimExpr, iv: tir.IterVar) -> bool:
    if index is iv.var:
        return True
    return (
        arith.as_int(index) == 0
        and arith.as_int(iv.dom.min) == 0
        and arith.as_int(iv.dom.extent) == 1
    )


def recompute_regions(block: tir.Block) -> tir.Block:
    """Reads and writes from the body; a reduction's own output is not listed as
    read (as TVM writes them)."""
    reads, writes = infer_regions(block.body, block.init, block.alloc_buffers, block.match_buffers)
    if block.init is not None:
        written = {w.buffer for w in writes}
        reads = tuple(r for r in reads if r.buffer not in written)
    return dataclasses.replace(block, reads=reads, writes=writes)


class _Inliner(ScheduleMutator):
    """Replaces loads of `buffer` by the producer's value at the loaded indices and
    recomputes the regions of the blocks that loaded it."""

    def __init__(
        self, buffer: tir.Buffer, params: list[tir.Var], value: tir.PrimExpr, scope: tir.Block
    ) -> None:
        super().__init__()
        self.buffer = buffer
        self.params = params
        self.value = value
        self.scope = scope
        self.opaque = False

    def visit_Var(self, e: tir.Var) -> tir.PrimExpr:
        if e is self.buffer.data:
            self.opaque = True
        return super().visit_Var(e)

    def visit_buffer(self, buffer: tir.Buffer) -> tir.Buffer:
        return buffer

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        e = super().visit_BufferLoad(e)
        if e.buffer is not self.buffer:
            return e
        # The producer's axes may be narrower than the consumer's indices (int32
        # axes read at int64 indices): the value sees indices of its own dtype.
        mapping = {
            p: i if i.dtype == p.dtype else arith.cast(p.dtype, i)
            for p, i in zip(self.params, e.indices, strict=True)
        }
        m = ScheduleMutator()
        m.var_remap.update(mapping)
        return m.visit_expr(self.value)

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        if any(m.source.buffer is self.buffer for m in s.match_buffers):
            self.opaque = True
        touches = any(r.buffer is self.buffer for r in (*s.reads, *s.writes))
        new = super().visit_Block(s)
        if touches:
            new = recompute_regions(new)
            self.reuse[id(s)] = new
        return new


def reverse_compute_inline(tree: Tree, block: tir.Block) -> Change:
    _check_common(tree, block, "reverse_compute_inline")
    realize = tree.realize_of[id(block)]
    scope = navigate.scope_of(tree, block)
    buffer = _single_read(scope, block)
    if not _complete(tree, block):
        raise ScheduleError(
            f"reverse_compute_inline: block '{block.name}' is not a complete block (spatial "
            "axes only, the only writer of its output, reading nothing it writes)"
        )
    producers = [b for b in scope.children if any(w.buffer is buffer for w in b.writes)]
    for p in producers:
        if not _complete(tree, p):
            raise ScheduleError(
                f"reverse_compute_inline: the producer '{p.name}' of block '{block.name}' is "
                "not a complete block"
            )
    if len(producers) != 1:
        raise ScheduleError(
            f"reverse_compute_inline: block '{block.name}' must have exactly one producer of "
            f"'{buffer.name}', it has {len(producers)}"
        )
    producer = producers[0]
    if is_output_block(tree, producer):
        raise ScheduleError(
            f"reverse_compute_inline: the producer '{producer.name}' writes an output of its scope"
        )
    store = block.body
    if arith.as_bool(realize.predicate) is not True or not isinstance(store, tir.BufferStore):
        raise ScheduleError(
            f"reverse_compute_inline: the body of block '{block.name}' must be a single store "
            "without a predicate"
        )
    loads = _loads_of(store, buffer)
    if not loads or any(
        len(ld.indices) != len(loads[0].indices)
        or any(
            not canonical.expr_equal(a, b)
            for a, b in zip(ld.indices, loads[0].indices, strict=True)
        )
        for ld in loads
    ):
        raise ScheduleError(
            f"reverse_compute_inline: block '{block.name}' must load '{buffer.name}' at one index"
        )
    producer_store = producer.body
    if not isinstance(producer_store, tir.BufferStore):
        raise ScheduleError(
            f"reverse_compute_inline: the body of producer '{producer.name}' is not a store"
        )
    # The consumer's axes as functions of the producer's store indices.
    sub: dict[tir.Var, tir.PrimExpr] = {}
    for iv in block.iter_vars:
        if arith.as_int(iv.dom.extent) == 1 and arith.as_int(iv.dom.min) is not None:
            sub[iv.var] = iv.dom.min
    axes = {iv.var: iv for iv in block.iter_vars}
    analyzer = canonical.Analyzer()
    for index, value, extent in zip(
        loads[0].indices, producer_store.indices, buffer.shape, strict=True
    ):
        if isinstance(index, tir.Var) and index in axes:
            # Inlined into the producer, the consumer runs wherever the producer
            # does: it must cover the whole buffer.
            dom = axes[index].dom
            if arith.as_int(dom.min) != 0 or not analyzer.can_prove_equal(dom.extent, extent):
                raise ScheduleError(
                    f"reverse_compute_inline: axis '{index.name}' of block '{block.name}' does "
                    f"not run over the whole of '{buffer.name}'"
                )
            sub[index] = value
        elif uses(index, axes):
            raise ScheduleError(
                f"reverse_compute_inline: block '{block.name}' loads '{buffer.name}' at an "
                "index that is not one of its axes"
            )
    if any(iv.var not in sub for iv in block.iter_vars):
        raise ScheduleError(
            f"reverse_compute_inline: the axes of block '{block.name}' are not covered by its "
            f"producer '{producer.name}'"
        )
    rhs = producer_store.value
    new_store = _substitute_store(store, sub, buffer, rhs)
    new_producer = recompute_regions(dataclasses.replace(producer, body=new_store))
    producer_realize = tree.realize_of[id(producer)]
    scope_block = tree.scope_of(block)
    removed = removal_root(tree, block)
    new_scope_body, reuse = replace_in(
        scope_block.body,
        {id(producer_realize): dataclasses.replace(producer_realize, block=new_producer)},
        (removed,),
    )
    reuse[id(producer)] = new_producer
    allocs = tuple(b for b in scope_block.alloc_buffers if b is not buffer)
    new_scope = dataclasses.replace(scope_block, body=new_scope_body, alloc_buffers=allocs)
    return replace_block(tree, scope_block, new_scope, reuse)


def _single_read(scope: navigate.Scope, block: tir.Block) -> tir.Buffer:
    found: tir.Buffer | None = None
    for region in block.reads:
        if region.buffer is found:
            continue
        if scope.writers.get(region.buffer):
            if found is not None:
                raise ScheduleError(
                    f"reverse_compute_inline: block '{block.name}' reads more than one buffer "
                    "produced in its scope"
                )
            found = region.buffer
    if found is None:
        raise ScheduleError(
            f"reverse_compute_inline: block '{block.name}' reads no buffer produced in its scope"
        )
    return found


def _loads_of(store: tir.BufferStore, buffer: tir.Buffer) -> list[tir.BufferLoad]:
    return [load for load in loads(store) if load.buffer is buffer]


def _substitute_store(
    store: tir.BufferStore,
    sub: dict[tir.Var, tir.PrimExpr],
    buffer: tir.Buffer,
    rhs: tir.PrimExpr,
) -> tir.Stmt:
    class _Sub(ScheduleMutator):
        def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
            e = super().visit_BufferLoad(e)
            return rhs if e.buffer is buffer else e

    m = _Sub()
    m.var_remap.update(sub)
    return m.visit_stmt(store)
