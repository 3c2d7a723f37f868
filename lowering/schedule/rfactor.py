"""rfactor: factor a reduction over one of its loops into an intermediate buffer.

The reduction `B[i] = B[i] op f(k)` with `k` split over loop `r` becomes two
blocks: `<name>_rf` reduces into `B_rf[r, i]` (an extra spatial axis `v<r>` at
`factor_axis`) under copies of all the original loops, and the original block,
now reducing over `r` only, combines `B_rf` into `B` under the remaining
loops (the other reduction loops are dropped). The combiner must be one of the
commutative reducers `+`, `*`, `min`, `max` with a single output buffer.
"""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import arith, tir
from tvmlite.dsl.parse_tir_regions import uses
from tvmlite.lowering.schedule.loops import loop_name
from tvmlite.lowering.schedule.reduction import check_reduction_block
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    ScheduleMutator,
    Tree,
    realizes_under,
    replace_block,
    replace_in,
)


def _combiner(block: tir.Block) -> tuple[tir.BufferStore, str, tir.PrimExpr, tir.PrimExpr]:
    """(the update store, reducer kind, lhs load, rhs value) of `block`."""
    store, init = block.body, block.init
    if not isinstance(store, tir.BufferStore) or not isinstance(init, tir.BufferStore):
        raise ScheduleError(
            f"rfactor: block '{block.name}' must update and initialise a single buffer"
        )
    value = store.value
    if isinstance(value, tir.BinaryOp) and value.kind in ("add", "mul", "min", "max"):
        for lhs, rhs in ((value.a, value.b), (value.b, value.a)):
            if (
                isinstance(lhs, tir.BufferLoad)
                and lhs.buffer is store.buffer
                and len(lhs.indices) == len(store.indices)
                and all(
                    arith._deep_equal(a, b) for a, b in zip(lhs.indices, store.indices, strict=True)
                )
                and not _loads(rhs, store.buffer)
            ):
                return store, value.kind, lhs, rhs
    raise ScheduleError(
        f"rfactor: the update of block '{block.name}' is not a commutative reduction "
        "(+, *, min, max) of its output with a value independent of it"
    )


def _loads(e: tir.PrimExpr, buffer: tir.Buffer) -> bool:
    from tvmlite.dsl.tir_functor import StmtExprVisitor

    found = []

    class _Find(StmtExprVisitor):
        def visit_BufferLoad(self, x: tir.BufferLoad) -> None:
            if x.buffer is buffer:
                found.append(x)
            super().visit_BufferLoad(x)

    _Find().visit_expr(e)
    return bool(found)


