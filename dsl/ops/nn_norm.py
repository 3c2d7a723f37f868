"""Normalizations: batch_norm, layer_norm, group_norm, instance_norm, rms_norm.

Each returns the data's struct info (batch_norm adds the running mean and
variance); the checks are the ones TVM makes: float data, axes in range, and
scale/shift vectors that match the normalized dims when both are static.
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import relax
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, ndim_of
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, define
from tvmlite.dsl.ops.registry import OpPatternKind as K

EPS = AttrDef("epsilon", 1e-5, "float")
CENTER_SCALE = (AttrDef("center", True, "bool"), AttrDef("scale", True, "bool"))


def _check_params(
    ctx: InferCtx, data: relax.TensorStructInfo, axes: list[int], first: int, last: int
) -> None:
    """Arguments first..last-1 hold one value per element of the `axes` dims."""
    shape = known_shape(data)
    for index in range(first, last):
        param = ctx.tensor(index)
        ctx.same_dtype(data.dtype, param.dtype, f"data and {ctx.arg_name(index)}")
        pshape = known_shape(param)
        if shape is None or pshape is None:
            continue
        if len(pshape) != len(axes):
            ctx.fail(f"{ctx.arg_name(index)} must have rank {len(axes)}, got {len(pshape)}")
        for axis, dim in zip(axes, pshape, strict=True):
            ctx.check_dims(dim, shape[axis], f"{ctx.arg_name(index)} does not match the data")


def _checked_data(
    ctx: InferCtx,
    last: int,
    param_axes: Callable[[relax.TensorStructInfo, int], list[int]],
) -> relax.TensorStructInfo:
    """Check that the data is float and, at known rank, that arguments 1..last-1
    match the dims `param_axes(data, ndim)` picks (after its own checks)."""
    data = ctx.tensor(0)
    ctx.require_float(data, "data")
    ndim = ndim_of(data)
    if ndim >= 0:
        _check_params(ctx, data, param_axes(data, ndim), 1, last)
    return data


def _attr_axes(ctx: InferCtx) -> Callable[[relax.TensorStructInfo, int], list[int]]:
    return lambda _data, ndim: ctx.axes(ctx.attr("axes"), ndim, "axes")


def _channel_axis(ctx: InferCtx, ndim: int) -> int:
    channel = ctx.axis(ctx.attr("channel_axis"), ndim, "channel_axis")
    ctx.axes(ctx.attr("axes"), ndim, "axes")
    return channel


@define(
    "relax.nn.batch_norm",
    ("data", "gamma", "beta", "moving_mean", "moving_var"),
    (
        AttrDef("axis", kind="int"),
        EPS,
        *CENTER_SCALE,
        AttrDef("momentum", 0.1, "float"),
        AttrDef("training", True, "bool"),
    ),
    K.kOutEWiseFusable,
)
def infer_batch_norm(ctx: InferCtx) -> relax.StructInfo:
    data = _checked_data(ctx, 5, lambda _data, ndim: [ctx.axis(ctx.attr("axis"), ndim)])
    mean, var = ctx.tensor(3), ctx.tensor(4)
    return relax.TupleStructInfo((like(data), like(mean), like(var)))


@define(
    "relax.nn.layer_norm",
    ("data", "gamma", "beta"),
    (AttrDef("axes", kind="ints"), EPS, *CENTER_SCALE),
    K.kOutEWiseFusable,
)
def infer_layer_norm(ctx: InferCtx) -> relax.StructInfo:
    return like(_checked_data(ctx, 3, _attr_axes(ctx)))


@define(
    "relax.nn.group_norm",
    ("data", "gamma", "beta"),
    (
        AttrDef("num_groups", kind="int"),
        AttrDef("channel_axis", kind="int"),
        AttrDef("axes", kind="ints"),
        EPS,
        *CENTER_SCALE,
    ),
    K.kOutEWiseFusable,
)
def infer_group_norm(ctx: InferCtx) -> relax.StructInfo:
    def group_channel(data: relax.TensorStructInfo, ndim: int) -> list[int]:
        channel = _channel_axis(ctx, ndim)
        shape = known_shape(data)
        groups = ctx.attr("num_groups")
        if groups <= 0:
            ctx.fail(f"num_groups must be positive, got {groups}")
        if shape is not None:
            channels = getattr(shape[channel], "value", None)
            if isinstance(channels, int) and channels % groups:
                ctx.fail(f"channels {channels} are not divisible by num_groups {groups}")
        return [channel]

    return like(_checked_data(ctx, 3, group_channel))


@define(
    "relax.nn.instance_norm",
    ("data", "gamma", "beta"),
    (AttrDef("channel_axis", kind="int"), AttrDef("axes", kind="ints"), EPS, *CENTER_SCALE),
    K.kOutEWiseFusable,
)
def infer_instance_norm(ctx: InferCtx) -> relax.StructInfo:
    return like(_checked_data(ctx, 3, lambda _data, ndim: [_channel_axis(ctx, ndim)]))


@define(
    "relax.nn.rms_norm",
    (ArgDef("data"), ArgDef("weight")),
    (AttrDef("axes", (-1,), "ints"), EPS),
    K.kOutEWiseFusable,
)
def infer_rms_norm(ctx: InferCtx) -> relax.StructInfo:
    return like(_checked_data(ctx, 2, _attr_axes(ctx)))
