"""Sorting and searching: sort, argsort, topk, unique, nonzero, bucketize,
multinomial_from_uniform.

`R.unique` takes its flags as Relax scalar arguments (TVM prints them
positionally), and its result sizes are data dependent, so only ranks are known.
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, define
from tvmlite.dsl.ops.registry import OpPatternKind as K


def _check_axis(ctx: InferCtx, data: relax.TensorStructInfo) -> int | None:
    ndim = ndim_of(data)
    return ctx.axis(ctx.attr("axis"), ndim) if ndim >= 0 else None


@define(
    "relax.sort",
    ("x",),
    (AttrDef("axis", -1, "int"), AttrDef("descending", False, "bool")),
    K.kOpaque,
)
def infer_sort(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    _check_axis(ctx, data)
    return like(data)


@define(
    "relax.argsort",
    ("data",),
    (
        AttrDef("axis", -1, "int"),
        AttrDef("descending", False, "bool"),
        AttrDef("dtype", "int32", "dtype?"),
    ),
    K.kOpaque,
)
def infer_argsort(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    _check_axis(ctx, data)
    return like(data, ctx.attr("dtype") or "int32")


@define(
    "relax.topk",
    ("data",),
    (
        AttrDef("k", 1, "int"),
        AttrDef("axis", -1, "int"),
        AttrDef("ret_type", "both", "str"),
        AttrDef("largest", True, "bool"),
        AttrDef("dtype", "int32", "dtype?"),
    ),
    K.kOpaque,
)
def infer_topk(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    ret_type = ctx.attr("ret_type")
    if ret_type not in ("both", "values", "indices"):
        ctx.fail(f"ret_type must be 'both', 'values' or 'indices', got {ret_type!r}")
    index_dtype = ctx.attr("dtype") or "int32"
    axis = _check_axis(ctx, data)
    shape = known_shape(data)
    k = ctx.attr("k")
    if shape is None or axis is None:
        values = tensor_sinfo(None, data.dtype, ndim_of(data))
    else:
        dims = list(shape)
        if k >= 1:
            dims[axis] = sa.const(k)
        values = tensor_sinfo(tuple(dims), data.dtype)
    indices = relax.TensorStructInfo(values.shape, index_dtype, values.ndim)
    if ret_type == "values":
        return values
    if ret_type == "indices":
        return indices
    return relax.TupleStructInfo((values, indices))


@define(
    "relax.unique",
    (
        ArgDef("x"),
        ArgDef("sorted", "prim", True),
        ArgDef("return_index", "prim", False),
        ArgDef("return_inverse", "prim", False),
        ArgDef("return_counts", "prim", False),
        ArgDef("axis", "prim", None),
    ),
    (),
    K.kOpaque,
)
def infer_unique(ctx: InferCtx) -> relax.StructInfo:
    """The unique values (1-d, or the input's rank along `axis`), then an int64
    vector per requested index/inverse/counts; a 0-d input gives `(1,)` for each
    (TVM's inference)."""
    data = ctx.tensor(0)
    flags = []
    for index in range(1, 5):
        value = ctx.prim(index)
        flags.append(bool(getattr(value, "value", False)))
    ndim = ndim_of(data)
    axis = ctx.prim(5) if ctx.nargs > 5 else None
    if isinstance(axis, tir.IntImm) and ndim >= 0:
        ctx.axis(axis.value, ndim)
    one = (sa.const(1),)
    if ndim == 0:
        values, indices = tensor_sinfo(one, data.dtype), tensor_sinfo(one, "int64")
    else:
        values = tensor_sinfo(None, data.dtype, ndim if axis is not None else 1)
        indices = tensor_sinfo(None, "int64", 1)
    fields = [values] + [indices for flag in flags[1:] if flag]
    return fields[0] if len(fields) == 1 else relax.TupleStructInfo(tuple(fields))


@define("relax.nonzero", ("x",), (), K.kOpaque)
def infer_nonzero(ctx: InferCtx) -> relax.StructInfo:
    ctx.tensor(0)
    return tensor_sinfo(None, "int64", 2)


@define(
    "relax.bucketize",
    ("input_tensor", "boundaries"),
    (AttrDef("out_int32", False, "bool"), AttrDef("right", False, "bool")),
    K.kOpaque,
)
def infer_bucketize(ctx: InferCtx) -> relax.StructInfo:
    data, bounds = ctx.tensor(0), ctx.tensor(1)
    if ndim_of(bounds) not in (-1, 1):
        ctx.fail(f"boundaries must be 1-d, got rank {ndim_of(bounds)}")
    return like(data, "int32" if ctx.attr("out_int32") else "int64")


@define(
    "relax.multinomial_from_uniform",
    ("prob", "uniform_sample", "sample_indices"),
    (AttrDef("dtype", "int64", "dtype"),),
    K.kOpaque,
)
def infer_multinomial(ctx: InferCtx) -> relax.StructInfo:
    ctx.tensor(0)
    ctx.tensor(1)
    indices = ctx.tensor(2)
    ctx.require_int(indices, "sample_indices")
    return like(indices, ctx.attr("dtype"))
