"""compute_at and reverse_compute_at: move a block under a loop of its
consumers (producers), computing just the region they need per iteration.

The block is removed from where it was and re-created under the target loop in
a new loop nest (`ax0`, `ax1`, ...), one loop per block axis whose needed range
is not a single point. The needed range comes from the dependent blocks under
the loop: their accesses of the shared buffers, with their bindings substituted
and the loops between them and the target loop relaxed to their full range
(`regions.py`). The block's own access pattern then says which axis values
produce (consume) that region. An axis whose range reaches past the buffer gets
a `T.where` predicate.
"""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl import dtype as dt
from tvmlite.dsl.analysis import free_vars, uses
from tvmlite.lowering.schedule import navigate
from tvmlite.lowering.schedule.annotate import is_reduction_block
from tvmlite.lowering.schedule.inline import is_output_block
from tvmlite.lowering.schedule.loops import loop_name
from tvmlite.lowering.schedule.regions import Interval, relaxed_region, union
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import Change, Tree, all_realizes, finish, removal_root


def compute_at(
    tree: Tree,
    block: tir.Block,
    loop: tir.For,
    preserve_unit_loops: bool,
    index: int,
    reverse: bool,
) -> Change:
    primitive = "reverse_compute_at" if reverse else "compute_at"
    scope_block = tree.scope_of(block)
    scope = navigate.Scope(tree, scope_block)
    producers, consumers = scope.producers(block), scope.consumers(block)
    if not (_is_complete(scope, block) or is_reduction_block(block)):
        raise ScheduleError(
            f"{primitive}: block '{block.name}' is neither a complete block nor a reduction block"
        )
    analyzer = canonical.Analyzer()
    node = loop
    while True:
        if isinstance(node, tir.For):
            analyzer.bind(node.loop_var, node.min, node.extent)
        elif node is not scope_block:
            raise ScheduleError(
                f"{primitive}: block '{block.name}' and {loop_name(loop)} are not in the same "
                "block scope"
            )
        else:
            break
        node = tree.parent_of(node)
    _check_predicate(tree, block, primitive)
    if tree.is_ancestor(loop, block):
        raise ScheduleError(
            f"{primitive}: {loop_name(loop)} is a loop around block '{block.name}' itself"
        )
    if not reverse and is_output_block(tree, block):
        raise ScheduleError(
            f"compute_at: block '{block.name}' writes an output of its scope: it cannot be "
            "computed at a loop of its consumers"
        )
    removed = removal_root(tree, block)
    subtrees = list(loop.body.seq) if isinstance(loop.body, tir.SeqStmt) else [loop.body]
    position = _insertion_point(subtrees, producers, consumers, index, reverse, block, primitive)
    _check_order(scope, loop, block, consumers if reverse else producers, reverse, primitive)
    # What one instance of the block provides, and what the blocks under the loop need.
    provided_regions = block.reads if reverse else block.writes
    wanted = {r.buffer for r in provided_regions}
    required: dict[tir.Buffer, list[list[Interval]]] = {b: [] for b in wanted}
    for other in producers if reverse else consumers:
        realize = tree.realize_of[id(other)]
        inner = _loops_between(tree, other, loop)
        for region in other.writes if reverse else other.reads:
            if region.buffer in required:
                required[region.buffer].append(relaxed_region(region, realize, inner, analyzer))
    doms = _block_var_domains(block, provided_regions, required, analyzer, primitive)
    realize, loops_ = _new_nest(block, doms, analyzer, preserve_unit_loops)
    nest: tir.Stmt = realize
    for var, extent in reversed(loops_):
        nest = tir.For(var, arith.const(0, var.dtype), extent, tir.SERIAL, nest)
    subtrees.insert(position, nest)
    new_loop = dataclasses.replace(loop, body=tir.seq(subtrees))
    return finish(tree, {id(loop): new_loop}, removed=(removed,))


def _check_predicate(tree: Tree, block: tir.Block, primitive: str) -> None:
    """The block's new loops cover the region its neighbours need, which bounds
    its spatial axes; a predicate that bounds its reduce axes would be lost."""
    realize = tree.realize_of[id(block)]
    reduce_loops: dict[tir.Var, None] = {}
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        if iv.kind != tir.SPATIAL:
            reduce_loops.update(dict.fromkeys(free_vars(value)))
    if uses(realize.predicate, reduce_loops):
        raise ScheduleError(
            f"{primitive}: the predicate (T.where) of block '{block.name}' bounds its "
            "reduction axes"
        )


