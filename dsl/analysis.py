"""Questions about TIR, answered with the functors: substitution, the vars a piece
of IR uses without defining them, the buffers it accesses, its loads and stores.

Every function takes an expression, a statement, a `PrimFunc` or a sequence of
expressions (what kernel builders hold before they have a statement), and sees
every field the functors see: block regions, buffer shapes, annotations.
Orders are first occurrence in the functors' visiting order, so results are
deterministic and match what a reader of the printed text sees first.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import TypeVar

from tvmlite.diagnostics import Span
from tvmlite.dsl import tir
from tvmlite.dsl.comments import Comments
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.dsl.tir_mutator import StmtExprMutator

Node = tir.PrimExpr | tir.Stmt | tir.PrimFunc | Iterable[tir.PrimExpr]
N = TypeVar("N", tir.PrimExpr, tir.Stmt)


def _walk(visitor: StmtExprVisitor, node: Node) -> None:
    if isinstance(node, tir.PrimExpr):
        visitor.visit_expr(node)
    elif isinstance(node, tir.Stmt):
        visitor.visit_stmt(node)
    elif isinstance(node, tir.PrimFunc):
        visitor.visit_prim_func(node)
    else:
        for item in node:
            visitor.visit_expr(item)


# ---------------------------------------------------------------- substitution


def substitute(node: N, mapping: Mapping[tir.Var, tir.PrimExpr]) -> N:
    """`node` with every use of a var in `mapping` replaced by its value (values
    are not substituted again). Buffers whose shape, strides, offset or data var
    mention a replaced var are rebuilt once and shared by all their uses.
    Unchanged subtrees are returned as they are."""
    if not mapping:
        return node
    mutator = StmtExprMutator()
    mutator.var_remap.update(mapping)
    if isinstance(node, tir.PrimExpr):
        return mutator.visit_expr(node)
    return mutator.visit_stmt(node)


# ---------------------------------------------------------------- variables


class _FreeVars(StmtExprVisitor):
    """Uses of vars not defined before them. A buffer that is matched (function
    parameter, `T.match_buffer`) defines the bare vars of its shape, strides and
    elem_offset; an allocated one only uses them."""

    def __init__(self, buffers: bool) -> None:
        self.buffers = buffers
        self.defined: set[tir.Var] = set()
        self.found: dict[tir.Var, None] = {}

    def visit_buffer(self, buffer: tir.Buffer) -> None:
        if self.buffers:
            super().visit_buffer(buffer)

    def visit_var_def(self, var: tir.Var) -> None:
        self.defined.add(var)

    def visit_Var(self, e: tir.Var) -> None:
        if e not in self.defined:
            self.found.setdefault(e)

    def _bind_dims(self, buffer: tir.Buffer) -> None:
        for dim in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            if isinstance(dim, tir.Var):
                self.defined.add(dim)

    def visit_match_buffer(self, match: tir.MatchBufferRegion) -> None:
        self.visit_buffer_region(match.source)
        self._bind_dims(match.buffer)
        self.visit_buffer_def(match.buffer)

    def visit_prim_func(self, func: tir.PrimFunc) -> None:
        for _, buffer in func.buffer_map:
            self._bind_dims(buffer)
        super().visit_prim_func(func)


def free_vars(node: Node, buffers: bool = True) -> list[tir.Var]:
    """The vars `node` uses without defining them, first use first. For a plain
    expression: every var in it (but those bound by a `T.Let` inside). A buffer
    used (loaded, stored, in a region) uses its data var and the vars of its
    shape, strides and offset; `buffers=False` leaves those out (the vars of the
    index arithmetic only)."""
    visitor = _FreeVars(buffers)
    _walk(visitor, node)
    return list(visitor.found)


class _Uses(StmtExprVisitor):
    def __init__(self, variables: Container[tir.Var]) -> None:
        self.variables = variables
        self.found = False

    def visit_Var(self, e: tir.Var) -> None:
        if e in self.variables:
            self.found = True


def uses(node: Node, variables: Container[tir.Var]) -> bool:
    """Whether `node` uses any of `variables`."""
    visitor = _Uses(variables)
    _walk(visitor, node)
    return visitor.found


# ---------------------------------------------------------------- buffers


class _Buffers(StmtExprVisitor):
    def __init__(self) -> None:
        self.found: dict[tir.Buffer, None] = {}

    def visit_buffer(self, buffer: tir.Buffer) -> None:
        self.found.setdefault(buffer)


def used_buffers(node: Node) -> list[tir.Buffer]:
    """The buffers `node` uses (loads, stores, regions, match sources, attribute
    values), first use first; buffers it only defines are not listed."""
    visitor = _Buffers()
    _walk(visitor, node)
    return list(visitor.found)


class _Accesses(StmtExprVisitor):
    def __init__(self, post_order: bool) -> None:
        self.post_order = post_order
        self.loads: list[tir.BufferLoad] = []
        self.stores: list[tir.BufferStore] = []

    def visit_BufferLoad(self, e: tir.BufferLoad) -> None:
        if not self.post_order:
            self.loads.append(e)
        super().visit_BufferLoad(e)
        if self.post_order:
            self.loads.append(e)

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        self.stores.append(s)
        super().visit_BufferStore(s)


def loads(node: Node, post_order: bool = False) -> list[tir.BufferLoad]:
    """Every BufferLoad in `node`, left to right; a load comes before the loads in
    its indices (as block read detection sees them) or, with `post_order`, after."""
    visitor = _Accesses(post_order)
    _walk(visitor, node)
    return visitor.loads


def stores(node: Node) -> list[tir.BufferStore]:
    """Every BufferStore in `node`, in execution order of the text."""
    visitor = _Accesses(post_order=False)
    _walk(visitor, node)
    return visitor.stores


class _Blocks(StmtExprVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Block(self, s: tir.Block) -> None:
        self.found = True


def contains_block(node: Node) -> bool:
    """Whether `node` holds a block: what makes TVM add the implicit root block and
    print `s_tir=True`."""
    visitor = _Blocks()
    _walk(visitor, node)
    return visitor.found


def with_root(
    body: tir.Stmt,
    allocs: tuple[tir.Buffer, ...] = (),
    span: Span | None = None,
    comments: Comments | None = None,
) -> tir.Stmt:
    """`body` wrapped in the implicit root block exactly where TVM puts one (its
    parser and `te.create_prim_func` agree): when there are root allocations, or
    blocks, unless the body already is one block without iter vars."""
    if not allocs:
        if not contains_block(body):
            return body
        if isinstance(body, tir.BlockRealize) and not body.block.iter_vars:
            return body
    root = tir.Block("root", (), (), (), body, alloc_buffers=allocs, comments=comments)
    return tir.BlockRealize((), tir.IntImm("bool", 1), root, span)
