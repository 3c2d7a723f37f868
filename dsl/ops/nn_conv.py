"""Convolutions, transposed convolutions and pools (1-d, 2-d, 3-d).

Each rule is TVM's: the data, kernel and output layouts must convert to the plain
layout the rule is written in (`NCHW` data, `OIHW` kernels, `IOHW` for transposed
ones; `NHWC`, `HWIO` and packed `NCHW4c`/`OIHW4o` all do), shapes move to that
layout, the window arithmetic runs there, and the result moves to `out_layout`
(see `data_layout`). An omitted `out_layout` becomes the data layout, as TVM's
wrappers set it.
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, known_shape, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.data_layout import (
    DataLayout,
    check_layout,
    check_rank,
    from_plain,
    to_plain,
)
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, BuildCtx, InferFn, OpDef, register
from tvmlite.dsl.ops.registry import OpPatternKind as K

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
DATA_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def build_out_layout(ctx: BuildCtx) -> None:
    key = "data_layout" if "data_layout" in ctx.attrs else "layout"
    if ctx.attrs.get("out_layout") is None:
        ctx.attrs["out_layout"] = ctx.attrs[key]


def _window(
    ctx: InferCtx, size: tir.PrimExpr, kernel: tir.PrimExpr, i: int, n: int
) -> tir.PrimExpr:
    """Output length of a strided, dilated, padded window over `size` (TVM lets a
    window longer than the data give a length below 1; a build refuses it)."""
    stride, dilation = ctx.attr("strides")[i], ctx.attr("dilation")[i]
    padding = ctx.attr("padding")
    extent = sa.add(sa.mul(sa.const(dilation), sa.sub(kernel, sa.const(1))), sa.const(1))
    span = sa.sub(sa.add(size, sa.const(padding[i] + padding[i + n])), extent)
    return sa.add(sa.floordiv(span, sa.const(stride)), sa.const(1))


def _ceil_window(ctx: InferCtx, size: tir.PrimExpr, i: int, n: int) -> tir.PrimExpr:
    """A pool's output length in ceil mode: the last window is dropped when it would
    start in the right padding, as TVM (and PyTorch) count it."""
    stride, dilation = ctx.attr("strides")[i], ctx.attr("dilation")[i]
    padding, kernel = ctx.attr("padding"), ctx.attr("pool_size")[i]
    span = padding[i] + padding[i + n] - dilation * (kernel - 1) - 1 + stride - 1
    windows = sa.floordiv(sa.add(size, sa.const(span)), sa.const(stride))  # the last's index
    raw = sa.add(windows, sa.const(1))
    start = sa.mul(windows, sa.const(stride))  # where the last window starts
    limit = sa.add(size, sa.const(padding[i]))
    # start lies in (size + span - stride, size + span]: decided whatever the size when
    # span < padding[i] (never past) or span - stride + 1 >= padding[i] (always past)
    fixed_start, fixed_limit = sa.as_int(start), sa.as_int(limit)
    if fixed_start is not None and fixed_limit is not None:
        return windows if fixed_start >= fixed_limit else raw
    if span < padding[i]:
        return raw
    if span - stride + 1 >= padding[i]:
        return windows
    past = tir.BinaryOp("ge", start, limit, "bool")
    return tir.Call("int64", "if_then_else", (past, windows, raw))


def _dtype(ctx: InferCtx, data: relax.TensorStructInfo, weight: relax.TensorStructInfo) -> str:
    out_dtype = ctx.attr("out_dtype")
    return out_dtype if out_dtype is not None else ctx.arith_dtype(data.dtype, weight.dtype)


def _conv(ctx: InferCtx, n: int, transpose: bool) -> relax.StructInfo:
    data, weight = ctx.tensor(0), ctx.tensor(1)
    spatial = SPATIAL[n]
    plain = "NC" + spatial
    kernel_plain = ("IO" if transpose else "OI") + spatial
    dl = check_layout(ctx, ctx.attr("data_layout"), plain, "data")
    kl = check_layout(ctx, ctx.attr("kernel_layout"), kernel_plain, "kernel")
    ol = check_layout(ctx, ctx.attr("out_layout") or ctx.attr("data_layout"), plain, "output")
    check_rank(ctx, dl, ndim_of(data), "data")
    check_rank(ctx, kl, ndim_of(weight), "weight")
    dtype = _dtype(ctx, data, weight)
    dshape, kshape = known_shape(data), known_shape(weight)
    if dshape is None or kshape is None:
        return tensor_sinfo(None, dtype, ol.ndim)
    d = to_plain(ctx, dl, dshape, plain)
    k = to_plain(ctx, kl, kshape, kernel_plain)
    groups = ctx.attr("groups")
    if transpose:
        ctx.check_dims(d["C"], k["I"], "data channels differ from the weight's input channels")
        if sa.as_int(k["I"]) is not None and sa.as_int(k["I"]) % groups:  # type: ignore[operator]
            ctx.fail(
                f"weight input channels {sa.show(k['I'])} are not divisible by {groups} groups"
            )
        out_channels = sa.mul(k["O"], sa.const(groups))
    else:
        ctx.check_dims(
            d["C"],
            sa.mul(k["I"], sa.const(groups)),
            "data channels differ from weight input channels times groups",
        )
        if sa.as_int(k["O"]) is not None and sa.as_int(k["O"]) % groups:  # type: ignore[operator]
            ctx.fail(f"output channels {sa.show(k['O'])} are not divisible by {groups} groups")
        out_channels = k["O"]
    dims = {"N": d["N"], "C": out_channels}
    for i, letter in enumerate(spatial):
        size, kernel = d[letter], k[letter]
        if transpose:
            stride, dilation = ctx.attr("strides")[i], ctx.attr("dilation")[i]
            output_padding = ctx.attr("output_padding")[i]
            if output_padding >= stride:
                ctx.fail(
                    f"output_padding {list(ctx.attr('output_padding'))} must be less than "
                    f"strides {list(ctx.attr('strides'))}"
                )
            pad = ctx.attr("padding")[i] + ctx.attr("padding")[i + n]
            # (size - 1) * stride - pad + dilation * (kernel - 1) + output_padding + 1,
            # with the constants gathered as TVM's analyzer leaves them (`s * 2 - 1`)
            extent = sa.mul(sa.const(dilation), sa.sub(kernel, sa.const(1)))
            out = sa.add(sa.mul(size, sa.const(stride)), extent)
            dims[letter] = sa.add(out, sa.const(output_padding + 1 - pad - stride))
        else:
            dims[letter] = _window(ctx, size, kernel, i, n)
    return tensor_sinfo(from_plain(ol, dims), dtype)


def _pool_layouts(ctx: InferCtx, n: int) -> tuple[str, DataLayout, DataLayout]:
    plain = "NC" + SPATIAL[n]
    layout = check_layout(ctx, ctx.attr("layout"), plain, "data")
    out = check_layout(ctx, ctx.attr("out_layout") or ctx.attr("layout"), plain, "output")
    check_rank(ctx, layout, ndim_of(ctx.tensor(0)), "data")
    return plain, layout, out


def _pool(ctx: InferCtx, n: int) -> relax.StructInfo:
    data = ctx.tensor(0)
    plain, layout, out_layout = _pool_layouts(ctx, n)
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, out_layout.ndim)
    dims = to_plain(ctx, layout, shape, plain)
    sizes = ctx.attr("pool_size")
    for i, letter in enumerate(SPATIAL[n]):
        if ctx.attr("ceil_mode"):
            dims[letter] = _ceil_window(ctx, dims[letter], i, n)
        else:
            dims[letter] = _window(ctx, dims[letter], sa.const(sizes[i]), i, n)
    return tensor_sinfo(from_plain(out_layout, dims), data.dtype)


def _adaptive_pool(ctx: InferCtx, n: int) -> relax.StructInfo:
    data = ctx.tensor(0)
    plain, layout, out_layout = _pool_layouts(ctx, n)
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, out_layout.ndim)
    dims = to_plain(ctx, layout, shape, plain)
    sizes = ctx.attr("output_size")
    if sizes is not None:
        for i, letter in enumerate(SPATIAL[n]):
            dims[letter] = sa.const(sizes[i])
    return tensor_sinfo(from_plain(out_layout, dims), data.dtype)


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