def _check_order(
    scope: navigate.Scope,
    loop: tir.For,
    block: tir.Block,
    others: list[tir.Block],
    reverse: bool,
    primitive: str,
) -> None:
    """The block's producers outside the loop must still run before it (compute_at
    moves it earlier), its consumers outside the loop after it (reverse_compute_at
    moves it later)."""
    under = {id(r.block) for r in all_realizes(loop)}
    order = {id(b): i for i, b in enumerate(scope.children)}
    inside = [order[id(b)] for b in scope.children if id(b) in under]
    for other in others:
        if id(other) in under or not inside:
            continue
        if reverse and order[id(other)] < max(inside):
            raise ScheduleError(
                f"{primitive}: block '{other.name}' reads what block '{block.name}' writes "
                f"before {loop_name(loop)} runs"
            )
        if not reverse and order[id(other)] > min(inside):
            raise ScheduleError(
                f"{primitive}: block '{other.name}' writes what block '{block.name}' reads "
                f"after {loop_name(loop)} starts"
            )


def _is_complete(scope: navigate.Scope, block: tir.Block) -> bool:
    if any(iv.kind != tir.SPATIAL for iv in block.iter_vars):
        return False
    if any(len(scope.writers.get(w.buffer, [])) != 1 for w in block.writes):
        return False
    written = {w.buffer for w in block.writes}
    return not any(r.buffer in written for r in block.reads)


def _insertion_point(
    subtrees: list[tir.Stmt],
    producers: list[tir.Block],
    consumers: list[tir.Block],
    index: int,
    reverse: bool,
    block: tir.Block,
    primitive: str,
) -> int:
    last_producer, first_consumer = -1, len(subtrees)
    seen_producers: set[int] = set()
    seen_consumers: set[int] = set()
    for i, sub in enumerate(subtrees):
        blocks = [r.block for r in all_realizes(sub)]
        for b in blocks:
            if any(b is p for p in producers):
                seen_producers.add(id(b))
                last_producer = i
            if any(b is c for c in consumers):
                seen_consumers.add(id(b))
                first_consumer = min(first_consumer, i)
    if reverse and len(seen_producers) < len(producers):
        missing = [p.name for p in producers if id(p) not in seen_producers]
        raise ScheduleError(
            f"{primitive}: not every producer of block '{block.name}' is under the target loop "
            f"(missing: {', '.join(missing)})"
        )
    if not reverse and len(seen_consumers) < len(consumers):
        missing = [c.name for c in consumers if id(c) not in seen_consumers]
        raise ScheduleError(
            f"{primitive}: not every consumer of block '{block.name}' is under the target loop "
            f"(missing: {', '.join(missing)})"
        )
    if last_producer >= first_consumer:
        raise ScheduleError(
            f"{primitive}: no place under the loop comes after the producers and before the "
            f"consumers of block '{block.name}'"
        )
    if index == -1:
        return first_consumer
    if index == -2:
        return last_producer + 1
    if isinstance(index, int) and last_producer + 1 <= index <= first_consumer:
        return index
    raise ScheduleError(
        f"{primitive}: index {index} is not a valid position (valid: -1, -2, "
        f"{last_producer + 1}..{first_consumer})"
    )


def _loops_between(tree: Tree, block: tir.Block, top: tir.For) -> list[tir.For]:
    out = []
    for p in tree.ancestors(block):
        if p is top or isinstance(p, tir.Block):
            break
        out.append(p)
    return out


def _block_var_domains(
    block: tir.Block,
    provided_regions: tuple[tir.BufferRegion, ...],
    required: dict[tir.Buffer, list[list[Interval]]],
    analyzer: canonical.Analyzer,
    primitive: str,
) -> list[tuple[Interval | None, Interval | None]]:
    """Per block axis: (domain covering what is required, bound it must stay in)."""
    doms: dict[tir.Var, Interval | None] = {iv.var: None for iv in block.iter_vars}
    bounds: dict[tir.Var, Interval | None] = {iv.var: None for iv in block.iter_vars}
    provided: dict[tir.Buffer, list[list[Interval]]] = {}
    for region in provided_regions:
        provided.setdefault(region.buffer, []).append(
            [Interval(r.min, arith.sub(arith.add(r.min, r.extent), 1)) for r in region.region]
        )
    for buffer, many in provided.items():
        needs = required.get(buffer)
        if not needs:
            continue
        need = union(needs, analyzer)
        have = union(many, analyzer)
        for axis, (p, q) in enumerate(zip(have, need, strict=True)):
            dim_max = arith.sub(buffer.shape[axis], 1)
            if analyzer.can_prove_equal(p.lo, p.hi) and arith.as_int(p.lo) is not None:
                continue
            var, dom, bound = _solve(p, q, dim_max, analyzer, primitive, block)
            if var is None or var not in doms or dom is None:
                continue
            doms[var] = dom if doms[var] is None else _union2(doms[var], dom, analyzer)
            if bound is not None:
                bounds[var] = (
                    bound if bounds[var] is None else _union2(bounds[var], bound, analyzer)
                )
    out = []
    for iv in block.iter_vars:
        full = Interval(iv.dom.min, arith.sub(arith.add(iv.dom.min, iv.dom.extent), 1))
        bound = full if bounds[iv.var] is None else _intersect(bounds[iv.var], full, analyzer)
        out.append(_simplify_info(doms[iv.var], bound, analyzer))
    return out


