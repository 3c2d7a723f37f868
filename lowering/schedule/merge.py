"""merge and add_unit_loop: loop nests joined, or a loop of extent 1 added."""

from __future__ import annotations

from tvmlite.dsl import arith, canonical, tir
from tvmlite.lowering.schedule import navigate
from tvmlite.lowering.schedule.loops import check_plain_loop, loop_name, substitute_stmt
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import Change, Node, Tree, all_realizes, finish, stmt_of


def add_unit_loop(tree: Tree, node: Node) -> tuple[Change, tir.Var]:
    var = tir.Var("u", "int32")
    stmt = stmt_of(tree, node)
    new = tir.For(var, arith.const(0, "int32"), arith.const(1, "int32"), tir.SERIAL, stmt)
    return finish(tree, {id(stmt): new}), var


def merge(tree: Tree, loops: list[tir.For]) -> tuple[Change, tir.Var]:
    """Merge the loop nests ending at `loops` (same depth and extents below their
    lowest common ancestor) into one new nest (`_m` loops) that runs their bodies
    in order, placed where the last nest was."""
    if len(loops) < 2:
        raise ScheduleError("merge needs at least two loops")
    for i, lp in enumerate(loops):
        if any(lp is other for other in loops[:i]):
            raise ScheduleError(f"merge: {loop_name(lp)} appears more than once")
    _check_merge_order(tree, loops)
    lca = _lowest_common_ancestor(tree, loops)
    scope = tree.scope_of(loops[0])
    if isinstance(lca, tir.Block) and lca.init is not None:
        in_init = {id(r.block) for r in all_realizes(lca.init)}
        for lp in loops:
            if any(id(r.block) in in_init for r in all_realizes(lp)):
                raise ScheduleError(
                    f"merge: {loop_name(lp)} is in the init of block '{lca.name}', the others "
                    "are not"
                )
    nests = []  # per loop: the loops from it up to the common ancestor, innermost first
    for lp in loops:
        if tree.scope_of(lp) is not scope:
            raise ScheduleError("merge: the loops are not under the same block scope")
        nest: list[tir.For] = []
        node: Node | None = lp
        while node is not None and node is not lca:
            if isinstance(node, tir.For):
                check_plain_loop(node, "merge")
                nest.append(node)
            node = tree.parent_of(node)
        for inner, outer in zip(nest, nest[1:], strict=False):
            if outer.body is not inner:
                raise ScheduleError(
                    f"merge: {loop_name(inner)} is not the only child of {loop_name(outer)}"
                )
        nests.append(nest)
    analyzer = canonical.Analyzer()
    for lp, nest in zip(loops[1:], nests[1:], strict=True):
        if len(nest) != len(nests[0]):
            raise ScheduleError(
                f"merge: {loop_name(loops[0])} and {loop_name(lp)} are at different depths "
                "below their common ancestor"
            )
        for a, b in zip(nest, nests[0], strict=True):
            if not analyzer.can_prove_equal(a.extent, b.extent):
                raise ScheduleError(
                    f"merge: {loop_name(a)} and {loop_name(b)} have different extents"
                )
    new_vars = [tir.Var(f"{lp.loop_var.name}_m", lp.loop_var.dtype) for lp in nests[0]]
    bodies, reuses = [], []
    for nest in nests:
        mapping = {lp.loop_var: v for lp, v in zip(nest, new_vars, strict=True)}
        body, reuse = substitute_stmt(nest[0].body, mapping)
        bodies.append(body)
        reuses.append(reuse)
    merged: tir.Stmt = tir.seq(bodies)
    for var, lp in zip(new_vars, nests[0], strict=True):
        merged = tir.For(var, arith.const(0, var.dtype), lp.extent, tir.SERIAL, merged)
    removed = tuple(nest[-1] for nest in nests[:-1])
    change = finish(tree, {id(nests[-1][-1]): merged}, *reuses, removed=removed)
    return change, new_vars[0]


def _check_merge_order(tree: Tree, loops: list[tir.For]) -> None:
    """The merged nest stands where the last loop's nest was and runs the nests'
    bodies in the order given: every dependence between blocks of the scope must
    still go forward in the new program order."""
    scope = navigate.Scope(tree, tree.scope_of(loops[0]))
    merged = [[r.block for r in all_realizes(lp)] for lp in loops]
    moved = {id(b) for nest in merged for b in nest}
    order = [b for b in scope.children if id(b) not in moved]
    anchor = next(
        (i for i, b in enumerate(scope.children) if any(b is m for m in merged[-1])), None
    )
    before = sum(1 for b in scope.children[: anchor or 0] if id(b) not in moved)
    order[before:before] = [b for nest in merged for b in nest]
    position = {id(b): i for i, b in enumerate(order)}
    for dep in scope.deps:
        if position.get(id(dep.src), -1) > position.get(id(dep.dst), -1):
            raise ScheduleError(
                f"merge: block '{dep.dst.name}' depends on block '{dep.src.name}', which "
                "would run after it in the merged loop"
            )


def _lowest_common_ancestor(tree: Tree, nodes: list[Node]) -> Node:
    paths = [[*reversed(tree.ancestors(n)), n] for n in nodes]
    lca = paths[0][0]
    for i in range(min(len(p) for p in paths)):
        if all(p[i] is paths[0][i] for p in paths):
            lca = paths[0][i]
        else:
            break
    return lca
