"""Convolutions (1d-3d, transposed 1d-2d), pooling (max, average, adaptive average),
padding and pixel shuffle. Layouts are PyTorch's (NCW, NCHW, NCDHW; kernels OI..., IO...
for transposed); a bias becomes an add of the bias reshaped to broadcast over the
channel axis. Pools take an unbatched input by adding the batch axis around them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch import fx

from tvmlite.dsl import relax
from tvmlite.frontend.context import Converting
from tvmlite.frontend.registry import converts, register

_DATA_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_KERNEL_LAYOUT = {1: "OIW", 2: "OIHW", 3: "OIDHW"}
_TRANSPOSED_KERNEL_LAYOUT = {1: "IOW", 2: "IOHW"}


def conv(
    conv_: Converting,
    x: relax.Expr,
    weight: relax.Expr,
    bias: Any,
    dims: int,
    strides: Any,
    padding: Any,
    dilation: Any,
    groups: Any,
    output_padding: Any = None,
) -> relax.Var:
    """`nn.conv{dims}d` (or its transpose when `output_padding` is given), plus bias."""
    attrs = dict(
        strides=strides,
        padding=padding,
        dilation=dilation,
        groups=groups,
        data_layout=_DATA_LAYOUT[dims],
        out_dtype="float32",
    )
    if output_padding is None:
        op = f"nn.conv{dims}d"
        attrs["kernel_layout"] = _KERNEL_LAYOUT[dims]
    else:
        op = f"nn.conv{dims}d_transpose"
        attrs["kernel_layout"] = _TRANSPOSED_KERNEL_LAYOUT[dims]
        attrs["output_padding"] = output_padding
    result = conv_.emit_call(op, x, weight, **attrs)
    if bias is None or (isinstance(bias, relax.Call) and bias.op.name == "relax.null_value"):
        return result
    shaped = conv_.call("reshape", bias, (1, -1) + (1,) * dims)
    return conv_.emit(conv_.call("add", result, shaped))


@dataclass(frozen=True)
class Conv:
    """`aten.conv{1,2,3}d` and the transposed forms, arguments in ATen's order."""

    dims: int
    transposed: bool = False

    def __call__(self, conv_: Converting, node: fx.Node) -> relax.Var:
        args = conv_.args(node)
        x, weight = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        stride = args[3] if len(args) > 3 else 1
        padding = args[4] if len(args) > 4 else 0
        if self.transposed:
            output_padding = args[5] if len(args) > 5 else 0
            groups = args[6] if len(args) > 6 else 1
            dilation = args[7] if len(args) > 7 else 1
            return conv(
                conv_, x, weight, bias, self.dims, stride, padding, dilation, groups, output_padding
            )
        dilation = args[5] if len(args) > 5 else 1
        groups = args[6] if len(args) > 6 else 1
        return conv(conv_, x, weight, bias, self.dims, stride, padding, dilation, groups)


register("conv1d.default", Conv(1))
register("conv2d.default", Conv(2))
register("conv3d.default", Conv(3))
register("conv_transpose1d.default", Conv(1, transposed=True))
register("conv_transpose2d.input", Conv(2, transposed=True))


@converts("convolution.default")
def convolution(conv_: Converting, node: fx.Node) -> relax.Var:
    args = conv_.args(node)
    x, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    stride = args[3] if len(args) > 3 else 1
    padding = args[4] if len(args) > 4 else 0
    dilation = args[5] if len(args) > 5 else 1
    transposed = args[6] if len(args) > 6 else False
    output_padding = args[7] if len(args) > 7 else 0
    groups = args[8] if len(args) > 8 else 1
    dims = conv_.ndim(x) - 2
    if dims not in ((1, 2) if transposed else (1, 2, 3)):
        kind = "transposed convolution" if transposed else "convolution"
        raise conv_.error(node, f"unsupported {kind} of a {dims + 2}-d input")
    return conv(
        conv_,
        x,
        weight,
        bias,
        dims,
        stride,
        padding,
        dilation,
        groups,
        output_padding if transposed else None,
    )


# ---------------------------------------------------------------- pooling


def _batched(conv_: Converting, x: relax.Expr, dims: int) -> tuple[relax.Expr, bool]:
    """An unbatched input (rank dims + 1) with a batch axis added (not yet bound)."""
    if conv_.ndim(x) == dims + 1:
        return conv_.call("expand_dims", x, axis=0), True
    return x, False


def _unbatched(conv_: Converting, result: relax.Var, added: bool) -> relax.Expr:
    # TVM leaves the squeeze unbound: the next conversion binds it where it is used
    return conv_.call("squeeze", result, axis=[0]) if added else result