def _combine(kind: str, a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    return tir.BinaryOp(kind, a, b, a.dtype)


def _substitute(node: object, mapping: dict[tir.Var, tir.PrimExpr]) -> object:
    m = ScheduleMutator()
    m.var_remap.update(mapping)
    if isinstance(node, tir.Stmt):
        return m.visit_stmt(node)
    if isinstance(node, tir.BufferRegion):
        return m.visit_buffer_region(node)
    return m.visit_expr(node)


def rfactor(tree: Tree, rf_loop: tir.For, factor_axis: int) -> tuple[Change, str]:
    realizes = realizes_under(rf_loop.body)
    if len(realizes) != 1:
        raise ScheduleError(
            f"rfactor: {loop_name(rf_loop)} must contain exactly one block, it has {len(realizes)}"
        )
    realize = realizes[0]
    block = realize.block
    check_reduction_block(tree, block, "rfactor")
    if rf_loop.kind != tir.SERIAL:
        raise ScheduleError(f"rfactor: {loop_name(rf_loop)} is not a serial loop")
    loops = tree.loops_above(block)
    spatial_vars: dict[tir.Var, None] = {}
    reduce_vars: dict[tir.Var, None] = {}
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        target = spatial_vars if iv.kind == tir.SPATIAL else reduce_vars
        for lp in loops:
            if uses(value, {lp.loop_var: None}):
                target[lp.loop_var] = None
    for lp in loops:
        if lp.loop_var in spatial_vars and lp.loop_var in reduce_vars:
            raise ScheduleError(
                f"rfactor: {loop_name(lp)} is bound to both spatial and reduce axes of block "
                f"'{block.name}'"
            )
    if rf_loop.loop_var not in reduce_vars:
        raise ScheduleError(
            f"rfactor: {loop_name(rf_loop)} is not a reduction loop of block '{block.name}' "
            "(no reduce axis of it is bound to the loop)"
        )
    store, kind, lhs, rhs = _combiner(block)
    buffer = store.buffer
    ndim = len(buffer.shape)
    if (
        isinstance(factor_axis, bool)
        or not isinstance(factor_axis, int)
        or not (-(ndim + 1) <= factor_axis <= ndim)
    ):
        raise ScheduleError(
            f"rfactor: factor_axis {factor_axis!r} is out of range for buffer '{buffer.name}' "
            f"with {ndim} dimensions"
        )
    if factor_axis < 0:
        factor_axis += ndim + 1
    rf_name = f"{buffer.name}_rf"
    rf_shape = list(buffer.shape)
    rf_shape.insert(factor_axis, rf_loop.extent)
    rf_buffer = dataclasses.replace(
        buffer,
        name=rf_name,
        data=tir.Var(rf_name, "handle", (buffer.dtype, buffer.scope)),
        shape=tuple(rf_shape),
        strides=(),
    )
    identity = block.init.value  # type: ignore[union-attr]
    # --- the rfactor block
    extra = tir.IterVar(
        tir.Var(f"v{rf_loop.loop_var.name}", rf_loop.loop_var.dtype),
        tir.Range(rf_loop.min, rf_loop.extent),
        tir.SPATIAL,
    )
    loop_to_iter: dict[tir.Var, tir.Var] = {rf_loop.loop_var: extra.var}
    loop_of = {lp.loop_var: lp for lp in loops}
    iter_vars, values = [extra], [rf_loop.loop_var]
    var_map: dict[tir.Var, tir.PrimExpr] = {}
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        if iv.kind == tir.SPATIAL or not uses(value, {rf_loop.loop_var: None}):
            iter_vars.append(iv)
            values.append(value)
            continue
        for var in _vars_in_order(value):
            lp = loop_of.get(var)
            if lp is None or var in loop_to_iter:
                continue
            new = tir.IterVar(
                tir.Var(f"v{var.name}", var.dtype), tir.Range(lp.min, lp.extent), tir.REDUCE
            )
            loop_to_iter[var] = new.var
            iter_vars.append(new)
            values.append(var)
        var_map[iv.var] = _substitute(value, loop_to_iter)
    rf_indices = list(store.indices)
    rf_indices.insert(factor_axis, extra.var)
    rf_load = tir.BufferLoad(rf_buffer, tuple(rf_indices), buffer.dtype)
    rf_body = _substitute(
        tir.BufferStore(rf_buffer, _combine(kind, rf_load, rhs), tuple(rf_indices)), var_map
    )
    rf_init = _substitute(tir.BufferStore(rf_buffer, identity, tuple(rf_indices)), var_map)
    reads = tuple(_substitute(r, var_map) for r in block.reads)
    writes = []
    for w in block.writes:
        region = list(w.region)
        region.insert(factor_axis, tir.Range(extra.var, arith.imm(1, extra.var.dtype)))
        writes.append(_substitute(tir.BufferRegion(rf_buffer, tuple(region)), var_map))
    rf_block = tir.Block(
        rf_name,
        tuple(iter_vars),
        reads,
        tuple(writes),
        rf_body,
        rf_init,
        annotations=block.annotations,
    )
    # The rfactor block sits under fresh copies of every loop of the block.
    copies = {lp.loop_var: tir.Var(lp.loop_var.name, lp.loop_var.dtype) for lp in loops}
    rf_stmt: tir.Stmt = tir.BlockRealize(
        tuple(_substitute(v, copies) for v in values),
        _substitute(realize.predicate, copies),
        rf_block,
    )
    for lp in reversed(loops):
        rf_stmt = dataclasses.replace(lp, loop_var=copies[lp.loop_var], body=rf_stmt)
    # --- the write-back block
    wb_extra = tir.IterVar(
        tir.Var(f"v{rf_loop.loop_var.name}", rf_loop.loop_var.dtype),
        tir.Range(rf_loop.min, rf_loop.extent),
        tir.REDUCE,
    )
    wb_map: dict[tir.Var, tir.PrimExpr] = {extra.var: wb_extra.var}
    wb_iters, wb_values = [wb_extra], [rf_loop.loop_var]
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        if iv.kind == tir.SPATIAL:
            new = dataclasses.replace(iv, var=tir.Var(iv.var.name, iv.var.dtype))
            wb_iters.append(new)
            wb_values.append(value)
            wb_map[iv.var] = new.var
    wb_rhs = _substitute(rf_load, wb_map)
    wb_lhs = _substitute(lhs, wb_map)
    wb_indices = tuple(_substitute(i, wb_map) for i in store.indices)
    point = lambda load: tir.BufferRegion(  # noqa: E731
        load.buffer, tuple(tir.Range(i, arith.imm(1, i.dtype)) for i in load.indices)
    )
    wb_block = tir.Block(
        block.name,
        tuple(wb_iters),
        (point(wb_rhs),),
        (point(wb_lhs),),
        tir.BufferStore(buffer, _combine(kind, wb_lhs, wb_rhs), wb_indices),
        tir.BufferStore(buffer, identity, wb_indices),
        annotations=block.annotations,
    )
    wb_realize = tir.BlockRealize(tuple(wb_values), tir.IntImm("bool", 1), wb_block)
    # Keep the spatial loops and the rfactor loop around the write-back block.
    new_nest: tir.Stmt = wb_realize
    for lp in reversed(loops):
        if lp is rf_loop or lp.loop_var not in reduce_vars:
            new_nest = dataclasses.replace(lp, body=new_nest)
    scope = tree.scope_of(block)
    body, reuse = replace_in(scope.body, {id(loops[0]): tir.seq([rf_stmt, new_nest])})
    reuse[id(block)] = wb_block
    new_scope = dataclasses.replace(
        scope, body=body, alloc_buffers=(*scope.alloc_buffers, rf_buffer)
    )
    return replace_block(tree, scope, new_scope, reuse), rf_name


def _vars_in_order(e: tir.PrimExpr) -> list[tir.Var]:
    from tvmlite.dsl.tir_functor import StmtExprVisitor

    out: list[tir.Var] = []

    class _Vars(StmtExprVisitor):
        def visit_Var(self, v: tir.Var) -> None:
            if v not in out:
                out.append(v)

    _Vars().visit_expr(e)
    return out
