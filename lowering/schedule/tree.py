"""The loop/block tree of one prim function, as schedules see it.

TVM's schedule state keeps a tree of "srefs": one per loop and per block, each
pointing at its parent loop or block. IR nodes here are immutable and carry no
parent links, so `Tree` indexes a function once per version: parents, the
realize of each block, loops by their variable, blocks by name. Primitives ask
it where a node sits and build the replacement; the schedule state then swaps
the new subtree in (`replace`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from tvmlite.dsl import tir
from tvmlite.dsl.canonical import Analyzer
from tvmlite.dsl.tir_mutator import StmtExprMutator

Node = tir.For | tir.Block  # what handles and the tree name


class Tree:
    """Parents and lookups for the For and Block nodes of `func`."""

    def __init__(self, func: tir.PrimFunc) -> None:
        self.func = func
        self.parent: dict[int, Node | None] = {}
        self.realize_of: dict[int, tir.BlockRealize] = {}
        self.loop_of: dict[tir.Var, tir.For] = {}
        self.blocks: list[tir.Block] = []
        self.nodes: dict[int, Node] = {}
        root = func.body
        if not isinstance(root, tir.BlockRealize):
            self.root = None
            self._walk(root, None)
        else:
            self.root = root.block
            self._walk(root, None)

    def _walk(self, s: tir.Stmt | None, parent: Node | None) -> None:
        if s is None:
            return
        if isinstance(s, tir.For):
            self.parent[id(s)] = parent
            self.nodes[id(s)] = s
            self.loop_of[s.loop_var] = s
            self._walk(s.body, s)
        elif isinstance(s, tir.BlockRealize):
            block = s.block
            self.parent[id(block)] = parent
            self.nodes[id(block)] = block
            self.realize_of[id(block)] = s
            self.blocks.append(block)
            self._walk(block.init, block)
            self._walk(block.body, block)
        else:
            for child in children(s):
                self._walk(child, parent)

    # ------------------------------------------------------------ queries

    def contains(self, node: Node) -> bool:
        return self.nodes.get(id(node)) is node

    def parent_of(self, node: Node) -> Node | None:
        return self.parent[id(node)]

    def ancestors(self, node: Node) -> list[Node]:
        """Parents of `node`, innermost first."""
        out = []
        p = self.parent[id(node)]
        while p is not None:
            out.append(p)
            p = self.parent[id(p)]
        return out

    def scope_of(self, node: Node) -> tir.Block:
        """The nearest enclosing block."""
        for p in self.ancestors(node):
            if isinstance(p, tir.Block):
                return p
        raise AssertionError("node outside the root block")

    def loops_above(self, node: Node) -> list[tir.For]:
        """Loops between `node` and its scope block, outermost first."""
        out = []
        for p in self.ancestors(node):
            if isinstance(p, tir.Block):
                break
            out.append(p)
        return out[::-1]

    def blocks_named(self, name: str) -> list[tir.Block]:
        return [b for b in self.blocks if b.name == name]

    def child_blocks(self, node: Node) -> list[tir.Block]:
        """Blocks directly under `node` (not inside another block), in order."""
        out: list[tir.Block] = []
        body = node.body if isinstance(node, tir.For) else node.body
        _collect_blocks(body, out)
        if isinstance(node, tir.Block) and node.init is not None:
            pass
        return out

    def is_ancestor(self, outer: Node, inner: Node) -> bool:
        return any(p is outer for p in self.ancestors(inner))


def children(s: tir.Stmt) -> Iterator[tir.Stmt]:
    """Direct sub-statements of a statement other than For/BlockRealize."""
    if isinstance(s, tir.SeqStmt):
        yield from s.seq
    elif isinstance(s, (tir.LetStmt, tir.While)):
        yield s.body
    elif isinstance(s, tir.AttrStmt) and s.body is not None:
        yield s.body
    elif isinstance(s, tir.IfThenElse):
        yield s.then_case
        if s.else_case is not None:
            yield s.else_case


def _collect_blocks(s: tir.Stmt, out: list[tir.Block]) -> None:
    if isinstance(s, tir.BlockRealize):
        out.append(s.block)
    elif isinstance(s, tir.For):
        _collect_blocks(s.body, out)
    else:
        for child in children(s):
            _collect_blocks(child, out)


def realizes_under(s: tir.Stmt) -> list[tir.BlockRealize]:
    """Block realizes directly under `s` (not nested in another block)."""
    out: list[tir.BlockRealize] = []
    _collect_realizes(s, out)
    return out


def all_realizes(s: tir.Stmt) -> list[tir.BlockRealize]:
    """Every block realize under `s`, nested ones included."""
    out: list[tir.BlockRealize] = []
    stack = realizes_under(s)
    while stack:
        r = stack.pop(0)
        out.append(r)
        stack.extend(realizes_under(r.block.body))
    return out


def _collect_realizes(s: tir.Stmt, out: list[tir.BlockRealize]) -> None:
    if isinstance(s, tir.BlockRealize):
        out.append(s)
    elif isinstance(s, tir.For):
        _collect_realizes(s.body, out)
    else:
        for child in children(s):
            _collect_realizes(child, out)


class ScheduleMutator(StmtExprMutator):
    """A mutator that records which blocks it rebuilt (`reuse`: id of the old
    block -> new block), so handles to them follow; primitives build on it."""

    def __init__(self) -> None:
        super().__init__()
        self.reuse: dict[int, tir.Block] = {}

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        new = super().visit_Block(s)
        if new is not s:
            self.reuse[id(s)] = new
        return new


class SubstituteSimplify(ScheduleMutator):
    """Substitutes vars, simplifying every expression that changed (as TVM's
    schedule-time substitution does)."""

    def __init__(self, mapping: dict[tir.Var, tir.PrimExpr], analyzer: Analyzer) -> None:
        super().__init__()
        self.var_remap.update(mapping)
        self.analyzer = analyzer

    def visit_expr(self, e: tir.PrimExpr) -> tir.PrimExpr:
        out = super().visit_expr(e)
        return out if out is e else self.analyzer.simplify(out)


class _Replace(ScheduleMutator):
    def __init__(self, targets: dict[int, tir.Stmt], removed: set[int]) -> None:
        super().__init__()
        self.targets = targets
        self.removed = removed

    def visit_stmt(self, s: tir.Stmt) -> tir.Stmt:
        new = self.targets.get(id(s))
        if new is not None:
            return new
        return super().visit_stmt(s)

    def visit_SeqStmt(self, s: tir.SeqStmt) -> tir.Stmt:
        # Rebuilt sequences are flattened: a replacement may itself be a sequence.
        items = [self.visit_stmt(x) for x in s.seq if id(x) not in self.removed]
        if len(items) == len(s.seq) and all(a is b for a, b in zip(items, s.seq, strict=True)):
            return s
        return tir.seq(items)


def replace(
    func: tir.PrimFunc, targets: dict[int, tir.Stmt], removed: tuple[tir.Stmt, ...] = ()
) -> tuple[tir.PrimFunc, dict[int, tir.Block]]:
    """`func` with each statement whose id is a key replaced by its value and the
    `removed` statements dropped from their sequences, and the blocks rebuilt on
    the way (old id -> new block)."""
    body, reuse = replace_in(func.body, targets, removed)
    new = func if body is func.body else _with_body(func, body)
    return new, reuse


def replace_in(
    stmt: tir.Stmt, targets: dict[int, tir.Stmt], removed: tuple[tir.Stmt, ...] = ()
) -> tuple[tir.Stmt, dict[int, tir.Block]]:
    """`replace` within one statement."""
    mutator = _Replace(targets, {id(s) for s in removed})
    return mutator.visit_stmt(stmt), mutator.reuse


def _with_body(func: tir.PrimFunc, body: tir.Stmt) -> tir.PrimFunc:
    return dataclasses.replace(func, body=body)


@dataclass
class Change:
    """What a primitive produced: the new function and the blocks it rebuilt (id
    of the old block -> new block), so that handles follow them."""

    func: tir.PrimFunc
    reuse: dict[int, tir.Block] = field(default_factory=dict)


def merge_reuse(*maps: dict[int, tir.Block]) -> dict[int, tir.Block]:
    """Compose reuse maps applied one after the other."""
    out: dict[int, tir.Block] = {}
    for m in maps:
        for old, new in list(out.items()):
            if id(new) in m:
                out[old] = m[id(new)]
        for old, new in m.items():
            out.setdefault(old, new)
    return out


def finish(
    tree: Tree,
    targets: dict[int, tir.Stmt],
    *reuse: dict[int, tir.Block],
    removed: tuple[tir.Stmt, ...] = (),
) -> Change:
    """Swap `targets` into the function, drop `removed`, and gather the reuse maps."""
    func, path_reuse = replace(tree.func, targets, removed)
    return Change(func, merge_reuse(*reuse, path_reuse))


def replace_block(
    tree: Tree, block: tir.Block, new: tir.Block, *reuse: dict[int, tir.Block]
) -> Change:
    """Replace `block` (a scope block or any other) by `new`; handles follow."""
    realize = tree.realize_of[id(block)]
    change = finish(tree, {id(realize): dataclasses.replace(realize, block=new)}, *reuse)
    change.reuse[id(block)] = new
    return change


def stmt_of(tree: Tree, node: Node) -> tir.Stmt:
    """The statement that holds `node` in its parent: the For, or the block's realize."""
    if isinstance(node, tir.Block):
        return tree.realize_of[id(node)]
    return node


def removal_root(tree: Tree, block: tir.Block) -> tir.Stmt:
    """The statement to drop to remove `block`: its realize, or the outermost loop
    that holds nothing but it. It must sit in a sequence of its scope."""
    stmt: tir.Stmt = tree.realize_of[id(block)]
    parent = tree.parent_of(block)
    while isinstance(parent, tir.For) and parent.body is stmt:
        stmt = parent
        parent = tree.parent_of(parent)
    holder = parent.body if parent is not None else None
    if holder is stmt:
        from tvmlite.lowering.schedule.state import ScheduleError

        raise ScheduleError(f"block '{block.name}' is the only statement of its scope")
    return stmt
