"""Convolutions, transposed convolutions and pools (1-d, 2-d, 3-d).

Shapes are computed by layout letter (`N`, `C`, `D`, `H`, `W` for data; `O`,
`I` and the spatial letters for kernels), so `NHWC`/`HWIO` work like `NCHW`/
`OIHW`. Pools take tiled layouts (`NCHW16c`: the sub-axis passes through);
convolutions keep only their rank. An omitted `out_layout`
becomes the data layout, as TVM's wrappers set it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, known_shape, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, BuildCtx, InferFn, OpDef, register
from tvmlite.dsl.ops.registry import OpPatternKind as K

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
DATA_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def layout_axes(layout: str) -> list[str] | None:
    """`"NCHW16c"` -> `["N", "C", "H", "W", "16c"]`: the primal axes (upper case)
    and the sub-axes split off them (a factor and the primal letter in lower case);
    None for anything else."""
    axes = re.findall(r"[A-Z]|[1-9][0-9]*[a-z]", layout)
    if "".join(axes) != layout or any(a[-1].upper() not in axes for a in axes if a[-1].islower()):
        return None
    return axes if len(set(axes)) == len(axes) else None


def layout_positions(layout: str, letters: str) -> dict[str, int] | None:
    """Axis -> position in a layout whose primal axes are exactly `letters`, sub-axes
    of non-spatial axes (`16c`) included; None otherwise."""
    axes = layout_axes(layout)
    if axes is None or sorted(a for a in axes if a.isupper()) != sorted(letters):
        return None
    if any(a[-1].upper() in "DHW" for a in axes if a[-1].islower()):
        return None  # a split spatial axis: windows over it are not computed here
    return {a: i for i, a in enumerate(axes)}


def build_out_layout(ctx: BuildCtx) -> None:
    key = "data_layout" if "data_layout" in ctx.attrs else "layout"
    if ctx.attrs.get("out_layout") is None:
        ctx.attrs["out_layout"] = ctx.attrs[key]


def _window(
    ctx: InferCtx, size: tir.PrimExpr, kernel: tir.PrimExpr, i: int, n: int, ceil_mode: bool = False
) -> tir.PrimExpr:
    """Output length of a strided, dilated, padded window over `size`."""
    stride, dilation = ctx.attr("strides")[i], ctx.attr("dilation")[i]
    padding = ctx.attr("padding")
    extent = sa.add(sa.mul(sa.const(dilation), sa.sub(kernel, sa.const(1))), sa.const(1))
    span = sa.sub(sa.add(size, sa.const(padding[i] + padding[i + n])), extent)
    if ceil_mode:
        span = sa.add(span, sa.const(stride - 1))
    out = sa.add(sa.floordiv(span, sa.const(stride)), sa.const(1))
    if sa.as_int(out) is not None and sa.as_int(out) <= 0:  # type: ignore[operator]
        ctx.fail(f"the window does not fit: output size {sa.as_int(out)} on spatial dim {i}")
    return out


def _emit(
    ctx: InferCtx, dims: dict[str, tir.PrimExpr], data_layout: str, dtype: str, ndim: int
) -> relax.StructInfo:
    out_axes = layout_axes(ctx.attr("out_layout") or data_layout)
    if out_axes is None or sorted(out_axes) != sorted(dims):
        return tensor_sinfo(None, dtype, ndim)
    return tensor_sinfo(tuple(dims[a] for a in out_axes), dtype)


def _conv(ctx: InferCtx, n: int, transpose: bool) -> relax.StructInfo:
    data, weight = ctx.tensor(0), ctx.tensor(1)
    out_dtype = ctx.attr("out_dtype")
    mixed = "void" not in (data.dtype, weight.dtype) and data.dtype != weight.dtype
    if mixed and out_dtype is None:
        ctx.fail(f"data and weight must have the same dtype, got {data.dtype} and {weight.dtype}")
    dtype = out_dtype or (data.dtype if data.dtype != "void" else weight.dtype)
    for name, t in (("data", data), ("weight", weight)):
        if ndim_of(t) not in (-1, n + 2):
            ctx.fail(f"{name} must have rank {n + 2}, got {ndim_of(t)}")
    spatial = SPATIAL[n]
    dpos = layout_positions(ctx.attr("data_layout"), "NC" + spatial)
    kpos = layout_positions(ctx.attr("kernel_layout"), "OI" + spatial)
    dshape, kshape = known_shape(data), known_shape(weight)
    primal = dpos is not None and kpos is not None and len(dpos) == len(kpos) == n + 2
    if not primal or dshape is None or kshape is None:  # tiled layouts: rank only
        return tensor_sinfo(None, dtype, n + 2)
    groups = ctx.attr("groups")
    channels, k_in, k_out = dshape[dpos["C"]], kshape[kpos["I"]], kshape[kpos["O"]]
    if transpose:
        ctx.check_dims(channels, k_in, "data channels differ from the weight's input channels")
        out_channels = sa.mul(k_out, sa.const(groups))
    else:
        ctx.check_dims(
            channels,
            sa.mul(k_in, sa.const(groups)),
            "data channels differ from weight input channels times groups",
        )
        out_channels = k_out
    dims = {"N": dshape[dpos["N"]], "C": out_channels}
    for i, letter in enumerate(spatial):
        size, kernel = dshape[dpos[letter]], kshape[kpos[letter]]
        if transpose:
            stride, dilation = ctx.attr("strides")[i], ctx.attr("dilation")[i]
            pad = ctx.attr("padding")[i] + ctx.attr("padding")[i + n]
            out = sa.mul(sa.sub(size, sa.const(1)), sa.const(stride))
            out = sa.add(out, sa.mul(sa.const(dilation), sa.sub(kernel, sa.const(1))))
            extra = ctx.attr("output_padding")[i] + 1 - pad
            dims[letter] = sa.add(out, sa.const(extra))
        else:
            dims[letter] = _window(ctx, size, kernel, i, n)
    return _emit(ctx, dims, ctx.attr("data_layout"), dtype, n + 2)


def _pool(ctx: InferCtx, n: int) -> relax.StructInfo:
    data = ctx.tensor(0)
    spatial = SPATIAL[n]
    pos = layout_positions(ctx.attr("layout"), "NC" + spatial)
    rank = len(pos) if pos is not None else n + 2
    if ndim_of(data) not in (-1, rank):
        ctx.fail(f"data must have rank {rank}, got {ndim_of(data)}")
    shape = known_shape(data)
    if pos is None or shape is None:
        return tensor_sinfo(None, data.dtype, rank)
    dims = {a: shape[i] for a, i in pos.items()}
    sizes = ctx.attr("pool_size")
    for i, letter in enumerate(spatial):
        dims[letter] = _window(
            ctx, shape[pos[letter]], sa.const(sizes[i]), i, n, bool(ctx.attr("ceil_mode"))
        )
    return _emit(ctx, dims, ctx.attr("layout"), data.dtype, rank)


def _adaptive_pool(ctx: InferCtx, n: int) -> relax.StructInfo:
    data = ctx.tensor(0)
    spatial = SPATIAL[n]
    pos = layout_positions(ctx.attr("layout"), "NC" + spatial)
    rank = len(pos) if pos is not None else n + 2
    shape = known_shape(data)
    if pos is None or shape is None:
        return tensor_sinfo(None, data.dtype, rank)
    if len(shape) != rank:
        ctx.fail(f"data must have rank {rank}, got {len(shape)}")
    sizes = ctx.attr("output_size")
    dims = {a: shape[i] for a, i in pos.items()}
    if sizes is not None:
        for i, letter in enumerate(spatial):
            dims[letter] = sa.const(sizes[i])
    return _emit(ctx, dims, ctx.attr("layout"), data.dtype, rank)


def _conv_attrs(n: int, transpose: bool) -> tuple[AttrDef, ...]:
    kernel = ("IO" if transpose else "OI") + SPATIAL[n]
    head = [
        AttrDef("strides", (1,) * n, f"ints/{n}"),
        AttrDef("padding", (0,) * (2 * n), f"pad/{n}"),
    ]
    if transpose:
        head.append(AttrDef("output_padding", (0,) * n, f"ints/{n}"))
    return (
        *head,
        AttrDef("dilation", (1,) * n, f"ints/{n}"),
        AttrDef("groups", 1, "int"),
        AttrDef("data_layout", DATA_LAYOUT[n], "str"),
        AttrDef("kernel_layout", kernel, "str"),
        AttrDef("out_layout", None, "str?"),
        AttrDef("out_dtype", None, "dtype?"),
    )


def pool_attrs(n: int, count_include_pad: bool) -> tuple[AttrDef, ...]:
    return (
        AttrDef("pool_size", (1,) * n, f"ints/{n}"),
        AttrDef("strides", (1,) * n, f"ints/{n}"),
        AttrDef("dilation", (1,) * n, f"ints/{n}"),
        AttrDef("padding", (0,) * (2 * n), f"pad/{n}"),
        AttrDef("ceil_mode", False, "bool"),
        AttrDef("count_include_pad", count_include_pad, "bool"),
        AttrDef("layout", DATA_LAYOUT[n], "str"),
        AttrDef("out_layout", None, "str?"),
    )


def _bind(shape_fn: Callable[..., relax.StructInfo], name: str, n: int, **kw: bool) -> InferFn:
    """The inference function of the `n`-d op that `shape_fn` computes."""

    def infer(ctx: InferCtx) -> relax.StructInfo:
        return shape_fn(ctx, n, **kw)

    infer.__name__ = infer.__qualname__ = f"infer_{name}"
    return infer


_CONV = {n: _bind(_conv, f"conv{n}d", n, transpose=False) for n in (1, 2, 3)}
_CONV_T = {n: _bind(_conv, f"conv{n}d_transpose", n, transpose=True) for n in (1, 2, 3)}
_POOL = {n: _bind(_pool, f"pool{n}d", n) for n in (1, 2, 3)}
_ADAPTIVE = {n: _bind(_adaptive_pool, f"adaptive{n}d", n) for n in (1, 2, 3)}
# The Python signature puts padding before dilation; the attributes do not.
POOL_SIGNATURE = (
    "data",
    "pool_size",
    "strides",
    "padding",
    "dilation",
    "ceil_mode",
    "count_include_pad",
    "layout",
    "out_layout",
)

for _n in (1, 2, 3):
    _d = f"{_n}d"
    for _suffix, _transpose, _infer in (("", False, _CONV), ("_transpose", True, _CONV_T)):
        register(
            OpDef(
                f"relax.nn.conv{_d}{_suffix}",
                (ArgDef("data"), ArgDef("weight")),
                _conv_attrs(_n, _transpose),
                K.kOutEWiseFusable,
                _infer[_n],
                build_out_layout,
            )
        )
    # TVM's avg_pool1d/3d default count_include_pad to True, avg_pool2d to False.
    for _kind, _include_pad in (("max", False), ("avg", _n != 2)):
        register(
            OpDef(
                f"relax.nn.{_kind}_pool{_d}",
                (ArgDef("data"),),
                pool_attrs(_n, _include_pad),
                K.kOutEWiseFusable,
                _POOL[_n],
                build_out_layout,
                signature=POOL_SIGNATURE,
            )
        )
    register(
        OpDef(
            f"relax.nn.adaptive_avg_pool{_d}",
            (ArgDef("data"),),
            (
                AttrDef("output_size", None, f"ints/{_n}?"),
                AttrDef("layout", DATA_LAYOUT[_n], "str"),
                AttrDef("out_layout", None, "str?"),
            ),
            K.kOutEWiseFusable,
            _ADAPTIVE[_n],
            build_out_layout,
        )
    )
