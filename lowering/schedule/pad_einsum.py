"""pad_einsum: grow an einsum block's iteration domain to multiples of given factors.

An einsum block indexes every buffer it touches by its axes or constants only
(`C[i, j] += A[i, k] * B[k, j]`). Padding axis `j` by 32 makes the block run
over `j` in [0, ceil(N / 32) * 32): each buffer indexed by a padded axis is
replaced by a larger `<name>_pad`; an input's copy is made by a block of that
name before the einsum (`B_pad[k, j] = T.if_then_else(j < N, B[k, j], 0)`), and
the output is copied back by a block `<C>_pad` after it, over the original
extents. A contraction scheduled afterwards tiles the padded axes with tiles
that divide them (no predicate on the vector axis), and the padded copy of an
operand is where its packing happens. The blocks, buffers and names are TVM's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tvmlite.dsl import arith, tir
from tvmlite.dsl.analysis import loads
from tvmlite.lowering.schedule.inline import recompute_regions
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import Change, ScheduleMutator, Tree, replace_block


def pad_einsum(tree: Tree, block: tir.Block, padding: object) -> Change | None:
    iter_vars = block.iter_vars
    if (
        not isinstance(padding, (list, tuple))
        or len(padding) != len(iter_vars)
        or not all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in padding)
    ):
        raise ScheduleError(
            f"pad_einsum: the padding of block '{block.name}' must be a list of "
            f"{len(iter_vars)} positive integers (one per axis), got {padding!r}"
        )
    loops = _nest(tree, block)
    extents = [arith.as_int(iv.dom.extent) for iv in iter_vars]
    if any(e is None and p != 1 for e, p in zip(extents, padding, strict=True)):
        raise ScheduleError(
            f"pad_einsum: block '{block.name}' would pad an axis of symbolic extent "
            "(only axes of constant extent grow; give 1 for a symbolic one)"
        )
    grown = {
        iv.var: -(-e // p) * p
        for iv, e, p in zip(iter_vars, extents, padding, strict=True)
        if e is not None and e % p
    }
    accesses = _einsum_accesses(block)
    if not grown:
        return None
    padded: dict[tir.Buffer, tir.Buffer] = {}
    for buffer, indices in accesses.items():
        if any(i in grown for i in indices):
            padded[buffer] = _padded_buffer(buffer, indices, grown, block)
    store = block.body
    assert isinstance(store, tir.BufferStore)
    output = store.buffer
    inputs = [r.buffer for r in block.reads if r.buffer in padded and r.buffer is not output]
    new_block = _rewrite(block, padded, grown)
    scope = tree.scope_of(block)
    top = loops[0] if loops else tree.realize_of[id(block)]
    new_top = _grow_loops(tree, block, loops, new_block, grown)
    before = [_copy_in(b, padded[b], accesses[b], grown) for b in inputs]
    after = [_copy_out(output, padded[output])] if output in padded else []
    items = list(scope.body.seq) if isinstance(scope.body, tir.SeqStmt) else [scope.body]
    at = next((n for n, s in enumerate(items) if s is top), None)
    if at is None:
        raise ScheduleError(
            f"pad_einsum: the loop nest of block '{block.name}' is not a statement of its scope "
            "block"
        )
    items[at : at + 1] = [*before, new_top, *after]
    new_scope = dataclasses.replace(
        scope,
        body=tir.seq(items),
        alloc_buffers=(*scope.alloc_buffers, *(padded[b] for b in inputs), *_out(padded, output)),
    )
    change = replace_block(tree, scope, new_scope)
    change.reuse[id(block)] = new_block
    return change


def _out(padded: dict[tir.Buffer, tir.Buffer], output: tir.Buffer) -> tuple[tir.Buffer, ...]:
    return (padded[output],) if output in padded else ()


def _nest(tree: Tree, block: tir.Block) -> list[tir.For]:
    """The loops of the block's trivial binding: one per axis, in order, each
    holding only the next, from 0 over the axis' extent."""
    realize = tree.realize_of[id(block)]
    loops = tree.loops_above(block)
    ok = len(loops) == len(block.iter_vars) and arith.as_bool(realize.predicate) is True
    for n, (lp, iv, value) in enumerate(
        zip(loops, block.iter_vars, realize.iter_values, strict=False)
    ):
        inner = loops[n + 1] if n + 1 < len(loops) else realize
        ok = (
            ok
            and value is lp.loop_var
            and lp.body is inner
            and arith.as_int(lp.min) == 0
            and arith.as_int(iv.dom.min) == 0
            and arith.as_int(arith.difference(lp.extent, iv.dom.extent)) == 0
        )
    if not ok:
        raise ScheduleError(
            f"pad_einsum: block '{block.name}' must be bound trivially: one loop per axis, in "
            "order, from 0 over the axis' extent, holding nothing else"
        )
    return loops


def _einsum_accesses(block: tir.Block) -> dict[tir.Buffer, tuple[tir.PrimExpr, ...]]:
    """Each buffer the block touches and its indices, which must be axes of the
    block or constants, the same at every access."""
    store = block.body
    axes = {iv.var for iv in block.iter_vars}
    found: dict[tir.Buffer, tuple[tir.PrimExpr, ...]] = {}
    ok = isinstance(store, tir.BufferStore) and not block.alloc_buffers and not block.match_buffers
    accesses = []
    if isinstance(store, tir.BufferStore):
        accesses = [(store.buffer, store.indices), *((x.buffer, x.indices) for x in loads(store))]
        if block.init is not None:
            init = block.init
            ok = ok and isinstance(init, tir.BufferStore) and init.buffer is store.buffer
            if isinstance(init, tir.BufferStore):
                accesses.append((init.buffer, init.indices))
                accesses.extend((x.buffer, x.indices) for x in loads(init))
    for buffer, indices in accesses:
        plain = all(i in axes or isinstance(i, tir.IntImm) for i in indices)
        ok = ok and plain and found.setdefault(buffer, tuple(indices)) == tuple(indices)
    if not ok:
        raise ScheduleError(
            f"pad_einsum: block '{block.name}' is not an einsum (a single store whose every "
            "buffer is indexed by the block's axes or constants, the same way at each access)"
        )
    return found


