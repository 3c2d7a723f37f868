"""Loop transformations: split, fuse, reorder (merge and add_unit_loop: merge.py).

They change the loop nest above blocks without moving any computation: block
bindings are rewritten in terms of the new loops and put back in normal form
(`dsl.iter_map`), which is how TVM prints them (`i_0 * 4 + i_1`,
`i_j_fused // 6`, `i_j_fused % 32 // 8`).
"""

from __future__ import annotations

import dataclasses

from tvmlite.dsl import arith, canonical, tir
from tvmlite.dsl.analysis import free_vars, substitute, uses
from tvmlite.dsl.iter_map import Extent, as_extent, simplify_bindings
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    Node,
    ScheduleMutator,
    Tree,
    finish,
    merge_reuse,
)


def loop_name(loop: tir.For) -> str:
    return f"loop '{loop.loop_var.name}'"


def check_plain_loop(loop: tir.For, primitive: str) -> None:
    """The loop starts at 0 and carries no annotation or thread binding."""
    if loop.annotations or loop.kind == tir.THREAD_BINDING:
        raise ScheduleError(f"{primitive}: {loop_name(loop)} has an annotation or thread binding")
    if arith.as_int(loop.min) != 0:
        raise ScheduleError(f"{primitive}: {loop_name(loop)} does not start at 0")


def const_extent(loop: tir.For, primitive: str) -> int:
    extent = arith.as_int(loop.extent)
    if extent is None:
        raise ScheduleError(f"{primitive}: {loop_name(loop)} has a non-constant extent")
    return extent


def loop_ranges(tree: Tree, node: Node) -> dict[tir.Var, tuple[int, Extent]]:
    """(min, extent) of every loop above `node` in its scope that starts at a
    constant; the extent may be symbolic (`dsl.iter_map`)."""
    out = {}
    for lp in tree.loops_above(node):
        lo = arith.as_int(lp.min)
        if lo is not None:
            out[lp.loop_var] = (lo, as_extent(lp.extent))
    return out


class _SimplifyBindings(ScheduleMutator):
    """Puts the bindings of every block realize in normal form over the loops
    around it (`iters`, extended by the loops met on the way down)."""

    def __init__(self, iters: dict[tir.Var, tuple[int, Extent]], preserve_unit_iters: bool) -> None:
        super().__init__()
        self.iters = dict(iters)
        self.preserve = preserve_unit_iters

    def visit_For(self, s: tir.For) -> tir.Stmt:
        lo = arith.as_int(s.min)
        if lo is not None:
            self.iters[s.loop_var] = (lo, as_extent(s.extent))
        out = super().visit_For(s)
        self.iters.pop(s.loop_var, None)
        return out

    def visit_BlockRealize(self, s: tir.BlockRealize) -> tir.Stmt:
        s = super().visit_BlockRealize(s)
        if not s.iter_values or _bounds_a_part(s):
            return s
        values = simplify_bindings(s.iter_values, self.iters, self.preserve)
        if values == s.iter_values:
            return s
        return dataclasses.replace(s, iter_values=values)


def _bounds_a_part(realize: tir.BlockRealize) -> bool:
    """Whether the predicate bounds part of a binding (a split of a loop that an
    earlier non-dividing split left under a predicate): TVM's iteration-map
    simplifier then gives up and the bindings stay as substituted."""
    terms, stack = [], [realize.predicate]
    while stack:
        e = stack.pop()
        if isinstance(e, tir.BinaryOp) and e.kind == "and":
            stack += [e.a, e.b]
        elif isinstance(e, tir.BinaryOp) and e.kind == "lt":
            terms.append(set(free_vars(e.a)))
    for value in realize.iter_values:
        used = set(free_vars(value))
        if any(t and t < used for t in terms):
            return True
    return False


def simplify_under(
    stmt: tir.Stmt, iters: dict[tir.Var, tuple[int, Extent]], preserve_unit_iters: bool
) -> tuple[tir.Stmt, dict[int, tir.Block]]:
    m = _SimplifyBindings(iters, preserve_unit_iters)
    return m.visit_stmt(stmt), m.reuse


def substitute_stmt(
    stmt: tir.Stmt, mapping: dict[tir.Var, tir.PrimExpr]
) -> tuple[tir.Stmt, dict[int, tir.Block]]:
    m = ScheduleMutator()
    m.var_remap.update(mapping)
    return m.visit_stmt(stmt), m.reuse


# ---------------------------------------------------------------- split


