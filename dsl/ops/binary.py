"""Broadcasting operators: arithmetic, comparison, logical and bitwise binaries,
plus the ternaries `R.where` and `R.ewise_fma`.

Broadcasting follows TVM: shapes align on the right; a dim of 1 yields to the
other; equal dims stay; two different constants are an error; anything the
rules cannot decide (`n` against `2`, `n` against `m`) drops the static shape
and keeps only the rank.
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import (
    InferCtx,
    Shape,
    known_shape,
    like,
    ndim_of,
    sinfo_of,
    tensor_sinfo,
)
from tvmlite.dsl.ops.registry import ArgDef, OpDef, register
from tvmlite.dsl.ops.registry import OpPatternKind as K

ARITH_BINARY = (
    "add",
    "atan2",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "divide",
    "floor_divide",
    "floor_mod",
    "left_shift",
    "log_add_exp",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "power",
    "right_shift",
    "subtract",
)
COMPARE_BINARY = ("equal", "greater", "greater_equal", "less", "less_equal", "not_equal")


# Dim classes for which `sa.equal(d, d)` always holds (a generic node may hold a NaN).
_SELF_EQUAL = (tir.IntImm, tir.Var)


class _Undecided(Exception):
    """A pair of dims whose broadcast TVM cannot decide statically."""


def _broadcast_dim(ctx: InferCtx, a: tir.PrimExpr, b: tir.PrimExpr, axis: int) -> tir.PrimExpr:
    ta = type(a)
    if ta is tir.IntImm and type(b) is tir.IntImm and a.dtype != "bool" and b.dtype != "bool":
        # Two constants, the common case, decided as the general rules below would.
        va, vb = a.value, b.value
        if va == 1:
            return b
        if vb == 1 or va == vb:
            return a
        ctx.fail(f"shapes cannot broadcast: dim {axis} is {va} vs {vb}")
    if a is b and ta in _SELF_EQUAL:
        return a  # what the rules below give for one dim against itself
    va, vb = sa.as_int(a), sa.as_int(b)
    if va == 1:
        return b
    if vb == 1:
        return a
    if sa.equal(a, b):
        return a
    if va is not None and vb is not None:
        ctx.fail(f"shapes cannot broadcast: dim {axis} is {va} vs {vb}")
    raise _Undecided


def broadcast_shapes(ctx: InferCtx, shapes: list[Shape]) -> Shape | None:
    """The broadcast of static or symbolic shapes; None when undecidable. Dims are
    compared from the last, as TVM does: dims that certainly differ are an error
    up to the first pair that cannot be decided (`(n, 784)` and `(784, 64)` fail
    on 784 against 64)."""
    if len(shapes) == 2 and len(shapes[0]) == len(shapes[1]):
        # Two operands of one rank (most binaries): the general loop, unrolled.
        pairs = list(enumerate(zip(shapes[0], shapes[1], strict=True)))
        try:
            dims = [_broadcast_dim(ctx, a, b, axis) for axis, (a, b) in reversed(pairs)]
        except _Undecided:
            return None
        return tuple(reversed(dims))
    rank = max(len(s) for s in shapes)
    out: list[tir.PrimExpr] = []
    try:
        for axis in reversed(range(rank)):
            dim: tir.PrimExpr | None = None
            for shape in shapes:
                index = axis - rank + len(shape)
                if index < 0:
                    continue
                d = shape[index]
                dim = d if dim is None else _broadcast_dim(ctx, dim, d, axis)
            out.append(sa.const(1) if dim is None else dim)
    except _Undecided:
        return None
    return tuple(reversed(out))


def broadcast_result(
    ctx: InferCtx, tensors: list[relax.TensorStructInfo], dtype: str
) -> relax.TensorStructInfo:
    shapes = [known_shape(t) for t in tensors]
    if None not in shapes:
        shape = broadcast_shapes(ctx, shapes)  # type: ignore[arg-type]
        if shape is not None:
            # TVM keeps the operand's own shape object when nothing changes.
            for t, s in zip(tensors, shapes, strict=True):
                if isinstance(t.shape, relax.Var) and sa.same(s, shape):
                    return like(t, dtype)
            return tensor_sinfo(shape, dtype)
    ndims = [ndim_of(t) for t in tensors]
    ndim = -1 if any(n < 0 for n in ndims) else max(ndims)
    return tensor_sinfo(None, dtype, ndim)


def _binary(ctx: InferCtx, compare: bool) -> relax.StructInfo:
    """Operands of two different dtypes (`dtype_conflict`) give an unknown (`void`)
    arithmetic result, a bool comparison, as TVM's parser keeps them; `lower`/`build`
    refuse them."""
    left, right = ctx.sinfo(0), ctx.sinfo(1)
    if isinstance(left, relax.PrimStructInfo) and isinstance(right, relax.PrimStructInfo):
        dtype = left.dtype if left.dtype == right.dtype else "void"
        return relax.PrimStructInfo("bool" if compare else dtype)
    a, b = ctx.as_tensor(left, "x1", True), ctx.as_tensor(right, "x2", True)
    dtype = "bool" if compare else (a.dtype if _agree(a.dtype, b.dtype) else "void")
    return broadcast_result(ctx, [a, b], dtype)


def _agree(a: str, b: str) -> bool:
    """Whether TVM gives a two-operand arithmetic result the first operand's dtype: the
    same dtypes, or a known one against bool (`x + mask`)."""
    return a == b or ("void" not in (a, b) and "bool" in (a, b))


_ARITH_OPS = frozenset(f"relax.{name}" for name in ARITH_BINARY)


def dtype_conflict(call: relax.Call) -> str | None:
    """The error for an arithmetic binary operator on two different known dtypes
    (`R.add` of an int64 and an int32 scalar), None when the call is no such thing."""
    if not (isinstance(call.op, relax.Op) and call.op.name in _ARITH_OPS) or len(call.args) != 2:
        return None  # a comparison is bool, its kernel compares the promoted operands
    a, b = (getattr(sinfo_of(arg), "dtype", "void") for arg in call.args)
    if a == "void" or b == "void" or a == b:
        return None
    name = call.op.name.replace("relax.", "R.")
    message = f"{name}: operands must have the same dtype, got {a} and {b}"
    if _agree(a, b):  # TVM types it, but its kernel computes in the promoted dtype
        message += f" (TVM types the result {a} but computes it in the wider dtype: cast first)"
    return message


def infer_arith_binary(ctx: InferCtx) -> relax.StructInfo:
    return _binary(ctx, compare=False)


def infer_compare_binary(ctx: InferCtx) -> relax.StructInfo:
    return _binary(ctx, compare=True)


for _name in ARITH_BINARY:
    register(
        OpDef(f"relax.{_name}", (ArgDef("x1"), ArgDef("x2")), (), K.kBroadcast, infer_arith_binary)
    )
for _name in COMPARE_BINARY:
    register(
        OpDef(
            f"relax.{_name}", (ArgDef("x1"), ArgDef("x2")), (), K.kBroadcast, infer_compare_binary
        )
    )


def infer_where(ctx: InferCtx) -> relax.StructInfo:
    cond, a, b = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    if cond.dtype not in ("void", "bool"):
        ctx.fail(f"condition must have dtype bool, got {cond.dtype}")
    dtype = ctx.same_dtype(a.dtype, b.dtype, "x1 and x2")
    return broadcast_result(ctx, [cond, a, b], dtype)


register(
    OpDef(
        "relax.where",
        (ArgDef("condition"), ArgDef("x1"), ArgDef("x2")),
        (),
        K.kBroadcast,
        infer_where,
    )
)


def infer_ewise_fma(ctx: InferCtx) -> relax.StructInfo:
    tensors = [ctx.tensor(i) for i in range(3)]
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = ctx.same_dtype(dtype, t.dtype)
    shapes = [known_shape(t) for t in tensors]
    if all(s is not None for s in shapes):
        first = shapes[0]
        for other in shapes[1:]:
            if len(other) != len(first):  # type: ignore[arg-type]
                ctx.fail("operands must have the same rank")
            for x, y in zip(first, other, strict=True):  # type: ignore[arg-type]
                ctx.check_dims(x, y, "operand shapes differ")
    return like(tensors[0], dtype)


register(
    OpDef(
        "relax.ewise_fma",
        (ArgDef("x1"), ArgDef("x2"), ArgDef("x3")),
        (),
        K.kElemWise,
        infer_ewise_fma,
    )
)
