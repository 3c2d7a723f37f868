"""decompose_padding: split a padding block into a constant fill and a copy.

A block `P[v] = T.if_then_else(in_bounds(v), f(v), c)` becomes
`<name>_pad_const` (writes `c` everywhere, under copies of the loops down
from the given loop, placed before it) and the block itself restricted to the
in-bound region: its axes and loops start at 0 and cover only the indices
where `in_bounds` holds, so the condition disappears.
"""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import arith, canonical, tir
from tvmlite.lowering.schedule.loops import loop_name
from tvmlite.lowering.schedule.regions import condition_bounds
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    ScheduleMutator,
    SubstituteSimplify,
    Tree,
    finish,
    replace_in,
)


def decompose_padding(tree: Tree, block: tir.Block, loop: tir.For) -> tuple[Change, str]:
    loops = tree.loops_above(block)
    if not any(lp is loop for lp in loops):
        raise ScheduleError(
            f"decompose_padding: {loop_name(loop)} is not a loop above block '{block.name}'"
        )
    realize = tree.realize_of[id(block)]
    store = block.body
    if not (
        isinstance(store, tir.BufferStore)
        and isinstance(store.value, tir.Call)
        and store.value.op == "if_then_else"
        and len(block.writes) == 1
    ):
        raise ScheduleError(
            f"decompose_padding: block '{block.name}' is not a padding block (a single store "
            "of T.if_then_else(in_bounds, value, constant))"
        )
    condition, in_bound_value, pad_value = store.value.args
    if not isinstance(pad_value, (tir.IntImm, tir.FloatImm)):
        raise ScheduleError(
            f"decompose_padding: the pad value of block '{block.name}' is not a constant"
        )
    if any(iv.kind != tir.SPATIAL for iv in block.iter_vars):
        raise ScheduleError(f"decompose_padding: block '{block.name}' is not a complete block")
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values, strict=True)}
    m = ScheduleMutator()
    m.var_remap.update(binding)
    predicate = arith.logical_and(m.visit_expr(condition), realize.predicate)
    inner = loops[loops.index(loop) :]
    by_var = {lp.loop_var: lp for lp in inner}
    ranges = {
        lp.loop_var: (arith.as_int(lp.min), arith.as_int(lp.extent))
        for lp in inner
        if arith.as_int(lp.min) is not None and arith.as_int(lp.extent) is not None
    }
    bounds, understood = condition_bounds(predicate, ranges)  # type: ignore[arg-type]
    if (
        len(ranges) != len(inner)
        or not understood
        or not all(isinstance(v, tir.Var) and v in by_var for v in realize.iter_values)
    ):
        raise ScheduleError(
            f"decompose_padding: the axes of block '{block.name}' are not independent loops "
            "bounded by its padding condition"
        )
    analyzer = canonical.Analyzer()
    for lp in loops:
        analyzer.bind(lp.loop_var, lp.min, lp.extent)
    # The constant fill: every point, under copies of the loops from `loop` down.
    const_map: dict[tir.Var, tir.PrimExpr] = {}
    const_iters = []
    for iv in block.iter_vars:
        new = tir.IterVar(tir.Var(iv.var.name, iv.var.dtype), iv.dom, tir.SPATIAL)
        const_iters.append(new)
        const_map[iv.var] = new.var
    loop_copies = {lp.loop_var: tir.Var(lp.loop_var.name, lp.loop_var.dtype) for lp in inner}
    sub = SubstituteSimplify({**const_map, **loop_copies}, analyzer)
    const_block = tir.Block(
        f"{block.name}_pad_const",
        tuple(const_iters),
        (),
        (sub.visit_buffer_region(block.writes[0]),),
        tir.BufferStore(store.buffer, pad_value, tuple(sub.visit_expr(i) for i in store.indices)),
    )
    const_nest: tir.Stmt = tir.BlockRealize(
        tuple(sub.visit_expr(v) for v in realize.iter_values), tir.IntImm("bool", 1), const_block
    )
    for lp in reversed(inner):
        const_nest = tir.For(loop_copies[lp.loop_var], lp.min, lp.extent, tir.SERIAL, const_nest)
    # The in-bound copy: axes and loops shifted to start at 0 over the in-bound region.
    shift: dict[tir.Var, tir.PrimExpr] = {}
    new_iters = []
    new_ranges: dict[tir.Var, tuple[int, int]] = {}
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        lo, extent = bounds[value]
        hi = lo + extent
        if extent == 0:
            raise ScheduleError(f"decompose_padding: block '{block.name}' has no in-bound point")
        var = tir.Var(iv.var.name, iv.var.dtype)
        dtype = iv.var.dtype
        new_iters.append(
            tir.IterVar(
                var, tir.Range(arith.const(0, dtype), arith.const(hi - lo, dtype)), tir.SPATIAL
            )
        )
        shift[iv.var] = arith.add(var, arith.const(lo, dtype))
        shift[value] = arith.add(value, arith.const(lo, dtype))
        new_ranges[value] = (0, hi - lo)
        analyzer.bind(value, 0, hi - lo)
    rewrite = SubstituteSimplify(shift, analyzer)
    in_block = dataclasses.replace(
        block,
        iter_vars=tuple(new_iters),
        reads=tuple(rewrite.visit_buffer_region(r) for r in block.reads),
        writes=tuple(rewrite.visit_buffer_region(r) for r in block.writes),
        body=tir.BufferStore(
            store.buffer,
            rewrite.visit_expr(in_bound_value),
            tuple(rewrite.visit_expr(i) for i in store.indices),
        ),
    )
    in_nest: tir.Stmt = tir.BlockRealize(
        realize.iter_values, analyzer.simplify(rewrite.visit_expr(predicate)), in_block
    )
    top = _in_bound_top(inner)
    for lp in reversed(inner[inner.index(top) :]):
        lo, extent = new_ranges.get(lp.loop_var) or (
            arith.as_int(lp.min),
            arith.as_int(lp.extent),
        )
        dtype = lp.loop_var.dtype
        in_nest = dataclasses.replace(
            lp, min=arith.const(lo, dtype), extent=arith.const(extent, dtype), body=in_nest
        )
    new_loop, reuse = replace_in(loop, {id(top): in_nest})
    change = finish(tree, {id(loop): tir.seq([const_nest, new_loop])}, reuse)
    change.reuse[id(block)] = in_block
    return change, const_block.name


def _in_bound_top(inner: list[tir.For]) -> tir.For:
    """The outermost loop of the perfect nest directly around the block (at most
    up to the given loop): the in-bound copy replaces it."""
    top = inner[-1]
    for lp in reversed(inner[:-1]):
        if lp.body is not top:
            break
        top = lp
    return top
