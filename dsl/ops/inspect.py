"""`R.inspect.*`: the fields of a tensor's DLTensor (TVM's `relax.inspect`), each a
scalar of the field's C type. TVM's own parser has no binding for them yet, but
its printer writes them; tvmlite parses and prints them, and a build stops at
them by name (their lowering reads the DLTensor, which host code does not expose)."""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops.context import InferCtx
from tvmlite.dsl.ops.registry import ArgDef, InferFn, OpDef, register
from tvmlite.dsl.ops.registry import OpPatternKind as K

# field -> the dtype of its value; the per-axis fields take the axis as a scalar
_FIELDS = {
    "tensor_dtype_code": "uint8",
    "tensor_dtype_bits": "uint8",
    "tensor_dtype_lanes": "uint16",
    "tensor_ndim": "int32",
    "tensor_byte_offset": "uint64",
    "tensor_elem_offset": "uint64",
    "tensor_shape_i": "int64",
    "tensor_stride_i": "int64",
}
_AXIS = ArgDef("axis", "prim")


def _infer(dtype: str) -> InferFn:
    def infer(ctx: InferCtx) -> relax.StructInfo:
        ctx.tensor(0, "tensor")
        if ctx.nargs > 1 and not isinstance(ctx.sinfo(1), relax.PrimStructInfo):
            ctx.fail("axis must be an integer scalar")
        return relax.PrimStructInfo(dtype)

    return infer


for _field, _dtype in _FIELDS.items():
    _args = (ArgDef("tensor"), _AXIS) if _field.endswith("_i") else (ArgDef("tensor"),)
    register(OpDef(f"relax.inspect.{_field}", _args, (), K.kOpaque, _infer(_dtype)))
