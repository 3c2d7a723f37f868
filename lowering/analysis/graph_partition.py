"""The dataflow graph fusion partitions, its post-dominator tree, and the
partitioner itself (TVM's `IndexedForwardGraph`, `DominatorTree` and
`GraphPartitioner` from relay/analysis/graph_partitioner.cc).

Kept apart from the Relax pass so the algorithm can be read (and tested) on its
own: nodes are plain objects in post-DFS order, edges carry the consumer's
pattern, and the result is a union-find group per node. A node fuses into its
immediate post-dominator when every path between them allows it; that is how
diamonds fuse only when all branches meet again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tvmlite.dsl.ops import OpPatternKind as K

MAX_FUSED_OPS = 256  # TVM's kMaxFusedOps, the default of relax.FuseOps.max_depth


@dataclass(eq=False)
class Node:
    """One value of the graph: `ref` is what it stands for (a Relax var or leaf)."""

    ref: Any
    index: int = -1
    pattern: K = K.kOpaque
    extern_ref: bool = False
    outputs: list[tuple[Node, K]] = field(default_factory=list)


@dataclass
class Graph:
    """Nodes in post-DFS order (producers before consumers) and by their ref's id."""

    post_dfs_order: list[Node] = field(default_factory=list)
    node_map: dict[int, Node] = field(default_factory=dict)

    def add(self, ref: Any, pattern: K, extern_ref: bool = False) -> Node:
        node = Node(ref, len(self.post_dfs_order), pattern, extern_ref)
        self.post_dfs_order.append(node)
        self.node_map[id(ref)] = node
        return node

    def lookup(self, ref: Any) -> Node | None:
        return self.node_map.get(id(ref))


@dataclass(eq=False)
class DomNode:
    gnode: Node
    parent: DomNode | None = None
    depth: int = 1
    pattern: K = K.kOpaque


def combine_pattern(lhs: K, rhs: K) -> K:
    return max(lhs, rhs)


def _lca(lhs: DomNode | None, rhs: DomNode | None, pattern: list[K]) -> DomNode | None:
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None
        if lhs.depth < rhs.depth:
            pattern[0] = combine_pattern(pattern[0], rhs.pattern)
            rhs = rhs.parent
        elif rhs.depth < lhs.depth:
            pattern[0] = combine_pattern(pattern[0], lhs.pattern)
            lhs = lhs.parent
        else:
            pattern[0] = combine_pattern(pattern[0], lhs.pattern)
            pattern[0] = combine_pattern(pattern[0], rhs.pattern)
            lhs, rhs = lhs.parent, rhs.parent
    return lhs


def post_dominator_tree(graph: Graph) -> list[DomNode]:
    """Immediate post-dominator of every node, found as the LCA of its consumers."""
    nodes: list[DomNode | None] = [None] * len(graph.post_dfs_order)
    for gnode in reversed(graph.post_dfs_order):
        tnode = DomNode(gnode)
        if not gnode.extern_ref and gnode.outputs:
            pattern = [K.kElemWise]
            first, edge = gnode.outputs[0]
            parent = nodes[first.index]
            pattern[0] = combine_pattern(pattern[0], edge)
            for out, edge in gnode.outputs[1:]:
                parent = _lca(parent, nodes[out.index], pattern)
                pattern[0] = combine_pattern(pattern[0], edge)
            tnode.parent = parent
            tnode.depth = parent.depth + 1 if parent else 1
            tnode.pattern = pattern[0]
        nodes[gnode.index] = tnode
    return [n for n in nodes if n is not None]


@dataclass(eq=False)
class Group:
    """A union-find set of nodes; the root holds the group's pattern and anchor."""

    pattern: K
    root_ref: Any
    parent: Group | None = None
    anchor_ref: Any = None
    num_nodes: int = 1

    def find_root(self) -> Group:
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node is not root:  # path compression
            node.parent, node = root, node.parent  # type: ignore[assignment]
        return root


PathCond = Callable[[K, bool], bool]


