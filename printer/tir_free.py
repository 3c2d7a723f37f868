"""Where TVM declares what a function uses without defining it: a free buffer
(`A = T.Buffer((128,), ...)`) or var (`n = T.int32()`) is declared once, in the
innermost statement that holds every use of it, so that a buffer used in two sibling
loops is one buffer in the text too. `use_homes` finds that statement for every var
and buffer of a body; the statement printer asks it when it meets a free one."""

from __future__ import annotations

from typing import Any

from tvmlite.dsl import tir


def use_homes(body: tir.Stmt) -> dict[int, int]:
    """id of each var and buffer used in `body` -> id of the innermost statement that
    encloses all its uses."""
    parent: dict[int, int | None] = {id(body): None}
    depth: dict[int, int] = {id(body): 0}
    homes: dict[int, int] = {}
    stack: list[tuple[Any, int]] = [(body, id(body))]
    while stack:
        node, enclosing = stack.pop()
        if isinstance(node, tuple | list):
            stack.extend((item, enclosing) for item in node)
            continue
        if isinstance(node, tir.Stmt) and id(node) not in parent:
            parent[id(node)], depth[id(node)] = enclosing, depth[enclosing] + 1
            enclosing = id(node)
        if isinstance(node, tir.Var | tir.Buffer):
            known = homes.get(id(node))
            common = enclosing if known is None else _common(known, enclosing, parent, depth)
            homes[id(node)] = common
            if isinstance(node, tir.Var):
                continue
        fields = getattr(node, "__dataclass_fields__", None)
        if fields is not None:
            stack.extend((getattr(node, name), enclosing) for name in fields if name != "span")
    return homes


def _common(a: int, b: int, parent: dict[int, int | None], depth: dict[int, int]) -> int:
    while depth[a] > depth[b]:
        a = parent[a]  # type: ignore[assignment]
    while depth[b] > depth[a]:
        b = parent[b]  # type: ignore[assignment]
    while a != b:
        a, b = parent[a], parent[b]  # type: ignore[assignment]
    return a
