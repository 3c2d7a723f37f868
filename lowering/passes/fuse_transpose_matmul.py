"""FuseTransposeMatmul: `R.matmul(x, R.permute_dims(w))`, where the permutation
swaps the last two axes, becomes one kernel that reads `w` as it is (TVM's
`relax.transform.FuseTransposeMatmul`, whose kernel it names `NT_matmul`).

Every `nn.Linear` of a PyTorch model exports as `permute_dims(W)` + `matmul`,
and attention's scores as `matmul(q, permute_dims(k))`. Run as two kernels,
the transpose writes a copy of the operand on every call, a strided copy that
costs as much as the product on a transformer's weights; fused, the matmul
reads `w[..., j, k]`, which the default schedule's gemm rule packs into its
column panels in the same pass it would have packed the copy
(docs/schedule-rules-contractions.md).

The kernel is the legalization of the matmul with its second operand read
transposed (`legalize/linalg.matmul_compute(transpose_b=True)`), recorded as
`relax.matmul` (op kind out_ewise_fusible), so FuseOps fuses its epilogues as
it fuses a matmul's. A `permute_dims` left without users is dead:
DeadCodeElimination removes it. Matmuls whose operand another operation
produced, or whose permutation moves other axes, are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tvmlite.dsl import relax
from tvmlite.dsl.module import TVM027, IRModule
from tvmlite.dsl.ops import OpPatternKind, lookup, sinfo_of
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize.linalg import matmul_compute
from tvmlite.lowering.legalize.registry import LegalizeCtx
from tvmlite.lowering.passes.legalize_ops import KernelTable
from tvmlite.lowering.transform import Pass, is_external

KERNEL = "NT_matmul"


@dataclass(frozen=True)
class FuseTransposeMatmul(Pass):
    name: str = "FuseTransposeMatmul"

    def run(self, mod: IRModule) -> IRModule:
        table = KernelTable(mod, {}, mod.dialect == TVM027)
        functions = {}
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function) and not is_external(func):
                func = _Rewriter(table).visit_expr(func)
            functions[gname] = func
        if not table.kernels:
            return mod
        return mod.replace(functions={**table.kernels, **functions})


def transposed_operand(value: relax.Expr) -> relax.Expr | None:
    """The tensor `value` permutes when it is a `permute_dims` that swaps the last
    two axes of a tensor of rank two or more and keeps the others in place."""
    if not (isinstance(value, relax.Call) and isinstance(value.op, relax.Op)):
        return None
    if value.op.name != "relax.permute_dims":
        return None
    sinfo = sinfo_of(value.args[0])
    if not isinstance(sinfo, relax.TensorStructInfo) or sinfo.ndim < 2:
        return None
    axes = dict(value.attrs).get("axes")
    rank = sinfo.ndim
    swap = [*range(rank - 2), rank - 1, rank - 2]
    if axes is None:  # reversed: a swap only for rank two
        return value.args[0] if rank == 2 else None
    return value.args[0] if [int(a) % rank for a in axes] == swap else None


class _Rewriter(ExprMutator):
    """Within each dataflow block: the vars bound to a swap of the last two axes,
    then the matmuls reading one of them as their second operand."""

    def __init__(self, table: KernelTable) -> None:
        super().__init__()
        self.table = table
        self.transposed: dict[relax.Var, relax.Expr] = {}

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        new = super().visit_VarBinding(b)
        if not isinstance(new, relax.VarBinding):
            return new
        source = transposed_operand(new.value)
        if source is not None:
            self.transposed[new.var] = source
            return new
        call = new.value
        if not (isinstance(call, relax.Call) and isinstance(call.op, relax.Op)):
            return new
        if call.op.name != "relax.matmul" or call.args[1] not in self.transposed:
            return new
        fused = self._nt_matmul(call, self.transposed[call.args[1]], new.var.struct_info)
        return new if fused is None else replace(new, value=fused)

    def _nt_matmul(
        self, call: relax.Call, w: relax.Expr, out: relax.StructInfo
    ) -> relax.Expr | None:
        x = call.args[0]
        xs = sinfo_of(x)
        if not isinstance(xs, relax.TensorStructInfo) or xs.ndim < 2:
            return None  # a vector times a matrix: no rows to tile
        if not isinstance(out, relax.TensorStructInfo) or not isinstance(out.shape, tuple):
            return None
        dtype = out.dtype
        # The call as legalization would see it, with `w` in place of its transpose.
        direct = relax.Call(call.op, (x, w), call.attrs, call.sinfo_args, call.span)
        ctx = LegalizeCtx(direct, lookup("relax.matmul"), out, self.table)
        shape = ctx.out_shape()

        def build(kb: te.KernelBuilder, a: te.Tensor, b: te.Tensor) -> te.Tensor:
            return matmul_compute(kb, a, b, shape, dtype, transpose_b=True, name=KERNEL)

        return ctx.call_te(KERNEL, build, kind=OpPatternKind.kOutEWiseFusable)
