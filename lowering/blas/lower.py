"""What the `blas` kind offloads, and its `relax_to_tir` hook.

`supported` is the partitioner's check: R.matmul of float32 or float64 tensors
of rank two or more whose batch axes are equal or absent on one side, and an
optional R.add whose other operand repeats over the result in row-major order
(a bias (N,), a (M, N) term, a full tensor). A matmul whose second operand is
an `R.permute_dims` swapping its last two axes (how `nn.Linear` exports) takes
the permutation in: gemm reads the operand as stored, with its transpose flag.
`LowerToBlas` then replaces each call of a `Compiler="blas"` function by
`R.call_dps_packed` of the native gemm (lowering/blas/gemm.py), so nothing of
it reaches LegalizeOps or LLVM codegen.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.ops import sinfo_of
from tvmlite.dsl.structural import structural_equal
from tvmlite.lowering.blas.gemm import packed_name
from tvmlite.lowering.blas.library import find_gemm
from tvmlite.lowering.passes.fuse_transpose_matmul import transposed_operand
from tvmlite.lowering.passes.partition_for_compiler import lower_compiler_calls
from tvmlite.lowering.transform import Pass

COMPILER = "blas"
DTYPES = ("float32", "float64")
PERMUTE = "relax.permute_dims"
PATTERNS = (
    (PERMUTE, "relax.matmul", "relax.add"),
    (PERMUTE, "relax.matmul"),
    ("relax.matmul", "relax.add"),
    ("relax.matmul",),
)


def _tensor(expr: relax.Expr | relax.StructInfo) -> relax.TensorStructInfo | None:
    sinfo = expr if isinstance(expr, relax.StructInfo) else sinfo_of(expr)
    if isinstance(sinfo, relax.TensorStructInfo) and isinstance(sinfo.shape, tuple):
        return sinfo
    return None


def _same(x: tir.PrimExpr, y: tir.PrimExpr) -> bool:
    if isinstance(x, tir.IntImm) and isinstance(y, tir.IntImm):
        return x.value == y.value
    return x is y or structural_equal(x, y)


def _same_dims(xs: tuple[tir.PrimExpr, ...], ys: tuple[tir.PrimExpr, ...]) -> bool:
    return len(xs) == len(ys) and all(_same(x, y) for x, y in zip(xs, ys, strict=True))


def _split(
    bindings: tuple[relax.VarBinding, ...],
) -> tuple[relax.VarBinding | None, tuple[relax.VarBinding, ...]]:
    """(the permute_dims binding or None, the matmul (+ add) bindings)."""
    first = bindings[0].value
    if isinstance(first, relax.Call) and isinstance(first.op, relax.Op):
        if first.op.name == PERMUTE:
            return bindings[0], bindings[1:]
    return None, bindings


def supported(bindings: tuple[relax.VarBinding, ...]) -> bool:
    """Whether the native gemm computes this [permute_dims +] matmul [+ bias]
    chain exactly."""
    permute, bindings = _split(bindings)
    matmul = bindings[0].value
    assert isinstance(matmul, relax.Call)
    if permute is not None and (
        matmul.args[1] is not permute.var or transposed_operand(permute.value) is None
    ):
        return False  # the permuted tensor is not B, or more than its last axes move
    a, b, out = (
        _tensor(matmul.args[0]),
        _tensor(matmul.args[1]),
        _tensor(bindings[0].var.struct_info),
    )
    if a is None or b is None or out is None:
        return False
    if not (a.dtype == b.dtype == out.dtype and a.dtype in DTYPES):
        return False
    if len(a.shape) < 2 or len(b.shape) < 2:
        return False
    batched = len(a.shape) > 2 and len(b.shape) > 2
    if batched and not _same_dims(a.shape[:-2], b.shape[:-2]):
        return False
    if len(bindings) == 1:
        return True
    add = bindings[1].value
    assert isinstance(add, relax.Call)
    others = [x for x in add.args if x is not bindings[0].var]
    result = _tensor(bindings[1].var.struct_info)
    bias = _tensor(others[0]) if len(others) == 1 else None
    if bias is None or result is None or bias.dtype != out.dtype:
        return False
    if result.dtype != out.dtype or not _same_dims(result.shape, out.shape):
        return False
    dims = list(bias.shape)
    while dims and isinstance(dims[0], tir.IntImm) and dims[0].value == 1:
        dims.pop(0)
    return len(dims) <= len(out.shape) and _same_dims(
        tuple(dims), out.shape[len(out.shape) - len(dims) :]
    )


def lower_call(
    func: relax.Function, args: tuple[relax.Expr, ...], out_sinfo: relax.StructInfo
) -> relax.Expr:
    """`R.call_dps_packed` of the gemm computing `func` on `args`."""
    permute, bindings = _split(tuple(b for block in func.body.blocks for b in block.bindings))
    arg_of = {id(p): a for p, a in zip(func.params, args, strict=True)}
    matmul = bindings[0].value
    if not (isinstance(matmul, relax.Call) and isinstance(matmul.op, relax.Op)):
        raise TVMLiteError(f"{func.attr('global_symbol')}: not a BLAS matmul function")
    b = permute.value.args[0] if permute is not None else matmul.args[1]  # type: ignore[union-attr]
    inputs = [arg_of[id(matmul.args[0])], arg_of[id(b)]]
    if len(bindings) > 1:
        add = bindings[1].value
        assert isinstance(add, relax.Call)
        (bias,) = [x for x in add.args if x is not bindings[0].var]
        inputs.append(arg_of[id(bias)])
    dtype = sinfo_of(matmul.args[0]).dtype  # type: ignore[union-attr]
    # This process's BLAS must have it (an error now, not at the first call); the
    # gemm is compiled when a built module binds it (the registry provides it).
    find_gemm(dtype)
    symbol = relax.ExternFunc(packed_name(dtype, len(inputs) == 3, permute is not None))
    return relax.Call(
        relax.Op("relax.call_dps_packed"), (symbol, relax.Tuple(tuple(inputs))), (), (out_sinfo,)
    )


@dataclass(frozen=True)
class LowerToBlas(Pass):
    """The `blas` kind's relax_to_tir: every `Compiler="blas"` call becomes a call
    of the native gemm, and the functions go away."""

    name: str = "LowerToBlas"

    def run(self, mod: IRModule) -> IRModule:
        return lower_compiler_calls(mod, COMPILER, lower_call)