def split(
    tree: Tree,
    loop: tir.For,
    factors: list[int | None],
    preserve_unit_iters: bool,
    disable_predication: bool,
) -> tuple[Change, list[tir.Var]]:
    check_plain_loop(loop, "split")
    if not isinstance(factors, (list, tuple)) or not factors:
        raise ScheduleError(f"split: the factors of {loop_name(loop)} must be a non-empty list")
    values: list[Extent | None] = []
    for f in factors:
        if f is None or (isinstance(f, int) and not isinstance(f, bool) and f == -1):
            values.append(None)
        elif isinstance(f, int) and not isinstance(f, bool) and f > 0:
            values.append(f)
        elif isinstance(f, tir.IntImm) and f.value > 0:
            values.append(f.value)
        else:
            raise ScheduleError(
                f"split: factor {f!r} of {loop_name(loop)} is not a positive integer or None"
            )
    if values.count(None) > 1:
        raise ScheduleError(
            f"split: only one factor can be None (or -1), splitting {loop_name(loop)}"
        )
    known = 1
    for v in values:
        known *= v or 1
    extent = arith.as_int(loop.extent)
    analyzer = canonical.Analyzer()
    if None in values:
        # The inferred factor covers the extent: `(n + 15) // 16` when symbolic.
        inferred = analyzer.simplify(arith.floordiv(arith.add(loop.extent, known - 1), known))
        values[values.index(None)] = as_extent(inferred)
    elif extent is not None and known < extent:
        raise ScheduleError(
            f"split: the product of factors {values} is smaller than the extent {extent} "
            f"of {loop_name(loop)}"
        )
    dtype = loop.loop_var.dtype
    new_vars = [tir.Var(f"{loop.loop_var.name}_{i}", dtype) for i in range(len(values))]
    value: tir.PrimExpr = arith.const(0, dtype)
    for var, f in zip(new_vars, values, strict=True):
        value = arith.add(arith.mul(value, f), var)
    # Block bindings get the value in normal form (`i_0 * 16 + i_1 * 8 + i_2`),
    # predicates and other uses as built, as TVM prints them.
    new_iters = {v: (0, f) for v, f in zip(new_vars, values, strict=True)}
    (normal,) = simplify_bindings((value,), new_iters, preserve_unit_iters)
    bindings = _SubstituteBindings({loop.loop_var: normal})
    body, reuse1 = substitute_stmt(bindings.visit_stmt(loop.body), {loop.loop_var: value})
    reuse1 = merge_reuse(bindings.reuse, reuse1)
    for var, f in zip(new_vars, values, strict=True):
        analyzer.bind(var, 0, f)
    predicate = arith.compare("lt", value, loop.extent)
    if not disable_predication and not analyzer.can_prove(predicate):
        body, reuse2 = _append_predicate(body, predicate)
        reuse1 = merge_reuse(reuse1, reuse2)
    for var, f in reversed(list(zip(new_vars, values, strict=True))):
        size = f if isinstance(f, tir.PrimExpr) else arith.const(f, dtype)
        body = tir.For(var, arith.const(0, dtype), size, tir.SERIAL, body)
    iters = loop_ranges(tree, loop)
    body, reuse3 = simplify_under(body, iters, preserve_unit_iters)
    return finish(tree, {id(loop): body}, reuse1, reuse3), new_vars


class _SubstituteBindings(ScheduleMutator):
    """Substitutes vars in block bindings only."""

    def __init__(self, mapping: dict[tir.Var, tir.PrimExpr]) -> None:
        super().__init__()
        self.mapping = mapping

    def visit_BlockRealize(self, s: tir.BlockRealize) -> tir.Stmt:
        s = super().visit_BlockRealize(s)
        values = tuple(substitute(v, self.mapping) for v in s.iter_values)
        return dataclasses.replace(s, iter_values=values)


class _AppendPredicate(ScheduleMutator):
    def __init__(self, predicate: tir.PrimExpr) -> None:
        super().__init__()
        self.predicate = predicate

    def visit_BlockRealize(self, s: tir.BlockRealize) -> tir.Stmt:
        return dataclasses.replace(s, predicate=arith.logical_and(s.predicate, self.predicate))


def _append_predicate(
    body: tir.Stmt, predicate: tir.PrimExpr
) -> tuple[tir.Stmt, dict[int, tir.Block]]:
    m = _AppendPredicate(predicate)
    return m.visit_stmt(body), m.reuse


# ---------------------------------------------------------------- fuse


