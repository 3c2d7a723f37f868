"""rfactor: factor a reduction over one of its loops into an intermediate buffer.

The reduction `B[i] = B[i] op f(k)` with `k` split over loop `r` becomes two
blocks: `<name>_rf` reduces into `B_rf[r, i]` (an extra spatial axis `v<r>` at
`factor_axis`) under copies of all the original loops, and the original block,
now reducing over `r` only, combines `B_rf` into `B` under the remaining
loops (the other reduction loops are dropped). The combiner is read off the
block: `+`, `*`, `min`, `max` of the output with a value, or several outputs
updated together through selects (argmax/argmin: `T.let` bindings of
`T.Select(...)` then the stores).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl import dtype as dt
from tvmlite.dsl.analysis import free_vars, loads, uses
from tvmlite.lowering.schedule.loops import loop_name
from tvmlite.lowering.schedule.reduction import check_reduction_block
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    ScheduleMutator,
    Tree,
    all_realizes,
    merge_reuse,
    realizes_under,
    replace_block,
    replace_in,
)


@dataclass
class Reducer:
    """The update `B_i[idx] = value_i(lhs, rhs)` of each output buffer: `lhs[i]` is
    the load of `B_i[idx]`, `rhs[i]` the value it is combined with."""

    stores: list[tir.BufferStore]
    values: list[tir.PrimExpr]
    lhs: list[tir.BufferLoad]
    rhs: list[tir.PrimExpr]
    identities: list[tir.PrimExpr]

    def combine(self, lhs: list[tir.PrimExpr], rhs: list[tir.PrimExpr]) -> list[tir.PrimExpr]:
        """The update values with the operands replaced (outermost match first)."""
        table = list(zip(self.lhs, lhs, strict=True)) + list(zip(self.rhs, rhs, strict=True))

        class _Swap(ScheduleMutator):
            def visit_expr(self, e: tir.PrimExpr) -> tir.PrimExpr:
                for old, new in table:
                    if canonical.expr_equal(e, old):
                        return new
                return super().visit_expr(e)

        return [_Swap().visit_expr(v) for v in self.values]


def _reducer(block: tir.Block) -> Reducer:
    fail = ScheduleError(
        f"rfactor: the update of block '{block.name}' is not a commutative reduction of its "
        "outputs (+, *, min, max, or selects like argmax) with values independent of them"
    )
    lets: dict[tir.Var, tir.PrimExpr] = {}
    body = block.body
    while isinstance(body, tir.LetStmt):
        lets[body.var] = body.value
        body = body.body
    stores = list(body.seq) if isinstance(body, tir.SeqStmt) else [body]
    init = list(block.init.seq) if isinstance(block.init, tir.SeqStmt) else [block.init]
    if not all(isinstance(s, tir.BufferStore) for s in stores):
        raise fail
    if not all(isinstance(s, tir.BufferStore) for s in init) or [s.buffer for s in init] != [
        s.buffer for s in stores
    ]:
        raise fail
    values = [
        lets.get(s.value, s.value) if isinstance(s.value, tir.Var) else s.value for s in stores
    ]
    lhs = [tir.BufferLoad(s.buffer, s.indices, s.buffer.dtype) for s in stores]
    rhs: list[tir.PrimExpr] = []
    for i, value in enumerate(values):
        if isinstance(value, tir.BinaryOp) and value.kind in ("add", "mul", "min", "max"):
            pair = (
                (value.a, value.b) if canonical.expr_equal(value.a, lhs[i]) else (value.b, value.a)
            )
        elif isinstance(value, tir.Select):
            pair = (value.true_value, value.false_value)
        else:
            raise fail
        written = {s.buffer for s in stores}
        if not canonical.expr_equal(pair[0], lhs[i]) or any(
            load.buffer in written for load in loads(pair[1])
        ):
            raise fail
        rhs.append(pair[1])
    if len(stores) == 1 and not isinstance(values[0], tir.BinaryOp):
        raise fail
    identities = [s.value for s in init]
    for value, identity in zip(values, identities, strict=True):
        kind = value.kind if isinstance(value, tir.BinaryOp) else "select"
        if not _is_identity(kind, identity):
            raise ScheduleError(
                f"rfactor: the init value of block '{block.name}' is not the identity of its "
                f"reduction ({kind})"
            )
    return Reducer(stores, values, lhs, rhs, identities)


def _is_identity(kind: str, e: tir.PrimExpr) -> bool:
    """Whether `e` is the identity TVM's reducers require: 0 for +, 1 for *, the
    dtype's largest (smallest) value for min (max); for argmax-like selects, the
    index -1 or an extreme value."""
    value = arith.value_of(e)
    if value is None:
        return False
    low, high = _extremes(e.dtype)
    return {
        "add": value == 0,
        "mul": value == 1,
        "min": value == high,
        "max": value == low,
        "select": value in (-1, low, high),
    }[kind]


def _extremes(dtype: str) -> tuple[float, float]:
    if dt.is_float(dtype):
        big = {16: 65504.0, 32: 3.4028234663852886e38, 64: 1.7976931348623157e308}[dt.bits(dtype)]
        return -big, big
    if dt.is_uint(dtype):
        return 0, (1 << dt.bits(dtype)) - 1
    bits = dt.bits(dtype)
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _update_body(
    reducer: Reducer,
    buffers: list[tir.Buffer],
    indices: tuple[tir.PrimExpr, ...],
    lhs: list[tir.PrimExpr],
    rhs: list[tir.PrimExpr],
) -> tir.Stmt:
    """`B = op(B, x)` for one buffer; for several, `v_B: T.let = ...` bindings
    around the stores (so every update reads the old values)."""
    if len(buffers) == 1:
        value = reducer.values[0]
        if isinstance(value, tir.BinaryOp):
            new = tir.BinaryOp(value.kind, lhs[0], rhs[0], value.dtype)
        else:
            new = reducer.combine(lhs, rhs)[0]
        return tir.BufferStore(buffers[0], new, indices)
    stored = reducer.combine(lhs, rhs)
    lets = [tir.Var(f"v_{b.name}", v.dtype) for b, v in zip(buffers, stored, strict=True)]
    out: tir.Stmt = tir.seq(
        [tir.BufferStore(b, var, indices) for b, var in zip(buffers, lets, strict=True)]
    )
    for var, value in reversed(list(zip(lets, stored, strict=True))):
        out = tir.LetStmt(var, value, out)
    return out


def _init_body(
    reducer: Reducer, buffers: list[tir.Buffer], indices: tuple[tir.PrimExpr, ...]
) -> tir.Stmt:
    return tir.seq(
        [tir.BufferStore(b, v, indices) for b, v in zip(buffers, reducer.identities, strict=True)]
    )


def _point(load: tir.BufferLoad) -> tir.BufferRegion:
    return tir.BufferRegion(
        load.buffer, tuple(tir.Range(i, arith.const(1, i.dtype)) for i in load.indices)
    )


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
    reducer = _reducer(block)
    buffer = reducer.stores[0].buffer
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
    rf_buffers = []
    for store in reducer.stores:
        old = store.buffer
        shape = list(old.shape)
        shape.insert(factor_axis, rf_loop.extent)
        name = f"{old.name}.rf"  # printed as `_rf`; TVM names caches of it `<name>.rf_<scope>`
        rf_buffers.append(
            dataclasses.replace(
                old,
                name=name,
                data=tir.Var(name, "handle", (old.dtype, old.scope)),
                shape=tuple(shape),
                strides=(),
            )
        )
    rf_name = f"{block.name}_rf"
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
        for var in free_vars(value):
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
    rf_indices = list(reducer.stores[0].indices)
    rf_indices.insert(factor_axis, extra.var)
    rf_idx = tuple(rf_indices)
    rf_loads = [tir.BufferLoad(b, rf_idx, b.dtype) for b in rf_buffers]
    if any(iv.kind == tir.REDUCE for iv in iter_vars):
        rf_body = _update_body(reducer, rf_buffers, rf_idx, rf_loads, reducer.rhs)
        rf_init: tir.Stmt | None = _substitute(_init_body(reducer, rf_buffers, rf_idx), var_map)
    else:
        # Nothing left to reduce in the rfactor block: each element is one value.
        stores = [
            tir.BufferStore(b, v, rf_idx) for b, v in zip(rf_buffers, reducer.rhs, strict=True)
        ]
        rf_body, rf_init = tir.seq(stores), None
    rf_body = _substitute(rf_body, var_map)
    by_buffer = {s.buffer: b for s, b in zip(reducer.stores, rf_buffers, strict=True)}

    def rf_region(region: tir.BufferRegion) -> tir.BufferRegion:
        """`region` of a reduced buffer as the region of its rfactor buffer."""
        ranges = list(region.region)
        ranges.insert(factor_axis, tir.Range(extra.var, arith.const(1, extra.var.dtype)))
        return _substitute(tir.BufferRegion(by_buffer[region.buffer], tuple(ranges)), var_map)

    # The update reads its own partial result, not the reduced buffer (an
    # intermediate an epilogue inlined away may be gone from the function).
    reads = tuple(
        rf_region(r) if r.buffer in by_buffer else _substitute(r, var_map) for r in block.reads
    )
    writes = [rf_region(w) for w in block.writes]
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
    wb_rhs = [_substitute(load, wb_map) for load in rf_loads]
    wb_lhs = [_substitute(load, wb_map) for load in reducer.lhs]
    wb_indices = tuple(_substitute(i, wb_map) for i in reducer.stores[0].indices)
    outputs = [s.buffer for s in reducer.stores]
    wb_block = tir.Block(
        block.name,
        tuple(wb_iters),
        tuple(_point(x) for x in wb_rhs),
        tuple(_point(x) for x in wb_lhs),
        _update_body(reducer, outputs, wb_indices, wb_lhs, wb_rhs),
        _init_body(reducer, outputs, wb_indices),
        annotations=block.annotations,
    )
    wb_realize = tir.BlockRealize(tuple(wb_values), tir.IntImm("bool", 1), wb_block)
    # The write-back block takes the block's place; the other reduce loops go
    # (whatever else the loops hold stays where it is).
    drop = [lp for lp in loops if lp is not rf_loop and lp.loop_var in reduce_vars]
    for lp in drop:
        if len(all_realizes(lp)) != 1:
            raise ScheduleError(f"rfactor: {loop_name(lp)} holds other blocks than '{block.name}'")
    # The rfactor block goes before the whole nest: a block computed earlier in the
    # nest (say under a compute_at) would then run after the partial results it feeds.
    if realizes_under(loops[0].body)[0].block is not block:
        raise ScheduleError(
            f"rfactor: the first block under {loop_name(loops[0])} is not block '{block.name}'"
        )
    nest, reuse = replace_in(loops[0], {id(realize): wb_realize})
    dropper = _DropLoops({lp.loop_var for lp in drop})
    nest = dropper.visit_stmt(nest)
    scope = tree.scope_of(block)
    body, reuse2 = replace_in(scope.body, {id(loops[0]): tir.seq([rf_stmt, nest])})
    reuse = merge_reuse(reuse, dropper.reuse, reuse2)
    reuse[id(block)] = wb_block
    new_scope = dataclasses.replace(
        scope, body=body, alloc_buffers=(*scope.alloc_buffers, *rf_buffers)
    )
    return replace_block(tree, scope, new_scope, reuse), rf_name


class _DropLoops(ScheduleMutator):
    """Replaces the loops over `loop_vars` by their bodies."""

    def __init__(self, loop_vars: set[tir.Var]) -> None:
        super().__init__()
        self.loop_vars = loop_vars

    def visit_For(self, s: tir.For) -> tir.Stmt:
        out = super().visit_For(s)
        return out.body if s.loop_var in self.loop_vars else out  # type: ignore[attr-defined]