@dataclass(frozen=True)
class MaxPool:
    """`aten.max_pool{d}d` (and `_with_indices`, whose indices TVM fills with zeros)."""

    dims: int
    with_indices: bool = False

    def __call__(self, conv_: Converting, node: fx.Node) -> Any:
        args = conv_.args(node)
        x, kernel = args[0], args[1]
        stride = args[2] if len(args) > 2 else None
        padding = args[3] if len(args) > 3 else 0
        dilation = args[4] if len(args) > 4 else 1
        ceil_mode = args[5] if len(args) > 5 else False
        # an empty stride (ATen's default) means the kernel size, as in PyTorch
        stride = kernel if stride is None or stride == [] else stride
        x, added = _batched(conv_, x, self.dims)
        pooled = conv_.emit_call(
            f"nn.max_pool{self.dims}d",
            x,
            pool_size=kernel,
            strides=stride,
            padding=padding,
            dilation=dilation,
            ceil_mode=ceil_mode,
            layout=_DATA_LAYOUT[self.dims],
        )
        result = _unbatched(conv_, pooled, added)
        if not self.with_indices:
            return result
        return conv_.emit(relax.Tuple((result, conv_.call("zeros_like", result))))


for _d in (1, 2, 3):
    register(f"max_pool{_d}d.default", MaxPool(_d))
register("max_pool2d_with_indices.default", MaxPool(2, with_indices=True))
register("max_pool3d_with_indices.default", MaxPool(3, with_indices=True))


@dataclass(frozen=True)
class AvgPool:
    dims: int

    def __call__(self, conv_: Converting, node: fx.Node) -> relax.Expr:
        normalized = node.normalized_arguments(node)
        args, kwargs = (
            (normalized.args, normalized.kwargs) if normalized else (node.args, node.kwargs)
        )
        x = conv_.env[args[0]]
        kernel = args[1] if len(args) > 1 else kwargs["kernel_size"]
        stride = args[2] if len(args) > 2 else kwargs.get("stride")
        padding = args[3] if len(args) > 3 else kwargs.get("padding", 0)
        ceil_mode = args[4] if len(args) > 4 else kwargs.get("ceil_mode", False)
        include_pad = args[5] if len(args) > 5 else kwargs.get("count_include_pad", True)
        stride = kernel if stride is None or stride == [] else stride
        x, added = _batched(conv_, x, self.dims)
        pooled = conv_.emit_call(
            f"nn.avg_pool{self.dims}d",
            x,
            pool_size=kernel,
            strides=stride,
            padding=padding,
            ceil_mode=ceil_mode,
            count_include_pad=include_pad,
            layout=_DATA_LAYOUT[self.dims],
        )
        return _unbatched(conv_, pooled, added)


for _d in (1, 2, 3):
    register(f"avg_pool{_d}d.default", AvgPool(_d))


@dataclass(frozen=True)
class AdaptiveAvgPool:
    dims: int

    def __call__(self, conv_: Converting, node: fx.Node) -> relax.Expr:
        x = conv_.env[node.args[0]]
        size = node.args[1] if len(node.args) > 1 else node.kwargs["output_size"]
        x, added = _batched(conv_, x, self.dims)
        pooled = conv_.emit_call(
            f"nn.adaptive_avg_pool{self.dims}d", x, size, layout=_DATA_LAYOUT[self.dims]
        )
        return _unbatched(conv_, pooled, added)


for _d in (1, 2, 3):
    register(f"adaptive_avg_pool{_d}d.default", AdaptiveAvgPool(_d))
    register(f"_adaptive_avg_pool{_d}d.default", AdaptiveAvgPool(_d))


# ---------------------------------------------------------------- padding, shuffles


def _pad_width(ndim: int, pad: list[int]) -> list[int]:
    """PyTorch's pad list (last dim first, before/after pairs) as Relax's pad_width."""
    width = [0] * (ndim * 2)
    pairs = [pad[i : i + 2] for i in range(0, len(pad), 2)]
    flat = [v for pair in reversed(pairs) for v in pair]
    width[len(width) - len(flat) :] = flat
    return width


@converts("pad.default")
def pad(conv_: Converting, node: fx.Node) -> relax.Var:
    x = conv_.env[node.args[0]]
    mode = conv_.arg(node, 2, "mode", "constant")
    value = conv_.arg(node, 3, "value", 0.0)
    value = 0.0 if value is None else value
    width = _pad_width(conv_.ndim(x), node.args[1])
    return conv_.emit_call("nn.pad", x, width, mode, value)


@converts("constant_pad_nd.default")
def constant_pad_nd(conv_: Converting, node: fx.Node) -> relax.Var:
    x = conv_.env[node.args[0]]
    value = conv_.arg(node, 2, "value", 0.0)
    value = 0.0 if value is None else value
    width = _pad_width(conv_.ndim(x), node.args[1])
    return conv_.emit_call("nn.pad", x, width, "constant", value)


@converts("pixel_shuffle.default")
def pixel_shuffle(conv_: Converting, node: fx.Node) -> relax.Var:
    factor = node.args[1]
    if not isinstance(factor, int):
        raise conv_.error(node, "pixel_shuffle takes an integer upscale_factor")
    return conv_.emit_call("nn.pixel_shuffle", conv_.env[node.args[0]], factor)
