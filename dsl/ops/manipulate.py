"""Shape manipulation: reshape, permute_dims, expand_dims, squeeze, flatten,
broadcast_to, tile, repeat, flip, layout_transform, collapse_sum_*.

Element counts are compared only when both are constants: a symbolic reshape
is trusted, as TVM trusts what its analyzer cannot disprove.
"""

from __future__ import annotations

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.index_map import IndexMap, IndexMapError, IndexMapOffset, analyze
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import (
    InferCtx,
    known_shape,
    like,
    ndim_of,
    sinfo_of,
    tensor_sinfo,
)
from tvmlite.dsl.ops.convert import Fail
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, BuildCtx, define
from tvmlite.dsl.ops.registry import OpPatternKind as K


def build_reshape(ctx: BuildCtx) -> None:
    """Resolve a `-1` dim from the input's element count, as TVM's wrapper does."""
    shape = ctx.args[1]
    if not isinstance(shape, relax.ShapeExpr):
        return
    holes = [i for i, d in enumerate(shape.values) if sa.as_int(d) == -1]
    if not holes:
        return
    fail = Fail(ctx.op, ctx.span)
    if len(holes) > 1:
        fail("shape may contain at most one -1")
    data = sinfo_of(ctx.args[0], ctx.span)
    dims = known_shape(data) if isinstance(data, relax.TensorStructInfo) else None
    if dims is None:
        fail("cannot infer the -1 dim of shape when the input shape is unknown")
    rest = [d for i, d in enumerate(shape.values) if i != holes[0]]
    hole = sa.floordiv(sa.product(dims), sa.product(rest))
    values = list(shape.values)
    values[holes[0]] = hole
    ctx.args[1] = relax.ShapeExpr(tuple(values), span=shape.span)


