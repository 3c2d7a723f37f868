"""tirx scope ids that agree (part of TVM's well-formedness check of tirx functions).

`bx, by = T.cta_id([8, 4])` says there are 32 ctas in the kernel; `T.warp_id([4])`
and `T.lane_id([32])` say a cta holds 4 warps of 32 threads, so a `T.thread_id`
of the same function must count 128. Each statement binds a (parent, child) pair
of scopes (`tir.SCOPE_IDS`) to the product of its extents; two bindings of one
pair, or a binding and the product along a chain of others, must agree, and a
`preferred=` list has one extent per id. Deferred extents (`T.thread_id()`) and
symbolic ones take no part.
"""

from __future__ import annotations

import math

from tvmlite.diagnostics import VerifyError
from tvmlite.dsl import tir
from tvmlite.dsl.arith import as_int
from tvmlite.dsl.walk import walk

Pair = tuple[str, str]


def check_scope_ids(func: tir.PrimFunc, filename: str | None) -> None:
    """Raise a located VerifyError where the scope ids of `func` disagree."""
    known: dict[Pair, tuple[int, str]] = {}  # pair -> (count, how it is known)
    for node in walk(func.body):
        if not isinstance(node, tir.ScopeIdDef) or node.extents is None:
            continue
        name = f"T.{node.kind}([{', '.join(map(_text, node.extents))}])"
        if node.preferred is not None and len(node.preferred) != len(node.extents):
            raise VerifyError(
                f"{name}: preferred= has {len(node.preferred)} extents, the ids "
                f"{len(node.extents)}",
                node.span,
                filename,
            )
        counts = [as_int(e) for e in node.extents]
        if any(c is None for c in counts):
            continue
        pair = tir.SCOPE_IDS[node.kind]
        problem = _add(known, pair, math.prod(counts), name)  # type: ignore[arg-type]
        if problem is not None:
            raise VerifyError(f"inconsistent scope ids: {problem}", node.span, filename)


def _add(known: dict[Pair, tuple[int, str]], pair: Pair, count: int, how: str) -> str | None:
    """Record that `pair` counts `count` (and every product through it); the
    disagreement it makes, if any."""
    pending = [(pair, count, how)]
    while pending:
        (parent, child), n, why = pending.pop()
        found = known.get((parent, child))
        if found is not None:
            if found[0] != n:
                here, there = f"{why} {_give(why)} {n}", f"{found[1]} {_give(found[1])}"
                return f"{here} {child}s per {parent}, {there} {found[0]}"
            continue
        known[(parent, child)] = (n, why)
        for (a, b), (m, other) in list(known.items()):
            if b == parent and a != child:  # a -> parent -> child
                pending.append(((a, child), m * n, f"{other} and {why}"))
            if a == child and b != parent:  # parent -> child -> b
                pending.append(((parent, b), n * m, f"{why} and {other}"))
    return None


def _give(who: str) -> str:
    return "give" if " and " in who else "gives"


def _text(e: tir.PrimExpr) -> str:
    value = as_int(e)
    return str(value) if value is not None else "..."