def fuse(tree: Tree, loops: list[tir.For], preserve_unit_iters: bool) -> tuple[Change, tir.Var]:
    outer_vars: dict[tir.Var, None] = {}
    for i, lp in enumerate(loops):
        check_plain_loop(lp, "fuse")
        if i > 0:
            outer = loops[i - 1]
            if tree.parent_of(lp) is not outer:
                raise ScheduleError(
                    f"fuse: the outer {loop_name(outer)} is not the parent of the inner "
                    f"{loop_name(lp)}"
                )
            if outer.body is not lp:
                raise ScheduleError(
                    f"fuse: the inner {loop_name(lp)} is not the only child of the outer "
                    f"{loop_name(outer)}"
                )
        if uses(lp.extent, outer_vars):
            raise ScheduleError(f"fuse: the extent of {loop_name(lp)} depends on an outer loop")
        outer_vars[lp.loop_var] = None
    dtype = loops[0].loop_var.dtype
    name = "_".join(lp.loop_var.name for lp in loops) + "_fused"
    fused = tir.Var(name, dtype)
    mapping: dict[tir.Var, tir.PrimExpr] = {}
    lower: tir.PrimExpr = arith.const(1, dtype)
    analyzer = canonical.Analyzer()
    for lp in reversed(loops[1:]):
        next_lower = analyzer.canonical_simplify(arith.mul(lp.extent, lower))
        if arith.as_int(lp.extent) == 1:
            mapping[lp.loop_var] = arith.const(0, dtype)
        else:
            mapping[lp.loop_var] = arith.floordiv(arith.floormod(fused, next_lower), lower)
        lower = next_lower
    first = loops[0]
    if arith.as_int(first.extent) == 1:
        mapping[first.loop_var] = arith.const(0, dtype)
    else:
        mapping[first.loop_var] = arith.floordiv(fused, lower)
    body, reuse1 = substitute_stmt(loops[-1].body, mapping)
    extent: tir.PrimExpr = arith.const(1, dtype)
    for lp in loops:
        extent = arith.mul(extent, lp.extent)
    extent = analyzer.simplify(extent)
    new_loop = tir.For(fused, arith.const(0, dtype), extent, tir.SERIAL, body)
    iters = loop_ranges(tree, loops[0])
    new_loop, reuse2 = simplify_under(new_loop, iters, preserve_unit_iters)
    return finish(tree, {id(loops[0]): new_loop}, reuse1, reuse2), fused


# ---------------------------------------------------------------- reorder


def reorder(tree: Tree, ordered: list[tir.For]) -> Change | None:
    if len(ordered) <= 1:
        return None
    seen: dict[int, tir.For] = {}
    for lp in ordered:
        if id(lp) in seen:
            raise ScheduleError(f"reorder: {loop_name(lp)} appears more than once")
        seen[id(lp)] = lp
    # Walk up from each loop to its scope block; the walks must meet in one chain.
    visited: set[int] = set()
    top: tir.For | None = None
    bottom: tir.For = ordered[0]
    scope_seen = False
    for index, lp in enumerate(ordered):
        if id(lp) in visited:
            continue
        node: Node | None = lp
        while True:
            if node is None or isinstance(node, tir.Block):
                if scope_seen:
                    raise ScheduleError(
                        f"reorder: the loops are not in one chain: {loop_name(lp)} is not in "
                        f"the loop nest of {loop_name(ordered[0])}"
                    )
                scope_seen = True
                break
            if id(node) in visited:
                if node is not bottom:
                    raise ScheduleError(
                        f"reorder: the loops are not in one chain: {loop_name(node)} has "
                        "more than one child statement on the way"
                    )
                bottom = lp
                break
            visited.add(id(node))
            if index == 0 and id(node) in seen:
                top = node
            node = tree.parent_of(node)
        if index == 0:
            bottom = lp
    assert top is not None
    chain: list[tir.For] = []
    node = bottom
    while node is not top:
        parent = tree.parent_of(node)
        assert isinstance(parent, tir.For)
        if parent.body is not node:
            raise ScheduleError(
                f"reorder: the loops are not in one chain: {loop_name(parent)} has more "
                "than one child statement"
            )
        chain.append(node)
        node = parent
    chain.append(top)
    _check_reorder_blocks(tree, top)
    # Rebuild the chain bottom-up, taking the requested loops in reverse order.
    inner_vars: dict[tir.Var, None] = {}
    pending = list(ordered)
    new: tir.Stmt | None = None
    for lp in chain:
        copy = pending.pop() if id(lp) in seen else lp
        body = lp.body if new is None else new
        if uses(copy.min, inner_vars) or uses(copy.extent, inner_vars):
            raise ScheduleError(
                f"reorder: the range of outer {loop_name(copy)} would depend on an inner loop"
            )
        inner_vars[copy.loop_var] = None
        new = dataclasses.replace(copy, body=body)
    assert new is not None
    return finish(tree, {id(top): new})


def _check_reorder_blocks(tree: Tree, top: tir.For) -> None:
    for block in _blocks_under(top):
        for iv in block.iter_vars:
            if iv.kind not in (tir.SPATIAL, tir.REDUCE):
                raise ScheduleError(
                    f"reorder: block '{block.name}' under the loops has an iteration axis "
                    f"'{iv.var.name}' that is neither spatial nor reduction"
                )


def _blocks_under(s: tir.Stmt) -> list[tir.Block]:
    from tvmlite.lowering.schedule.tree import realizes_under

    return [r.block for r in realizes_under(s.body if isinstance(s, tir.For) else s)]
