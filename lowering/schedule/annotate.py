"""Loop kinds (parallel, vectorize, unroll) and annotations of loops and blocks.

A loop may run in parallel or as vector lanes only when no block under it
carries a dependence across its iterations: every block axis bound to the loop
must be spatial, and every block under it must be a *complete* block (spatial
only, reads none of what it writes) or a *reduction* block (with `T.init()`,
its reduce axes not indexing the output), as TVM requires.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvmlite.dsl import tir
from tvmlite.dsl.analysis import uses
from tvmlite.lowering.schedule.loops import loop_name
from tvmlite.lowering.schedule.state import ScheduleError
from tvmlite.lowering.schedule.tree import (
    Change,
    Node,
    Tree,
    finish,
    realizes_under,
    replace_block,
)


def set_for_kind(tree: Tree, loop: tir.For, kind: str, primitive: str) -> Change:
    if kind != tir.UNROLLED:
        for realize in realizes_under(loop.body):
            _check_compact(realize.block, loop, primitive)
            _check_parallel_axes(realize, loop, primitive)
    new = dataclasses.replace(loop, kind=kind, thread="")
    return finish(tree, {id(loop): new})


def _check_compact(block: tir.Block, loop: tir.For, primitive: str) -> None:
    written = {r.buffer for r in block.writes}
    complete = all(iv.kind == tir.SPATIAL for iv in block.iter_vars) and not any(
        r.buffer in written for r in block.reads
    )
    if complete or is_reduction_block(block):
        return
    raise ScheduleError(
        f"{primitive}: {loop_name(loop)} cannot be changed: block '{block.name}' under it is "
        "neither a complete block (spatial axes only, reading nothing it writes) nor a "
        "reduction block (with T.init())"
    )


def is_reduction_block(block: tir.Block) -> bool:
    """Has `T.init()`, spatial/reduce axes only, reduce axes not indexing outputs."""
    if block.init is None:
        return False
    if any(iv.kind not in (tir.SPATIAL, tir.REDUCE) for iv in block.iter_vars):
        return False
    reduce_vars = {iv.var: None for iv in block.iter_vars if iv.kind == tir.REDUCE}
    for region in block.writes:
        for r in region.region:
            if uses(r.min, reduce_vars) or uses(r.extent, reduce_vars):
                return False
    return True


def _check_parallel_axes(realize: tir.BlockRealize, loop: tir.For, primitive: str) -> None:
    var = {loop.loop_var: None}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values, strict=True):
        if uses(value, var) and iv.kind != tir.SPATIAL:
            raise ScheduleError(
                f"{primitive}: {loop_name(loop)} is bound to the {iv.kind} axis "
                f"'{iv.var.name}' of block '{realize.block.name}': its iterations depend on "
                "each other"
            )


def _check_value(value: Any, node: Node) -> Any:
    if isinstance(value, bool) or isinstance(value, (int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_check_value(v, node) for v in value)
    if isinstance(value, tir.PrimExpr):
        return value
    raise ScheduleError(
        f"annotate: unsupported annotation value {value!r} for {_what(node)} (expected a str, "
        "int, float, bool, PrimExpr or a list of them)"
    )


def _what(node: Node) -> str:
    return loop_name(node) if isinstance(node, tir.For) else f"block '{node.name}'"


def annotate(tree: Tree, node: Node, key: str, value: Any) -> Change | None:
    """Add the annotation; a key already present keeps its value (as in TVM)."""
    if not isinstance(key, str):
        raise ScheduleError(f"annotate: ann_key of {_what(node)} must be a string, got {key!r}")
    value = _check_value(value, node)
    if any(k == key for k, _ in node.annotations):
        return None
    items = [*node.annotations, (key, value)]
    new = dataclasses.replace(node, annotations=tuple(sorted(items, key=lambda kv: kv[0])))
    return _swap(tree, node, new)


def unannotate(tree: Tree, node: Node, key: str) -> Change:
    if not any(k == key for k, _ in node.annotations):
        raise ScheduleError(f"unannotate: {_what(node)} has no annotation '{key}'")
    new = dataclasses.replace(
        node, annotations=tuple(kv for kv in node.annotations if kv[0] != key)
    )
    return _swap(tree, node, new)


def _swap(tree: Tree, node: Node, new: Node) -> Change:
    if isinstance(node, tir.Block):
        return replace_block(tree, node, new)
    return finish(tree, {id(node): new})
