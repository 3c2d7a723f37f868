"""Intrinsics of TVM's device and runtime layers that TVM prints as plain `T.*`
calls: tensor-core fragments, warp shuffles, legacy PTX, packed-call stacks,
profiling marks, fixed-point multiplies, `T.vscale()`, Trainium's `T.nki.*`.

They parse into `tir.Call`s with the result dtype TVM gives them and print back
as written. Nothing here runs on a CPU build: the code generator refuses each
one by name (`T.tvm_mma_sync is not supported by the LLVM backend`).
"""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.dsl.parse.tir.expr import ExprParser
from tvmlite.dsl.parse.tir.math import Args, Builtin, Kwargs, Sig
from tvmlite.dsl.parse.tir.ops import Value
from tvmlite.grammar import syntax

# Result dtype: a dtype, or "argN" for the dtype of the N-th argument.
_RESULT = {
    "tvm_fill_fragment": "handle",
    "tvm_load_matrix_sync": "handle",
    "tvm_store_matrix_sync": "handle",
    "tvm_mma_sync": "handle",
    "tvm_bmma_sync": "handle",
    "tvm_storage_sync": "handle",
    "tvm_access_ptr": "handle",
    "tvm_thread_allreduce": "handle",
    "tvm_stack_make_array": "handle",
    "tvm_stack_make_shape": "handle",
    "tvm_stack_alloca": "handle",
    "tvm_kernel_replace_point": "handle",
    "start_profile_intrinsic": "handle",
    "end_profile_intrinsic": "handle",
    "prefetch": "handle",
    "ptx_legacy.ldmatrix": "handle",
    "ptx_legacy.mma": "handle",
    "cuda.mma_fill_legacy": "handle",
    "cuda.cta_sync": "handle",
    "metal.make_filled_simdgroup_matrix": "handle",
    # Trainium (NKI) instructions: statements on buffer elements
    **{
        f"nki.{name}": "handle"
        for name in (
            "load",
            "store",
            "tensor_copy",
            "matmul",
            "activation",
            "reciprocal",
            "tensorreduce",
            "tensortensor",
            "tensorscalar",
            "memset",
            "activation_reduce",
            "tensorscalar_reduce",
            "identity",
            "scalar_tensor_tensor",
            "scalar_tensor_scalar",
            "affine_select",
        )
    },  # fmt: skip
    "cuda.__activemask": "uint32",
    "vscale": "int32",
    "undef": "int32",
    "isnullptr": "bool",
    "tvm_thread_invariant": "arg0",
    "q_multiply_shift": "arg0",
    "q_multiply_shift_per_axis": "arg0",
    "webgpu.subgroup_shuffle": "arg0",
    "tvm_warp_shuffle": "arg1",
    "tvm_warp_shuffle_up": "arg1",
    "tvm_warp_shuffle_down": "arg1",
}


def _device(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    values = tuple(p.expr(arg) for arg in args)
    result = _RESULT[name]
    if result.startswith("arg"):
        k = int(result[3:])
        if k >= len(values):
            raise p.error(f"T.{name} expects at least {k + 1} arguments, got {len(values)}", node)
        result = values[k].dtype
    return tir.Call(result, name, values, node.span)


# tirx tile operators (`T.tile.add(C[0:128, 0:512], A[0:128, 0:512], T.float32(3.0))`):
# statements over buffer regions, which tvmlite keeps as data.
TILE_OPERATORS = (
    "add", "sub", "mul", "div", "maximum", "minimum", "max", "min", "sum", "gemm",
    "copy", "copy_async", "fill", "exp", "sqrt", "reciprocal", "cast", "select",
)  # fmt: skip


def _tile(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """A whole buffer or a sliced one is a region, `True`/`False` a Python bool,
    anything else an expression."""
    regions = p.region
    if regions is None:
        raise p.error(f"{name} takes buffer regions: it is a statement of a prim function", node)
    values = []
    for arg in args:
        sliced = isinstance(arg, syntax.Subscript) and any(
            isinstance(i, syntax.Slice) for i in arg.indices
        )
        whole = isinstance(arg, syntax.Name) and isinstance(p.scope.lookup(arg.id), tir.Buffer)
        if isinstance(arg, syntax.Constant) and isinstance(arg.value, bool):
            values.append(arg.value)
        else:
            values.append(regions(arg) if sliced or whole else p.expr(arg))
    return tir.Call("handle", name, tuple(values), node.span)


DEVICE_BUILTINS: dict[str, tuple[Builtin, Sig]] = {
    name: (_device, Sig(0, None)) for name in _RESULT
}
DEVICE_BUILTINS.update({f"tile.{name}": (_tile, Sig(0, None)) for name in TILE_OPERATORS})
