"""Dependences between the blocks of one scope: producers, consumers, outputs.

Within a scope block, child blocks run in program order. A block that reads a
buffer depends on every earlier block writing it (read-after-write); a block
that writes it depends on earlier writers (write-after-write) and readers
(write-after-read). Producers and consumers follow the RAW and WAW edges, as
in TVM's block scope.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import tir
from tvmlite.lowering.schedule.tree import Tree

RAW, WAW, WAR = "RAW", "WAW", "WAR"


@dataclass(frozen=True)
class Dep:
    src: tir.Block
    dst: tir.Block
    kind: str


class Scope:
    """The child blocks of a scope block and the dependences among them."""

    def __init__(self, tree: Tree, scope: tir.Block) -> None:
        self.block = scope
        self.children = _scope_children(tree, scope)
        self.deps: list[Dep] = []
        self.writers: dict[tir.Buffer, list[tir.Block]] = {}
        readers: dict[tir.Buffer, list[tir.Block]] = {}
        for block in self.children:
            for region in block.reads:
                for w in self.writers.get(region.buffer, []):
                    self._add(w, block, RAW)
            for region in block.writes:
                for w in self.writers.get(region.buffer, []):
                    self._add(w, block, WAW)
                for r in readers.get(region.buffer, []):
                    self._add(r, block, WAR)
            for region in block.reads:
                _append_once(readers.setdefault(region.buffer, []), block)
            for region in block.writes:
                _append_once(self.writers.setdefault(region.buffer, []), block)

    def _add(self, src: tir.Block, dst: tir.Block, kind: str) -> None:
        if src is dst:
            return
        if not any(d.src is src and d.dst is dst and d.kind == kind for d in self.deps):
            self.deps.append(Dep(src, dst, kind))

    def producers(self, block: tir.Block) -> list[tir.Block]:
        return _unique(d.src for d in self.deps if d.dst is block and d.kind in (RAW, WAW))

    def consumers(self, block: tir.Block) -> list[tir.Block]:
        return _unique(d.dst for d in self.deps if d.src is block and d.kind in (RAW, WAW))


def _append_once(items: list[tir.Block], block: tir.Block) -> None:
    if not any(b is block for b in items):
        items.append(block)


def _unique(blocks: object) -> list[tir.Block]:
    out: list[tir.Block] = []
    for b in blocks:
        _append_once(out, b)
    return out


def _scope_children(tree: Tree, scope: tir.Block) -> list[tir.Block]:
    """Blocks whose nearest enclosing block is `scope`, in program order."""
    return [
        b
        for b in tree.blocks
        if b is not scope and b is not tree.root and tree.scope_of(b) is scope
    ]


def scope_of(tree: Tree, block: tir.Block) -> Scope:
    return Scope(tree, tree.scope_of(block))


def producers(tree: Tree, block: tir.Block) -> list[tir.Block]:
    return scope_of(tree, block).producers(block)


def consumers(tree: Tree, block: tir.Block) -> list[tir.Block]:
    return scope_of(tree, block).consumers(block)


def output_blocks(tree: Tree, scope_block: tir.Block) -> list[tir.Block]:
    """Child blocks of the scope that write a buffer not allocated inside it."""
    scope = Scope(tree, scope_block)
    local = set(scope_block.alloc_buffers)
    return [b for b in scope.children if any(r.buffer not in local for r in b.writes)]