def _solve(
    provided: Interval,
    required: Interval,
    dim_max: tir.PrimExpr,
    analyzer: canonical.Analyzer,
    primitive: str,
    block: tir.Block,
) -> tuple[tir.Var | None, Interval | None, Interval | None]:
    lo = analyzer.simplify(provided.lo)
    req_lo, req_hi = analyzer.simplify(required.lo), analyzer.simplify(required.hi)
    zero = arith.const(0, dim_max.dtype)
    if isinstance(lo, tir.BinaryOp) and lo.kind == "mul":
        var, scale = (lo.a, lo.b) if isinstance(lo.a, tir.Var) else (lo.b, lo.a)
        if isinstance(var, tir.Var):
            return (
                var,
                Interval(arith.floordiv(req_lo, scale), arith.floordiv(req_hi, scale)),
                Interval(zero, arith.floordiv(dim_max, scale)),
            )
    if analyzer.can_prove_equal(provided.lo, provided.hi):
        if isinstance(lo, tir.Var):
            return lo, Interval(req_lo, req_hi), Interval(zero, dim_max)
        if isinstance(lo, tir.BinaryOp) and lo.kind == "floordiv" and isinstance(lo.a, tir.Var):
            f = lo.b
            return (
                lo.a,
                Interval(
                    arith.mul(req_lo, f),
                    analyzer.simplify(arith.sub(arith.add(arith.mul(req_hi, f), f), 1)),
                ),
                Interval(
                    zero, analyzer.simplify(arith.sub(arith.add(arith.mul(dim_max, f), f), 1))
                ),
            )
        if isinstance(lo, tir.BinaryOp) and lo.kind == "floormod" and isinstance(lo.a, tir.Var):
            return lo.a, None, None
    raise ScheduleError(
        f"{primitive}: cannot tell which values of the axes of block '{block.name}' cover the "
        "region required under the loop"
    )


def _union2(a: Interval, b: Interval, analyzer: canonical.Analyzer) -> Interval:
    return union([[a], [b]], analyzer)[0]


def _intersect(a: Interval, b: Interval, analyzer: canonical.Analyzer) -> Interval:
    return Interval(
        analyzer.simplify(arith.maximum(a.lo, b.lo)), analyzer.simplify(arith.minimum(a.hi, b.hi))
    )


def _simplify_info(
    dom: Interval | None, bound: Interval, analyzer: canonical.Analyzer
) -> tuple[Interval, Interval | None]:
    """(domain, bound left to enforce by a predicate, or None)."""
    bound = Interval(analyzer.simplify(bound.lo), analyzer.simplify(bound.hi))
    if dom is None:
        return bound, None
    dom = Interval(analyzer.simplify(dom.lo), analyzer.simplify(dom.hi))
    meet = _intersect(dom, bound, analyzer)
    if analyzer.can_prove_equal(dom.lo, meet.lo) and analyzer.can_prove_equal(dom.hi, meet.hi):
        return dom, None
    if analyzer.can_prove_equal(bound.lo, meet.lo) and analyzer.can_prove_equal(bound.hi, meet.hi):
        return bound, None
    if arith.as_int(meet.lo) is not None and arith.as_int(meet.hi) is not None:
        return meet, None
    return dom, bound


def _new_nest(
    block: tir.Block,
    doms: list[tuple[Interval, Interval | None]],
    analyzer: canonical.Analyzer,
    preserve_unit_loops: bool,
) -> tuple[tir.BlockRealize, list[tuple[tir.Var, tir.PrimExpr]]]:
    loops: list[tuple[tir.Var, tir.PrimExpr]] = []
    values: list[tir.PrimExpr] = []
    predicate: tir.PrimExpr = tir.IntImm("bool", 1)
    for (dom, bound), iv in zip(doms, block.iter_vars, strict=True):
        extent = analyzer.simplify(arith.add(arith.sub(dom.hi, dom.lo), 1))
        if preserve_unit_loops or arith.as_int(extent) != 1:
            bits = max(dt.bits(dom.lo.dtype), dt.bits(extent.dtype))
            var = tir.Var(f"ax{len(loops)}", f"int{bits}")
            loops.append((var, extent))
            value = arith.add(arith.cast(var.dtype, dom.lo), var)
            analyzer.bind(var, 0, extent)
        else:
            value = dom.lo
        value = arith.cast(iv.var.dtype, value)
        values.append(value)
        if bound is not None:
            low = arith.compare("ge", value, bound.lo)
            if not analyzer.can_prove(low):
                predicate = arith.logical_and(predicate, low)
            high = arith.compare("lt", value, arith.add(bound.hi, 1))
            if not analyzer.can_prove(high):
                predicate = arith.logical_and(predicate, high)
    realize = tir.BlockRealize(tuple(values), analyzer.simplify(predicate), block)
    return realize, loops
