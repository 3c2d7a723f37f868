"""blockize: turn the loop nest under a loop into a block of its own.

The block under the loop is split into an outer block `<name>_o`, iterating
over what the loops above vary, and the original block inside it, iterating
over the loops below. Each binding must divide into `outer * E + inner`, where
`inner` uses only loops under the target loop and spans `[0, E)` (subspace
division over the affine form of `dsl.iter_map`). A reduction keeps its
`T.init()` on the outer block, as a `<name>_init` block under copies of the
inner spatial loops.
"""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import arith, canonical, iter_map, tir
from tvmlite.dsl.analysis import uses
from tvmlite.lowering.schedule.loops import loop_name, loop_ranges
from tvmlite.lowering.schedule.regions import relax
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    ScheduleMutator,
    SubstituteSimplify,
    Tree,
    finish,
    realizes_under,
)


def _terms(s: iter_map.IterSum) -> list[iter_map.Split]:
    """The splits of a binding, a top-level fusion opened up into its parts."""
    out = []
    for split in s.args:
        source = split.mark.source
        if (
            isinstance(source, iter_map.IterSum)
            and split.lower == 1
            and (split.extent == split.mark.extent)
        ):
            out.extend(
                iter_map.Split(t.mark, t.lower, t.extent, t.scale * split.scale)
                for t in source.args
            )
        else:
            out.append(split)
    return out


