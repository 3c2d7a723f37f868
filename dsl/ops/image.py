"""`R.image`: resize2d/resize3d, grid_sample, affine_grid.

`roi` is stored as float32 immediates because TVM prints it that way
(`roi=[T.float32(0.0), ...]`); a single `size` is used for every spatial dim.
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, known_shape, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.data_layout import check_layout, check_rank, from_plain, to_plain
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, BuildCtx, OpDef, define, register
from tvmlite.dsl.ops.registry import OpPatternKind as K


def _resize_attrs(n: int, layout: str, rounding: str) -> tuple[AttrDef, ...]:
    return (
        AttrDef("roi", tuple(tir.FloatImm("float32", 0.0) for _ in range(2 * n)), "floatimms"),
        AttrDef("layout", layout, "str"),
        AttrDef("method", "linear", "str"),
        AttrDef("coordinate_transformation_mode", "half_pixel", "str"),
        AttrDef("rounding_method", rounding, "str"),
        AttrDef("cubic_alpha", -0.75, "float"),
        AttrDef("cubic_exclude", 0, "int"),
        AttrDef("extrapolation_value", 0.0, "float"),
        AttrDef("out_dtype", None, "dtype?"),
    )


def _spread_size(ctx: BuildCtx, n: int) -> None:
    size = ctx.args[1]
    if isinstance(size, relax.ShapeExpr) and len(size.values) == 1 and n > 1:
        ctx.args[1] = relax.ShapeExpr(size.values * n, span=size.span)


def build_resize2d(ctx: BuildCtx) -> None:
    _spread_size(ctx, 2)


def build_resize3d(ctx: BuildCtx) -> None:
    _spread_size(ctx, 3)


def _resize(ctx: InferCtx, spatial: str) -> relax.StructInfo:
    data = ctx.tensor(0)
    dtype = ctx.attr("out_dtype") or data.dtype
    plain = "NC" + spatial
    layout = check_layout(ctx, ctx.attr("layout"), plain, "data")
    if ctx.shape_ndim(1) not in (-1, len(spatial)):
        ctx.fail(f"size must have {len(spatial)} entries, got {ctx.shape_ndim(1)}")
    check_rank(ctx, layout, ndim_of(data), "data")
    size = ctx.shape_arg(1)
    shape = known_shape(data)
    if shape is None or size is None:
        return tensor_sinfo(None, dtype, layout.ndim)
    dims = to_plain(ctx, layout, shape, plain)
    dims.update(zip(spatial, size, strict=True))
    return tensor_sinfo(from_plain(layout, dims), dtype)


def infer_resize2d(ctx: InferCtx) -> relax.StructInfo:
    return _resize(ctx, "HW")


def infer_resize3d(ctx: InferCtx) -> relax.StructInfo:
    return _resize(ctx, "DHW")


register(
    OpDef(
        "relax.image.resize2d",
        (ArgDef("data"), ArgDef("size", "shape")),
        _resize_attrs(2, "NCHW", "round"),
        K.kInjective,
        infer_resize2d,
        build_resize2d,
    )
)
register(
    OpDef(
        "relax.image.resize3d",
        (ArgDef("data"), ArgDef("size", "shape")),
        _resize_attrs(3, "NCDHW", ""),
        K.kInjective,
        infer_resize3d,
        build_resize3d,
    )
)


@define(
    "relax.image.grid_sample",
    ("data", "grid"),
    (
        AttrDef("method", "bilinear", "str"),
        AttrDef("layout", "NCHW", "str"),
        AttrDef("padding_mode", "zeros", "str"),
        AttrDef("align_corners", False, "bool"),
    ),
    K.kOpaque,
)
def infer_grid_sample(ctx: InferCtx) -> relax.StructInfo:
    """TVM's: the grid is (N, 2, H_out, W_out) (or (N, 3, D_out, H_out, W_out)); the
    output keeps the input's N and C and takes the grid's spatial dims."""
    data, grid = ctx.tensor(0), ctx.tensor(1)
    layout = ctx.attr("layout")
    rank = len(layout)
    shape, gshape = known_shape(data), known_shape(grid)
    if shape is None or gshape is None or len(shape) != rank or len(gshape) != rank:
        return tensor_sinfo(None, data.dtype, rank)
    out = list(shape)
    spatial = [k for k, letter in enumerate(layout) if letter not in "NC"]
    for k, pos in enumerate(spatial):
        out[pos] = gshape[2 + k]
    return tensor_sinfo(tuple(out), data.dtype)


@define(
    "relax.image.affine_grid",
    (ArgDef("data"), ArgDef("size", "shape")),
    (AttrDef("align_corners", True, "bool"),),
    K.kInjective,
)
def infer_affine_grid(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    size = ctx.shape_arg(1)
    shape = known_shape(data)
    if size is not None and len(size) not in (2, 3):
        ctx.fail(f"size must have 2 or 3 entries, got {len(size)}")
    if shape is None or size is None:
        return tensor_sinfo(None, data.dtype, 4 if size is None else len(size) + 2)
    return tensor_sinfo((shape[0], sa.const(len(size)), *size), data.dtype)
