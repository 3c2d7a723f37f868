"""Where cache_read and cache_write put their copy stage, and what it copies.

TVM places the stage at the lowest point that separates the buffer's writer
from the related blocks (the readers for cache_read, the other readers for
cache_write): in the innermost statement sequence where, walking in program
order, the writer has been met and then a related block, right before the
subtree holding that related block. The loop (or scope block) owning that
sequence is where the stage goes, and it copies the writer's region relaxed
over the loops between the writer and that point. Without related blocks the
stage goes at the end of the scope; a read of a buffer no block of the scope
writes goes at its start.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import arith, canonical, tir
from tvmlite.lowering.schedule.regions import Interval, relaxed_region
from tvmlite.lowering.schedule.tree import Node, Tree, children


@dataclass
class Location:
    """The stage goes into the body of `node` (a loop or the scope block) at `position`."""

    node: Node
    position: int


class _Detector:
    def __init__(self, scope: tir.Block, block: tir.Block, related: list[tir.Block]) -> None:
        self.scope, self.block = scope, block
        self.related = {id(b) for b in related}
        self.seen_block = self.seen_related = False
        self.node: Node | None = None
        self.position = -1

    def visit(self, s: tir.Stmt | None) -> None:
        if s is None:
            return
        if isinstance(s, tir.SeqStmt):
            self.sequence(s.seq)
        elif isinstance(s, tir.BlockRealize):
            self.visit_block(s.block)
        elif isinstance(s, tir.For):
            self.visit(s.body)
            if self.seen_block and self.seen_related and self.node is None and self.position >= 0:
                self.node = s
        else:
            for child in children(s):
                self.visit(child)

    def sequence(self, items: tuple[tir.Stmt, ...]) -> None:
        outer_seen_block, self.seen_block = self.seen_block, False
        for i, item in enumerate(items):
            if self.position >= 0:
                break
            self.visit(item)
            if self.seen_block and self.seen_related and self.position < 0:
                self.position = i
                break
            if self.seen_related:
                break
        self.seen_block = self.seen_block or outer_seen_block

    def visit_block(self, block: tir.Block) -> None:
        if block is self.scope:
            self.visit(block.body)
            if self.seen_related and self.node is None:
                self.node = block
                if not self.seen_block and self.position < 0:
                    self.position = 0
        elif block is self.block:
            self.seen_block = True
        elif id(block) in self.related:
            self.seen_related = True


def locate(
    tree: Tree, scope: tir.Block, block: tir.Block | None, related: list[tir.Block]
) -> Location:
    """Where the stage of `block` (the buffer's writer, None for a function input)
    goes, given the `related` blocks."""
    if block is None:
        return Location(scope, 0)
    if not related:
        body = scope.body
        return Location(scope, len(body.seq) if isinstance(body, tir.SeqStmt) else 1)
    detector = _Detector(scope, block, related)
    detector.visit(tree.realize_of[id(scope)])
    if detector.node is None:  # the related blocks all come before the writer
        return Location(scope, 0)
    return Location(detector.node, max(detector.position, 0))


def copied_region(
    tree: Tree, block: tir.Block, region: tir.BufferRegion, at: Node
) -> list[Interval]:
    """`region` of `block` relaxed over the loops between `block` and `at`,
    clipped to the buffer."""
    loops, relaxing = [], True
    analyzer = canonical.Analyzer()
    for p in tree.ancestors(block):
        relaxing = relaxing and p is not at
        if isinstance(p, tir.For) and relaxing:
            loops.append(p)
        elif isinstance(p, tir.For):  # a loop around the stage: its variable stays
            analyzer.bind_range(p.loop_var, tir.Range(p.min, p.extent))
        elif not relaxing:  # so do the axes of the blocks around it
            for iv in p.iter_vars:
                analyzer.bind_range(iv.var, iv.dom)
    out = []
    bounds = relaxed_region(region, tree.realize_of[id(block)], loops, analyzer)
    for bound, extent in zip(bounds, region.buffer.shape, strict=True):
        zero = arith.const(0, extent.dtype)
        lo = analyzer.simplify(arith.maximum(bound.lo, zero))
        hi = analyzer.simplify(arith.minimum(bound.hi, arith.sub(extent, 1)))
        out.append(Interval(lo, hi))
    return out


def insert(body: tir.Stmt, position: int, stage: tir.Stmt) -> tir.Stmt:
    """`stage` put into `body` before its item `position` (a lone body counts as one)."""
    items = list(body.seq) if isinstance(body, tir.SeqStmt) else [body]
    items.insert(position, stage)
    return tir.seq(items)
