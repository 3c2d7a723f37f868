"""Reductions: decompose_reduction and rfactor.

`decompose_reduction` moves a reduction block's `T.init()` into a block of its
own (`<name>_init`) above the given loop, under copies (`<loop>_init`) of the
loops its spatial bindings use, and renames the remaining block `<name>_update`
(which now also reads what it writes). `rfactor` (in `rfactor.py`) factors a
reduction loop into an intermediate buffer.
"""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import arith, tir
from tvmlite.dsl.analysis import free_vars, uses
from tvmlite.lowering.schedule import navigate
from tvmlite.lowering.schedule.annotate import is_reduction_block
from tvmlite.lowering.schedule.loops import loop_name
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import Change, ScheduleMutator, Tree, finish, replace_in


def check_reduction_block(tree: Tree, block: tir.Block, primitive: str) -> None:
    """A reduction block that is the only writer of its outputs in its scope."""
    if not is_reduction_block(block):
        raise ScheduleError(
            f"{primitive}: block '{block.name}' is not a reduction block (it needs T.init(), "
            "spatial and reduce axes only, and reduce axes that do not index its output)"
        )
    check_dominant(tree, block, primitive)


def check_dominant(tree: Tree, block: tir.Block, primitive: str) -> None:
    scope = navigate.scope_of(tree, block)
    for region in block.writes:
        if len(scope.writers.get(region.buffer, [])) != 1:
            raise ScheduleError(
                f"{primitive}: block '{block.name}' is not the only block writing "
                f"'{region.buffer.name}' in its scope"
            )


def decompose_reduction(tree: Tree, block: tir.Block, loop: tir.For) -> tuple[Change, str]:
    loops = tree.loops_above(block)
    if not any(lp is loop for lp in loops):
        raise ScheduleError(
            f"decompose_reduction: {loop_name(loop)} is not a loop above block '{block.name}'"
        )
    check_reduction_block(tree, block, "decompose_reduction")
    realize = tree.realize_of[id(block)]
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        if iv.kind != tir.REDUCE:
            continue
        for higher in loops:
            if higher is loop:
                break
            if uses(value, {higher.loop_var: None}):
                raise ScheduleError(
                    f"decompose_reduction: {loop_name(loop)} must be above every loop of the "
                    f"reduce axes of block '{block.name}', but {loop_name(higher)} is above it"
                )
    # A loop at or under `loop` that no axis is bound to repeats the whole
    # reduction; its init would run once for all of the repeats.
    bound = {v for value in realize.iter_values for v in free_vars(value)}
    for lp in loops[loops.index(loop) :]:
        if lp.loop_var not in bound and arith.as_int(lp.extent) != 1:
            raise ScheduleError(
                f"decompose_reduction: {loop_name(lp)} is bound to no axis of block "
                f"'{block.name}': the reduction repeats under it and cannot start once above it"
            )
    # The init block: the spatial axes only, bound as before.
    var_map: dict[tir.Var, tir.Var] = {}
    iter_vars, values = [], []
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        if iv.kind != tir.SPATIAL:
            continue
        new_var = tir.Var(iv.var.name, iv.var.dtype)
        var_map[iv.var] = new_var
        iter_vars.append(dataclasses.replace(iv, var=new_var))
        values.append(value)
    assert block.init is not None
    init_body = _substitute(block.init, var_map)
    writes = tuple(_substitute_region(w, var_map) for w in block.writes)
    init_block = tir.Block(
        f"{block.name}_init",
        tuple(iter_vars),
        (),
        writes,
        init_body,
        annotations=block.annotations,
    )
    # Copies of the loops (up to `loop`) that the init bindings use.
    chosen: list[tir.For] = []
    discarded: dict[tir.Var, None] = {}
    for lp in reversed(loops):
        if any(uses(v, {lp.loop_var: None}) for v in values):
            chosen.append(lp)
        else:
            discarded[lp.loop_var] = None
        if lp is loop:
            break
    predicate = _remake_predicate(realize.predicate, discarded)
    body: tir.Stmt = tir.BlockRealize(tuple(values), predicate, init_block)
    loop_map: dict[tir.Var, tir.Var] = {}
    for lp in chosen:
        new_var = tir.Var(f"{lp.loop_var.name}_init", lp.loop_var.dtype)
        loop_map[lp.loop_var] = new_var
        body = dataclasses.replace(lp, loop_var=new_var, body=body)
    body = _substitute(body, loop_map)
    # The update block: no init, and it reads what it writes.
    read_buffers = {r.buffer for r in block.reads}
    reads = tuple(w for w in block.writes if w.buffer not in read_buffers) + block.reads
    update = dataclasses.replace(block, name=f"{block.name}_update", init=None, reads=reads)
    new_realize = dataclasses.replace(realize, block=update)
    new_loop, _ = replace_in(loop, {id(realize): new_realize})
    change = finish(tree, {id(loop): tir.seq([body, new_loop])})
    change.reuse[id(block)] = update
    return change, init_block.name


def _substitute(s: tir.Stmt, mapping: dict[tir.Var, tir.Var]) -> tir.Stmt:
    m = ScheduleMutator()
    m.var_remap.update(mapping)
    return m.visit_stmt(s)


def _substitute_region(r: tir.BufferRegion, mapping: dict[tir.Var, tir.Var]) -> tir.BufferRegion:
    m = ScheduleMutator()
    m.var_remap.update(mapping)
    return m.visit_buffer_region(r)


def _remake_predicate(pred: tir.PrimExpr, discarded: dict[tir.Var, None]) -> tir.PrimExpr:
    """The conjuncts `a < b` of `pred` whose left side uses no discarded loop."""
    if arith.as_bool(pred) is True:
        return pred
    terms: list[tir.PrimExpr] = []
    while isinstance(pred, tir.BinaryOp) and pred.kind == "and":
        terms.append(pred.b)
        pred = pred.a
    terms.append(pred)
    out: tir.PrimExpr = tir.IntImm("bool", 1)
    for term in reversed(terms):
        if isinstance(term, tir.BinaryOp) and term.kind == "lt" and uses(term.a, discarded):
            continue
        out = arith.logical_and(out, term)
    return out
