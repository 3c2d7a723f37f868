"""Generic pre-order traversal of any IR (modules, functions, statements,
expressions, struct info), iterative so that deep IR never recurses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tvmlite.dsl.module import IRModule


def walk(root: Any) -> Iterator[Any]:
    """Every IR node reachable from `root`, parents before children, left to right.
    Containers (tuples, lists, dicts) are traversed but not yielded."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, IRModule):
            yield node
            stack.extend(reversed(list(node.functions.values())))
        elif isinstance(node, (tuple, list)):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            stack.extend(reversed([item for pair in node.items() for item in pair]))
        elif hasattr(node, "__dataclass_fields__"):
            yield node
            fields = node.__dataclass_fields__.values()
            stack.extend(reversed([getattr(node, f.name) for f in fields if f.name != "span"]))
