"""Copying a kernel's body into another prim function (what FuseTIR does per
kernel): its parameter buffers become the fused function's buffers, its
symbolic vars the fused function's expressions, and everything the body
defines (loop vars, block iter vars, let vars, local buffers) a fresh copy, so
the same kernel can be inlined twice without two definitions of one var.
Block names are made unique within the fused function."""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace


class KernelInliner(StmtExprMutator):
    """`vmap` and `bmap` start with the kernel's params (the mutator's var and
    buffer remapping); the fresh copies of definitions join them as the body is
    walked. `block_names` is shared by every kernel of one fusion."""

    def __init__(
        self,
        vmap: dict[tir.Var, tir.PrimExpr],
        bmap: dict[tir.Buffer, tir.Buffer],
        block_names: set[str],
    ) -> None:
        super().__init__()
        self.var_remap = vmap
        self.buffer_remap = bmap
        self.block_names = block_names

    def visit_var_def(self, var: tir.Var) -> tir.Var:
        return tir.Var(var.name, var.dtype, var.pointee)

    def unique_name(self, name: str) -> str:
        unique, n = name, 0
        while unique in self.block_names:
            n += 1
            unique = f"{name}_{n}"
        self.block_names.add(unique)
        return unique

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        name = self.unique_name(s.name)  # before the nested blocks take theirs
        return replace(super().visit_Block(s), name=name)