def _divide(
    s: iter_map.IterSum, inner_vars: set[tir.Var], dtype: str
) -> tuple[tir.PrimExpr, int, tir.PrimExpr, int] | None:
    """(outer binding, outer extent, inner binding, inner extent), or None."""
    if arith.as_int(s.base) != 0:
        return None
    inner, outer = [], []
    for term in _terms(s):
        names = term.mark.leaves()
        if all(v in inner_vars for v in names):
            inner.append(term)
        elif not any(v in inner_vars for v in names):
            outer.append(term)
        else:
            return None
    extent = 1
    for term in sorted(inner, key=lambda t: t.scale):
        if term.scale != extent:
            return None
        extent *= term.extent
    if any(t.scale % extent for t in outer):
        return None
    outer_terms = [iter_map.Split(t.mark, t.lower, t.extent, t.scale // extent) for t in outer]
    outer_extent = 1
    for t in outer_terms:
        outer_extent = max(outer_extent, t.scale * t.extent)
    zero = arith.const(0, dtype)
    return (
        iter_map.normalize(iter_map.IterSum(outer_terms, zero), dtype),
        outer_extent,
        iter_map.normalize(iter_map.IterSum(inner, zero), dtype),
        extent,
    )


def blockize(tree: Tree, loop: tir.For, preserve_unit_iters: bool) -> tuple[Change, str]:
    realizes = realizes_under(loop)
    if len(realizes) != 1:
        raise ScheduleError(
            f"blockize: {loop_name(loop)} must contain exactly one block, it has {len(realizes)}"
        )
    realize = realizes[0]
    block = realize.block
    inner_loops = [lp for lp in tree.loops_above(block) if tree.is_ancestor(loop, lp) or lp is loop]
    inner_vars = {lp.loop_var for lp in inner_loops}
    # Dividing a binding between inner and outer loops needs constant extents.
    iters = {v: r for v, r in loop_ranges(tree, block).items() if isinstance(r[1], int)}
    sums = iter_map.detect(realize.iter_values, iters, preserve_unit_iters)
    divisions = None
    if sums is not None and arith.as_bool(realize.predicate) is True:
        divisions = [
            _divide(s, inner_vars, iv.var.dtype)
            for s, iv in zip(sums, block.iter_vars, strict=True)
        ]
    if divisions is None or any(d is None for d in divisions):
        raise ScheduleError(
            f"blockize: the bindings of block '{block.name}' cannot be divided into a part "
            f"over the loops above {loop_name(loop)} and a part over the loops below it"
        )
    outer_iters, outer_values, inner_iters, inner_values = [], [], [], []
    mapping: dict[tir.Var, tir.PrimExpr] = {}
    analyzer = canonical.Analyzer()
    for iv, division in zip(block.iter_vars, divisions, strict=True):
        assert division is not None
        outer_value, outer_extent, inner_value, inner_extent = division
        outer = _axis(iv, "_o", outer_extent)
        outer_iters.append(outer)
        outer_values.append(outer_value)
        if inner_extent == 1:
            mapping[iv.var] = outer.var
            continue
        inner = _axis(iv, "_i", inner_extent)
        inner_iters.append(inner)
        inner_values.append(inner_value)
        analyzer.bind(inner.var, 0, inner_extent)
        if outer_extent == 1:
            mapping[iv.var] = inner.var
        else:
            mapping[iv.var] = arith.add(arith.mul(outer.var, inner_extent), inner.var)
    sub = SubstituteSimplify(mapping, analyzer)
    reads = tuple(sub.visit_buffer_region(r) for r in block.reads)
    writes = tuple(sub.visit_buffer_region(r) for r in block.writes)
    body = sub.visit_stmt(block.body)
    init = None if block.init is None else sub.visit_stmt(block.init)
    outer_reduction = init is not None and any(iv.kind == tir.REDUCE for iv in outer_iters)
    inner_block = dataclasses.replace(
        block,
        iter_vars=tuple(inner_iters),
        reads=writes + reads if outer_reduction else reads,
        writes=writes,
        body=body,
        init=None,
    )
    inner_realize = tir.BlockRealize(tuple(inner_values), realize.predicate, inner_block)
    nest: tir.Stmt = inner_realize
    for lp in reversed(inner_loops):
        nest = dataclasses.replace(lp, body=nest)
    dom = {iv.var: iv.dom for iv in inner_iters}
    outer_block = tir.Block(
        f"{block.name}_o",
        tuple(outer_iters),
        tuple(_relax(r, dom, analyzer) for r in reads),
        tuple(_relax(r, dom, analyzer) for r in writes),
        nest,
        None if init is None else _outer_init(block.name, init, inner_realize, inner_loops),
    )
    outer_realize = tir.BlockRealize(tuple(outer_values), tir.IntImm("bool", 1), outer_block)
    change = finish(tree, {id(loop): outer_realize})
    change.reuse[id(block)] = inner_block
    return change, outer_block.name


def _axis(iv: tir.IterVar, suffix: str, extent: int) -> tir.IterVar:
    """An axis of the outer or inner block made from `iv`: `vi_o` or `vi_i`."""
    dtype = iv.var.dtype
    dom = tir.Range(arith.const(0, dtype), arith.const(extent, dtype))
    return tir.IterVar(tir.Var(f"{iv.var.name}{suffix}", dtype), dom, iv.kind)


def _relax(
    region: tir.BufferRegion, dom: dict[tir.Var, tir.Range], analyzer: canonical.Analyzer
) -> tir.BufferRegion:
    ranges = []
    for bound in relax(region, dom, analyzer):
        extent = analyzer.simplify(arith.add(arith.sub(bound.hi, bound.lo), 1))
        ranges.append(tir.Range(bound.lo, extent))
    return tir.BufferRegion(region.buffer, tuple(ranges))


def _outer_init(
    name: str, init: tir.Stmt, inner: tir.BlockRealize, loops: list[tir.For]
) -> tir.Stmt:
    """`<name>_init` under copies of the inner loops its spatial axes use."""
    mapping: dict[tir.Var, tir.PrimExpr] = {}
    iter_vars, values = [], []
    for iv, value in zip(inner.block.iter_vars, inner.iter_values, strict=True):
        if iv.kind == tir.SPATIAL and uses(init, {iv.var}):
            new = dataclasses.replace(iv, var=tir.Var(f"{iv.var.name}_init", iv.var.dtype))
            mapping[iv.var] = new.var
            iter_vars.append(new)
            values.append(value)
    block = tir.Block(f"{name}_init", tuple(iter_vars), (), inner.block.writes, init)
    stmt: tir.Stmt = tir.BlockRealize(tuple(values), inner.predicate, block)
    for lp in reversed(loops):
        if any(uses(v, {lp.loop_var: None}) for v in values):
            new_var = tir.Var(lp.loop_var.name, lp.loop_var.dtype)
            mapping[lp.loop_var] = new_var
            stmt = dataclasses.replace(lp, loop_var=new_var, body=stmt)
    m = ScheduleMutator()
    m.var_remap.update(mapping)
    return m.visit_stmt(stmt)