@define("relax.reshape", (ArgDef("x"), ArgDef("shape", "shape")), (), K.kInjective, build_reshape)
def infer_reshape(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    values = ctx.shape_arg(1)
    if values is None:
        shape_var = ctx.arg(1)
        if isinstance(shape_var, relax.Var):
            return relax.TensorStructInfo(shape_var, data.dtype, ctx.shape_ndim(1))
        return tensor_sinfo(None, data.dtype, ctx.shape_ndim(1))
    old = known_shape(data)
    if old is not None:
        before, after = sa.product(old), sa.product(values)
        if sa.differ(before, after):
            ctx.fail(
                f"cannot reshape {sa.show(before)} elements into shape "
                f"{sa.show_shape(values)} ({sa.show(after)} elements)"
            )
    return tensor_sinfo(values, data.dtype)


@define("relax.permute_dims", ("x",), (AttrDef("axes", None, "ints?"),), K.kInjective)
def infer_permute_dims(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    axes = ctx.attr("axes")
    if axes is not None and ndim_of(data) < 0:
        ctx.fail("axes need an input of known rank (TVM requires it)")
    ndim = ndim_of(data) if axes is None else len(axes)
    if ndim_of(data) >= 0 and ndim != ndim_of(data):
        ctx.fail(f"axes {list(axes)} do not match the input rank {ndim_of(data)}")
    if ndim < 0:
        return tensor_sinfo(None, data.dtype, -1)
    order = list(range(ndim))[::-1] if axes is None else ctx.axes(axes, ndim, "axes")
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, ndim)
    return tensor_sinfo(tuple(shape[i] for i in order), data.dtype)


@define("relax.expand_dims", ("x",), (AttrDef("axis", kind="ints"),), K.kInjective)
def infer_expand_dims(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    axes = ctx.attr("axis")
    ndim = ndim_of(data)
    if ndim < 0:
        return tensor_sinfo(None, data.dtype, -1)
    out_ndim = ndim + len(axes)
    inserted = set(ctx.axes(axes, out_ndim))
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, out_ndim)
    dims = iter(shape)
    return tensor_sinfo(
        tuple(sa.const(1) if i in inserted else next(dims) for i in range(out_ndim)), data.dtype
    )


@define("relax.squeeze", ("x",), (AttrDef("axis", None, "ints?"),), K.kInjective)
def infer_squeeze(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    axes = ctx.attr("axis")
    ndim = ndim_of(data)
    shape = known_shape(data)
    if axes is None:
        if shape is None or any(sa.as_int(d) is None for d in shape):
            return tensor_sinfo(None, data.dtype, -1)
        return tensor_sinfo(tuple(d for d in shape if sa.as_int(d) != 1), data.dtype)
    if ndim < 0:
        return tensor_sinfo(None, data.dtype, -1)
    removed = set(ctx.axes(axes, ndim))
    if shape is None:
        return tensor_sinfo(None, data.dtype, ndim - len(removed))
    # Like TVM, a listed axis whose static size is not 1 is kept, not an error.
    kept = [d for i, d in enumerate(shape) if i not in removed or sa.as_int(d) not in (None, 1)]
    return tensor_sinfo(tuple(kept), data.dtype)


@define("relax.flatten", ("x",), (), K.kInjective)
def infer_flatten(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, 1)
    return tensor_sinfo((sa.product(shape),), data.dtype)


@define("relax.broadcast_to", (ArgDef("x"), ArgDef("shape", "shape")), (), K.kBroadcast)
def infer_broadcast_to(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    target = ctx.shape_arg(1)
    if target is None:
        return tensor_sinfo(None, data.dtype, ctx.shape_ndim(1))
    shape = known_shape(data)
    if shape is not None:
        if len(shape) > len(target):
            ctx.fail(f"cannot broadcast rank {len(shape)} to rank {len(target)}")
        offset = len(target) - len(shape)
        for i, dim in enumerate(shape):
            if sa.as_int(dim) != 1:
                ctx.check_dims(dim, target[offset + i], f"cannot broadcast dim {i}")
    return tensor_sinfo(target, data.dtype)


@define("relax.tile", ("data",), (AttrDef("repeats", kind="ints"),), K.kInjective)
def infer_tile(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    repeats = ctx.attr("repeats")
    ndim = ndim_of(data)
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, max(ndim, len(repeats)) if ndim >= 0 else -1)
    rank = max(len(shape), len(repeats))
    dims = [sa.const(1)] * (rank - len(shape)) + list(shape)
    reps = [1] * (rank - len(repeats)) + list(repeats)
    return tensor_sinfo(
        tuple(sa.mul(d, sa.const(r)) for d, r in zip(dims, reps, strict=True)), data.dtype
    )


@define(
    "relax.repeat",
    ("data",),
    (AttrDef("repeats", kind="int"), AttrDef("axis", None, "int?")),
    K.kInjective,
)
def infer_repeat(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    repeats, axis = ctx.attr("repeats"), ctx.attr("axis")
    shape = known_shape(data)
    if axis is None:
        if shape is None:
            return tensor_sinfo(None, data.dtype, 1)
        return tensor_sinfo((sa.mul(sa.product(shape), sa.const(repeats)),), data.dtype)
    ndim = ndim_of(data)
    if ndim < 0:
        return tensor_sinfo(None, data.dtype, -1)
    axis = ctx.axis(axis, ndim)
    if shape is None:
        return tensor_sinfo(None, data.dtype, ndim)
    dims = list(shape)
    dims[axis] = sa.mul(dims[axis], sa.const(repeats))
    return tensor_sinfo(tuple(dims), data.dtype)


@define("relax.flip", ("data",), (AttrDef("axis", kind="int"),), K.kInjective)
def infer_flip(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    if ndim_of(data) >= 0:
        ctx.axis(ctx.attr("axis"), ndim_of(data))
    return like(data)


@define(
    "relax.reverse_sequence",
    ("data", "seq_lengths"),
    (AttrDef("seq_axis", 1, "int"), AttrDef("batch_axis", 0, "int")),
    K.kInjective,
)
def infer_reverse_sequence(ctx: InferCtx) -> relax.StructInfo:
    data, lengths = ctx.tensor(0), ctx.tensor(1)
    ctx.require_int(lengths, "seq_lengths")
    shape, lshape = known_shape(data), known_shape(lengths)
    if shape is not None:
        batch = ctx.axis(ctx.attr("batch_axis"), len(shape), "batch_axis")
        ctx.axis(ctx.attr("seq_axis"), len(shape), "seq_axis")
        if lshape is not None and len(lshape) == 1:
            ctx.check_dims(lshape[0], shape[batch], "seq_lengths does not match the batch dim")
    return like(data)


def build_layout_transform(ctx: BuildCtx) -> None:
    """Check the index map and give a Python `pad_value` the input's dtype, as
    TVM's wrapper does (`pad_value=0` on a float tensor is `T.float32(0.0)`)."""
    fail = Fail(ctx.op, ctx.span)
    index_map = ctx.attrs.get("index_map")
    if isinstance(index_map, tuple) and not index_map:
        fail("index_map is required")
    if not isinstance(index_map, IndexMap):
        fail("index_map must be T.index_map(lambda ...: (...))")
    pad = ctx.attrs.get("pad_value")
    if pad is None or isinstance(pad, tir.PrimExpr):
        return
    if isinstance(pad, relax.PrimValue):
        ctx.attrs["pad_value"] = pad.value
        return
    if isinstance(pad, bool) or not isinstance(pad, (int, float)):
        fail(f"pad_value must be a number, got {pad!r}")
    data = sinfo_of(ctx.args[0], ctx.span)
    dtype = data.dtype if isinstance(data, relax.TensorStructInfo) else ""
    if isinstance(pad, int) and dt.is_integer_like(dtype or "void"):
        ctx.attrs["pad_value"] = tir.IntImm(dtype, pad)
    elif dt.is_float(dtype or "void"):
        ctx.attrs["pad_value"] = tir.FloatImm(dtype, float(pad))
    else:
        fail(f"pad_value {pad!r} does not fit the input's dtype ({dtype or 'unknown'})")


@define(
    "relax.layout_transform",
    ("x",),
    (
        AttrDef("index_map", kind="object"),
        AttrDef("pad_value", None, "object?"),
    ),
    K.kInjective,
    build_layout_transform,
)
def infer_layout_transform(ctx: InferCtx) -> relax.StructInfo:
    """The shape the index map gives the input's (TVM's `IndexMap::MapShape` on the
    tilings `dsl/index_map.py` reads); only the rank when the input's shape is
    unknown or the map is not such a tiling."""
    data = ctx.tensor(0)
    index_map = ctx.attr("index_map")
    ndim = len(index_map.final_indices)
    if data.ndim not in (-1, len(index_map.initial_indices)):
        ctx.fail(
            f"the index map takes {len(index_map.initial_indices)} indices, the input has "
            f"{data.ndim} dimensions"
        )
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, ndim)
    try:
        layout = analyze(index_map, shape)
    except IndexMapOffset as err:
        ctx.fail(f"index_map: {err}")
    except IndexMapError:
        return tensor_sinfo(None, data.dtype, ndim)
    return tensor_sinfo(layout.shape, data.dtype)


@define("relax.collapse_sum_like", ("data", "collapse_target"), (), K.kOpaque)
def infer_collapse_sum_like(ctx: InferCtx) -> relax.StructInfo:
    data, target = ctx.tensor(0), ctx.tensor(1)
    return like(target, data.dtype)


@define("relax.collapse_sum_to", (ArgDef("data"), ArgDef("shape", "shape")), (), K.kOpaque)
def infer_collapse_sum_to(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    values = ctx.shape_arg(1)
    if values is None:
        return tensor_sinfo(None, data.dtype, ctx.shape_ndim(1))
    return tensor_sinfo(values, data.dtype)