def _padded_buffer(
    buffer: tir.Buffer,
    indices: tuple[tir.PrimExpr, ...],
    grown: dict[tir.Var, int],
    block: tir.Block,
) -> tir.Buffer:
    extent = {iv.var: arith.as_int(iv.dom.extent) for iv in block.iter_vars}
    shape = []
    for dim, index in zip(buffer.shape, indices, strict=True):
        if isinstance(index, tir.Var) and index in grown:
            if arith.as_int(dim) != extent[index]:
                raise ScheduleError(
                    f"pad_einsum: buffer '{buffer.name}' of block '{block.name}' is not as long "
                    f"as axis '{index.name}' along the dimension that axis indexes"
                )
            shape.append(arith.const(grown[index], dim.dtype))
        else:
            shape.append(dim)
    name = f"{buffer.name}_pad"
    data = tir.Var(name, "handle", (buffer.dtype, "global"))
    return dataclasses.replace(
        buffer, name=name, data=data, shape=tuple(shape), strides=(), scope="global"
    )


class _Swap(ScheduleMutator):
    def __init__(self, padded: dict[tir.Buffer, tir.Buffer]) -> None:
        super().__init__()
        self.padded = padded

    def visit_buffer(self, buffer: tir.Buffer) -> tir.Buffer:
        return self.padded.get(buffer, buffer)


def _rewrite(
    block: tir.Block, padded: dict[tir.Buffer, tir.Buffer], grown: dict[tir.Var, int]
) -> tir.Block:
    swap = _Swap(padded)
    iter_vars = tuple(
        dataclasses.replace(
            iv, dom=tir.Range(iv.dom.min, arith.const(grown[iv.var], iv.dom.extent.dtype))
        )
        if iv.var in grown
        else iv
        for iv in block.iter_vars
    )
    return recompute_regions(
        dataclasses.replace(
            block,
            iter_vars=iter_vars,
            body=swap.visit_stmt(block.body),
            init=None if block.init is None else swap.visit_stmt(block.init),
        )
    )


def _grow_loops(
    tree: Tree,
    block: tir.Block,
    loops: list[tir.For],
    new_block: tir.Block,
    grown: dict[tir.Var, int],
) -> tir.Stmt:
    realize = tree.realize_of[id(block)]
    stmt: tir.Stmt = dataclasses.replace(realize, block=new_block)
    for lp, iv in reversed(list(zip(loops, block.iter_vars, strict=True))):
        extent = lp.extent
        if iv.var in grown:
            extent = arith.const(grown[iv.var], extent.dtype)
        stmt = dataclasses.replace(lp, extent=extent, body=stmt)
    return stmt


def _copy_nest(
    name: str,
    shape: tuple[tir.PrimExpr, ...],
    body: Callable[[tuple[tir.Var, ...]], tir.BufferStore],
) -> tir.Stmt:
    """A block `name` over `shape` (axes v0.. under loops i0..), whose store
    `body(axes)` builds, with reads and writes from the body."""
    loop_vars = [tir.Var(f"i{a}", d.dtype) for a, d in enumerate(shape)]
    iter_vars = tuple(
        tir.IterVar(tir.Var(f"v{a}", d.dtype), tir.Range(arith.const(0, d.dtype), d), tir.SPATIAL)
        for a, d in enumerate(shape)
    )
    store = body(tuple(iv.var for iv in iter_vars))
    block = recompute_regions(tir.Block(name, iter_vars, (), (), store))
    stmt: tir.Stmt = tir.BlockRealize(tuple(loop_vars), arith.const(True, "bool"), block)
    for var, dim in reversed(list(zip(loop_vars, shape, strict=True))):
        stmt = tir.For(var, arith.const(0, dim.dtype), dim, tir.SERIAL, stmt)
    return stmt


def _copy_in(
    buffer: tir.Buffer,
    pad: tir.Buffer,
    indices: tuple[tir.PrimExpr, ...],
    grown: dict[tir.Var, int],
) -> tir.Stmt:
    """`pad[v] = T.if_then_else(v < extent along the padded axes, buffer[v], 0)`."""

    def store(axes: tuple[tir.Var, ...]) -> tir.BufferStore:
        inside: tir.PrimExpr = arith.const(True, "bool")
        for axis, index, dim in zip(axes, indices, buffer.shape, strict=True):
            if isinstance(index, tir.Var) and index in grown:
                inside = arith.logical_and(inside, tir.BinaryOp("lt", axis, dim, "bool"))
        zero = arith.const(0, buffer.dtype)
        load = tir.BufferLoad(buffer, axes, buffer.dtype)
        value = tir.Call(buffer.dtype, "if_then_else", (inside, load, zero))
        return tir.BufferStore(pad, value, axes)

    return _copy_nest(pad.name, pad.shape, store)


def _copy_out(output: tir.Buffer, pad: tir.Buffer) -> tir.Stmt:
    """`output[v] = pad[v]` over the output's own extents."""

    def store(axes: tuple[tir.Var, ...]) -> tir.BufferStore:
        return tir.BufferStore(output, tir.BufferLoad(pad, axes, pad.dtype), axes)

    return _copy_nest(pad.name, output.shape, store)
