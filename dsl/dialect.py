"""Which constructs a dialect cannot spell.

TVM 0.27 added statements the classic spelling has no words for: the flat
mutable binding (`x: T.float32 = v`, a `Bind`) and the statement-level
`T.alloc_buffer`. Printed in classic they come back as a let and a block
allocation, which compute the same thing but are different IR. Nor can classic
say `s_tir=True` of a function without blocks (classic derives the flag from the
blocks). Everything else converts both ways without loss.
"""

from __future__ import annotations

from typing import Any

from tvmlite.dsl import tir
from tvmlite.dsl.walk import walk


def tvm027_only(root: Any) -> list[str]:
    """Descriptions of the constructs under `root` that classic cannot spell."""
    found: list[str] = []
    for node in walk(root):
        if isinstance(node, tir.Bind):
            found.append(f"flat binding of '{node.var.name}' (classic has only lets)")
        elif isinstance(node, tir.AllocBuffer) and node.form == "alloc_buffer":
            found.append(f"statement-level T.alloc_buffer of '{node.buffer.name}'")
        elif isinstance(node, tir.PrimFunc) and node.s_tir and not _has_block(node.body):
            found.append("s_tir=True on a function without blocks")
    return found


def _has_block(stmt: tir.Stmt) -> bool:
    return any(isinstance(node, tir.Block) for node in walk(stmt))
