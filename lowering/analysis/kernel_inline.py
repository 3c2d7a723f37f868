"""Copying a kernel's body into another prim function (what FuseTIR does per
kernel): its parameter buffers become the fused function's buffers, its
symbolic vars the fused function's expressions, and everything the body
defines (loop vars, block iter vars, let vars, local buffers) a fresh copy, so
the same kernel can be inlined twice without two definitions of one var.
Block names are made unique within the fused function."""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.lowering.tir.mutator import StmtExprMutator, replace


class KernelInliner(StmtExprMutator):
    """`vmap` and `bmap` start with the kernel's params; definitions are added as
    the body is walked. `block_names` is shared by every kernel of one fusion."""

    def __init__(
        self,
        vmap: dict[tir.Var, tir.PrimExpr],
        bmap: dict[tir.Buffer, tir.Buffer],
        block_names: set[str],
    ) -> None:
        super().__init__()
        self.vmap = vmap
        self.bmap = bmap
        self.block_names = block_names

    def fresh_var(self, v: tir.Var) -> tir.Var:
        new = tir.Var(v.name, v.dtype, v.pointee)
        self.vmap[v] = new
        return new

    def define_buffer(self, b: tir.Buffer) -> tir.Buffer:
        """A fresh copy of a buffer the body allocates, in the fused function's vars."""
        data = self.fresh_var(b.data)
        offset = None if b.elem_offset is None else self.expr(b.elem_offset)
        new = tir.Buffer(
            b.name,
            data,
            b.dtype,
            self.exprs(b.shape),
            self.exprs(b.strides),
            offset,
            b.scope,
            b.align,
            b.offset_factor,
        )
        self.bmap[b] = new
        return new

    def buffer(self, b: tir.Buffer) -> tir.Buffer:
        return self.bmap.get(b) or self.define_buffer(b)

    def region(self, r: tir.BufferRegion) -> tir.BufferRegion:
        ranges = tuple(tir.Range(self.expr(x.min), self.expr(x.extent)) for x in r.region)
        return tir.BufferRegion(self.buffer(r.buffer), ranges)

    def unique_name(self, name: str) -> str:
        unique, n = name, 0
        while unique in self.block_names:
            n += 1
            unique = f"{name}_{n}"
        self.block_names.add(unique)
        return unique

    # ------------------------------------------------------------ definitions

    def visit_Var(self, e: tir.Var) -> tir.PrimExpr:
        return self.vmap.get(e, e)

    def visit_For(self, s: tir.For) -> tir.Stmt:
        lo, extent = self.expr(s.min), self.expr(s.extent)
        step = None if s.step is None else self.expr(s.step)
        var = self.fresh_var(s.loop_var)
        return replace(s, loop_var=var, min=lo, extent=extent, step=step, body=self.stmt(s.body))

    def visit_LetStmt(self, s: tir.LetStmt) -> tir.Stmt:
        value = self.expr(s.value)
        var = self.fresh_var(s.var)
        return replace(s, var=var, value=value, body=self.stmt(s.body))

    def visit_Bind(self, s: tir.Bind) -> tir.Stmt:
        value = self.expr(s.value)
        return replace(s, var=self.fresh_var(s.var), value=value)

    def visit_Let(self, e: tir.Let) -> tir.PrimExpr:
        value = self.expr(e.value)
        return replace(e, var=self.fresh_var(e.var), value=value, body=self.expr(e.body))

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> tir.Stmt:
        return replace(s, buffer=self.define_buffer(s.buffer))

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        iter_vars = tuple(
            replace(
                iv,
                var=self.fresh_var(iv.var),
                dom=tir.Range(self.expr(iv.dom.min), self.expr(iv.dom.extent)),
            )
            for iv in s.iter_vars
        )
        allocs = tuple(self.define_buffer(b) for b in s.alloc_buffers)
        matches = tuple(
            tir.MatchBufferRegion(self.define_buffer(m.buffer), self.region(m.source))
            for m in s.match_buffers
        )
        init = None if s.init is None else self.stmt(s.init)
        return replace(
            s,
            name=self.unique_name(s.name),
            iter_vars=iter_vars,
            reads=tuple(self.region(r) for r in s.reads),
            writes=tuple(self.region(r) for r in s.writes),
            body=self.stmt(s.body),
            init=init,
            alloc_buffers=allocs,
            match_buffers=matches,
        )