class GraphPartitioner:
    """Three phases over the nodes: out_ewise_fusible ops take their elementwise
    epilogues, then elementwise/broadcast ops fuse forward, then injective ones
    (deferred so that a conv always finishes fusing first)."""

    def __init__(self, max_fuse_depth: int = MAX_FUSED_OPS) -> None:
        self.max_fuse_depth = max_fuse_depth
        self.groups: list[Group] = []
        self._visited: set[int] = set()

    def partition(self, graph: Graph) -> list[Group]:
        self.groups = []
        for node in graph.post_dfs_order:
            group = Group(node.pattern, node.ref)
            if node.pattern == K.kOutEWiseFusable:
                group.anchor_ref = node.ref
            self.groups.append(group)
        dom = post_dominator_tree(graph)
        for phase in range(3):
            self._run_fuse(graph, dom, phase)
        return self.groups

    # ------------------------------------------------------------ path checks

    def _check_path_rec(self, src: Node, sink: Node, cond: PathCond) -> bool:
        if src.index in self._visited:
            return True
        self._visited.add(src.index)
        group = self.groups[src.index].find_root()
        if not cond(group.pattern, src is sink):
            return False
        if src is sink:
            return True
        return all(self._check_path_rec(out, sink, cond) for out, _ in src.outputs)

    def _check_path(self, src: Node, sink: Node, cond: PathCond) -> bool:
        self._visited = set()
        return all(self._check_path_rec(out, sink, cond) for out, _ in src.outputs)

    def _merge(self, child: Group, parent: Group) -> None:
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor_ref is not None:
            parent.anchor_ref = child.anchor_ref
            parent.pattern = combine_pattern(child.pattern, parent.pattern)

    def _commit_rec(self, src: Node, sink: Node, target: Group) -> None:
        if src is sink or src.index in self._visited:
            return
        self._visited.add(src.index)
        self._merge(self.groups[src.index], target)
        for out, _ in src.outputs:
            self._commit_rec(out, sink, target)

    def _commit(self, src: Node, sink: Node) -> None:
        self._visited = set()
        self._commit_rec(src, sink, self.groups[sink.index])

    def _count_rec(self, src: Node, sink: Node) -> int:
        if src is sink or src.index in self._visited:
            return 0
        self._visited.add(src.index)
        total = self.groups[src.index].num_nodes
        return total + sum(self._count_rec(out, sink) for out, _ in src.outputs)

    def _count_fused(self, child: Node, dom_parent: Node) -> int:
        self._visited = set()
        target = self.groups[dom_parent.index].find_root()
        return target.num_nodes + self._count_rec(child, dom_parent)

    # ------------------------------------------------------------ the phases

    def _run_fuse(self, graph: Graph, dom: list[DomNode], phase: int) -> None:
        for nid, gnode in enumerate(graph.post_dfs_order):
            dnode = dom[nid]
            group = self.groups[nid]
            if group.pattern == K.kOpaque or dnode.parent is None:
                continue
            sink = dnode.parent.gnode
            if self._count_fused(gnode, sink) > self.max_fuse_depth:
                continue
            parent_group = self.groups[sink.index]
            if phase == 2:
                self._fuse_into_tuple(gnode, sink, group, parent_group)
                continue
            if group.find_root() is parent_group.find_root():
                continue
            if parent_group.pattern == K.kTuple:
                continue
            if group.pattern == K.kOutEWiseFusable:
                if phase == 0 and dnode.pattern == K.kElemWise:
                    if self._check_path(gnode, sink, _upto_broadcast):
                        self._commit(gnode, sink)
            elif group.pattern <= K.kBroadcast:
                if dnode.pattern <= K.kInjective or dnode.pattern == K.kCommReduce:
                    if self._check_path(gnode, sink, _into_anchor):
                        self._commit(gnode, sink)
            elif group.pattern in (K.kInjective, K.kTuple):
                if phase == 1 and self._check_path(gnode, sink, _upto_injective):
                    self._commit(gnode, sink)

    def _fuse_into_tuple(self, gnode: Node, sink: Node, group: Group, parent: Group) -> None:
        """Phase 2: injective ops join a tuple that already fused into its consumer."""
        if group.pattern > K.kInjective:
            return
        root = parent.find_root()
        if root.pattern == K.kTuple:
            return
        if parent.pattern == K.kTuple and root.pattern <= K.kInjective:
            if self._check_path(gnode, sink, _upto_injective):
                self._commit(gnode, sink)


def _upto_broadcast(kind: K, is_sink: bool) -> bool:
    return kind <= K.kBroadcast


def _upto_injective(kind: K, is_sink: bool) -> bool:
    return kind <= K.kInjective


def _into_anchor(kind: K, is_sink: bool) -> bool:
    """Branches may be injective; the sink may also be a reduction or an anchor."""
    if not is_sink:
        return kind <= K.kInjective
    return kind <= K.kInjective or kind in (K.kCommReduce, K.kOutEWiseFusable)
