"""Elementwise unary operators: math, rounding, checks, casts and `R.clip`.

TVM splits them by dtype rule: transcendental ops demand a float input, the
rest keep any dtype, and the `is*` checks return bool. A scalar `PrimValue`
input gives a scalar result, as in TVM.
"""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops.context import InferCtx, like
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, OpDef, register
from tvmlite.dsl.ops.registry import OpPatternKind as K

# Ops that require a float input (TVM's `require_float_dtype=true`).
FLOAT_UNARY = (
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cos",
    "cosh",
    "erf",
    "exp",
    "log",
    "rsqrt",
    "sigmoid",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
)
# Ops that keep any dtype.
ANY_UNARY = (
    "abs",
    "bitwise_not",
    "ceil",
    "floor",
    "logical_not",
    "negative",
    "round",
    "sign",
    "square",
    "trunc",
)
CHECK_UNARY = ("isfinite", "isinf", "isnan")


def unary_result(ctx: InferCtx, require_float: bool, dtype: str | None = None) -> relax.StructInfo:
    """Result of an elementwise op on argument 0: same shape, `dtype` or the input's."""
    sinfo = ctx.sinfo(0)
    if isinstance(sinfo, relax.PrimStructInfo):
        if require_float and not sinfo.dtype.startswith(("float", "bfloat")):
            ctx.fail(f"x must have a float dtype, got {sinfo.dtype}")
        return relax.PrimStructInfo(dtype or sinfo.dtype)
    tensor = ctx.tensor(0)
    if require_float:
        ctx.require_float(tensor, ctx.arg_name(0))
    return like(tensor, dtype)


def infer_float_unary(ctx: InferCtx) -> relax.StructInfo:
    return unary_result(ctx, require_float=True)


def infer_any_unary(ctx: InferCtx) -> relax.StructInfo:
    return unary_result(ctx, require_float=False)


def infer_check_unary(ctx: InferCtx) -> relax.StructInfo:
    return unary_result(ctx, require_float=False, dtype="bool")


for _name in FLOAT_UNARY:
    register(OpDef(f"relax.{_name}", (ArgDef("x"),), (), K.kElemWise, infer_float_unary))
for _name in ANY_UNARY:
    register(OpDef(f"relax.{_name}", (ArgDef("x"),), (), K.kElemWise, infer_any_unary))
for _name in CHECK_UNARY:
    register(OpDef(f"relax.{_name}", (ArgDef("x"),), (), K.kElemWise, infer_check_unary))


def infer_clip(ctx: InferCtx) -> relax.StructInfo:
    for index in (1, 2):
        if not isinstance(ctx.sinfo(index), relax.PrimStructInfo):
            ctx.fail(f"{ctx.arg_name(index)} must be a scalar")
    return unary_result(ctx, require_float=False)


register(
    OpDef(
        "relax.clip",
        (ArgDef("x"), ArgDef("min", "prim"), ArgDef("max", "prim")),
        (),
        K.kElemWise,
        infer_clip,
    )
)


def infer_astype(ctx: InferCtx) -> relax.StructInfo:
    return unary_result(ctx, require_float=False, dtype=ctx.attr("dtype"))


register(
    OpDef(
        "relax.astype",
        (ArgDef("x"),),
        (AttrDef("dtype", kind="dtype"),),
        K.kElemWise,
        infer_astype,
    )
)
register(
    OpDef(
        "relax.wrap_param",
        (ArgDef("data"),),
        (AttrDef("dtype", "float32", "dtype"),),
        K.kElemWise,
        infer_astype,
    )
)


def infer_identity(ctx: InferCtx) -> relax.StructInfo:
    """Ops that hand their input through unchanged (hints, barriers)."""
    return ctx.sinfo(0)


register(
    OpDef(
        "relax.builtin.stop_lift_params",
        (ArgDef("x"),),
        (),
        K.kElemWise,
        infer_identity,
        aliases=("relax.stop_lift_params",),
    )
)
