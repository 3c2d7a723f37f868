"""LowerBlocks: blocks become plain loop-nest statements.

A `BlockRealize` binds its iter vars to their values (LetStmt), guards the body by
its predicate (`T.where`), runs `T.init()` once before the loops when every loop
from one down to the block only drives reduction iter vars and their first
iteration is the reductions' start (the form legalization and most schedules
make: a reduction over an empty range, `R.sum` over an axis of extent 0, still
writes its init value; a loop whose extent varies with an enclosing loop runs it only
when its range is not empty, as TVM does), else when every reduction iter var is at the start of
its domain (TVM's LowerInitBlock), turns `alloc_buffers` into flat
`AllocBuffer` statements and replaces each `match_buffer` by a strided view of its
source region. `reads`/`writes` are dropped: codegen does not need them, and the
schedule passes that do run before this one.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import substitute, uses
from tvmlite.dsl.arith import const_int, difference
from tvmlite.dsl.tir_mutator import StmtExprMutator
from tvmlite.lowering.tir.flatten_buffers import add, elem_offset_of, mul, strides_of, to_index
from tvmlite.lowering.transform import PrimFuncPass


def _cast(e: tir.PrimExpr, dtype: str) -> tir.PrimExpr:
    if e.dtype == dtype:
        return e
    if isinstance(e, tir.IntImm):
        return tir.IntImm(dtype, e.value)
    return tir.Cast(dtype, e)


def _and(conds: list[tir.PrimExpr]) -> tir.PrimExpr | None:
    result: tir.PrimExpr | None = None
    for c in conds:
        result = c if result is None else tir.BinaryOp("and", result, c, "bool")
    return result


def _is_true(e: tir.PrimExpr) -> bool:
    return isinstance(e, tir.IntImm) and e.value != 0


class _BlockLowerer(StmtExprMutator):
    """Remove every Block/BlockRealize from one PrimFunc."""

    def __init__(self) -> None:
        super().__init__()
        self.hoisted: set[int] = set()  # blocks whose init runs before their loops
        self.inner: set[tir.Var] = set()  # loop and block vars bound around the node

    def visit_For(self, s: tir.For) -> tir.Stmt:
        init = self._hoisted_init(s)
        self.inner.add(s.loop_var)
        loop = super().visit_For(s)
        self.inner.discard(s.loop_var)
        return loop if init is None else tir.seq([init, loop])

    def _hoisted_init(self, s: tir.For) -> tir.Stmt | None:
        """The init of the reduction block `s` leads to, run once before `s`, when
        `s` and every loop below it only drive reduction iter vars (so the init's
        point does not depend on them), their first iteration puts every reduction
        var at its start, and the block is all that is inside."""
        start: dict[tir.Var, tir.PrimExpr] = {}  # each loop var at its first iteration
        varying: list[tir.PrimExpr] = []  # extents that change with an enclosing loop
        node: tir.Stmt = s
        while isinstance(node, tir.For):
            start[node.loop_var] = node.min
            if uses(node.extent, self.inner | set(start)):
                varying.append(node.extent)
            node = node.body
        loop_vars = set(start)
        if not isinstance(node, tir.BlockRealize):
            return None
        block = node.block
        if block.init is None or block.match_buffers or block.alloc_buffers:
            return None
        if id(block) in self.hoisted:  # an outer loop took it
            return None
        reduce_vars = {iv.var for iv in block.iter_vars if iv.kind == tir.REDUCE}
        # TVM runs the init where every reduction var is at its domain's start; it
        # moves before the loops only when that is their first iteration.
        for iv, v in zip(block.iter_vars, node.iter_values, strict=True):
            at = _cast(substitute(v, start), iv.var.dtype)
            if iv.kind == tir.REDUCE and const_int(difference(at, iv.dom.min)) != 0:
                return None
        spatial = [
            (iv.var, v)
            for iv, v in zip(block.iter_vars, node.iter_values, strict=True)
            if iv.kind != tir.REDUCE
        ]
        if uses(block.init, reduce_vars) or uses(node.predicate, loop_vars):
            return None
        if any(uses(v, loop_vars) for _, v in spatial):
            return None
        self.hoisted.add(id(block))
        init = self.visit_stmt(block.init)
        predicate = self.visit_expr(node.predicate)
        # TVM runs the init on the loops' first iteration: where an extent varies with
        # an enclosing loop (`for rv in range(v_i1)`), an empty range runs none
        guard = _and(
            [
                tir.BinaryOp("gt", e, tir.IntImm(e.dtype, 0), "bool")
                for e in map(self.visit_expr, varying)
            ]
        )
        if guard is not None:
            predicate = guard if _is_true(predicate) else _and([guard, predicate])
        if not _is_true(predicate):
            init = tir.IfThenElse(predicate, init)
        for var, value in reversed(spatial):
            init = tir.LetStmt(var, _cast(self.visit_expr(value), var.dtype), init)
        return init

    def visit_BlockRealize(self, s: tir.BlockRealize) -> tir.Stmt:
        block = s.block
        lets: list[tuple[tir.Var, tir.PrimExpr]] = []
        for iv, value in zip(block.iter_vars, s.iter_values, strict=True):
            lets.append((iv.var, _cast(self.visit_expr(value), iv.var.dtype)))
        for match in block.match_buffers:
            lets.extend(self._match(match))
        own = {iv.var for iv in block.iter_vars} - self.inner
        self.inner |= own
        body = self.visit_stmt(block.body)
        self.inner -= own
        if block.init is not None and id(block) not in self.hoisted:
            init = self.visit_stmt(block.init)
            cond = _and(
                [
                    tir.BinaryOp("eq", iv.var, _cast(iv.dom.min, iv.var.dtype), "bool")
                    for iv in block.iter_vars
                    if iv.kind == tir.REDUCE
                ]
            )
            body = tir.seq([init if cond is None else tir.IfThenElse(cond, init), body])
        if block.alloc_buffers:
            allocs = (tir.AllocBuffer(self.visit_buffer_def(b)) for b in block.alloc_buffers)
            body = tir.seq([*allocs, body])
        predicate = self.visit_expr(s.predicate)
        if not _is_true(predicate):
            body = tir.IfThenElse(predicate, body)
        for var, value in reversed(lets):
            body = tir.LetStmt(var, value, body)
        return body

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        raise TVMLiteError(f"block '{s.name}' is not inside a BlockRealize")

    def _match(self, match: tir.MatchBufferRegion) -> list[tuple[tir.Var, tir.PrimExpr]]:
        """Make `match.buffer` a view of its source region; returns the bindings of
        the view's own symbolic vars (shape, strides, elem_offset) for the body."""
        view, source = match.buffer, match.source
        src = self.visit_buffer(source.buffer)
        region = [(self.visit_expr(r.min), self.visit_expr(r.extent)) for r in source.region]
        rank, src_rank = len(view.shape), len(region)
        if rank > src_rank:
            raise TVMLiteError(
                f"match_buffer '{view.name}' has {rank} dims, its region of "
                f"'{src.name}' only {src_rank}"
            )
        src_strides = strides_of(src)
        offset = elem_offset_of(src)
        for (lo, _), stride in zip(region, src_strides, strict=True):
            offset = add(offset, mul(to_index(lo), stride))
        strides = src_strides[src_rank - rank :]
        bindings: list[tuple[tir.Var, tir.PrimExpr]] = []
        extents = [ext for _, ext in region[src_rank - rank :]]
        for dim, ext in zip(view.shape, extents, strict=True):
            if isinstance(dim, tir.Var):
                bindings.append((dim, _cast(ext, dim.dtype)))
        for declared, actual in zip(view.strides, strides, strict=False):
            if isinstance(declared, tir.Var):
                bindings.append((declared, _cast(actual, declared.dtype)))
        if isinstance(view.elem_offset, tir.Var):
            bindings.append((view.elem_offset, _cast(offset, view.elem_offset.dtype)))
        self.buffer_remap[view] = tir.Buffer(
            view.name,
            src.data,
            view.dtype,
            view.shape,
            strides,
            offset,
            src.scope,
            span=view.span,
        )
        return bindings


@dataclass(frozen=True)
class LowerBlocks(PrimFuncPass):
    """Blocks of every prim function become plain loop-nest statements."""

    name: str = "LowerBlocks"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return _BlockLowerer().visit_prim_func(func)
