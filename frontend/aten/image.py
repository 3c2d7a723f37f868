"""Image operators: upsampling (nearest, bilinear, bicubic) as `image.resize2d`,
grid_sample, affine_grid, and torchvision's roi_align."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch import fx

from tvmlite.dsl import relax
from tvmlite.frontend.context import Converting
from tvmlite.frontend.errors import FrontendError
from tvmlite.frontend.registry import converts, register


def resize(
    conv: Converting, x: relax.Expr, size: Any, scale: Any, method: str, align_corners: Any
) -> relax.Var:
    mode = "align_corners" if align_corners else "half_pixel"
    shape = conv.static_shape(x)
    if size is None:
        if isinstance(scale, (tuple, list)):
            if len(scale) != len(shape) - 2:
                raise FrontendError(f"{len(scale)} scale factors for {len(shape) - 2} dims")
            size = tuple(int(shape[i] * scale[i - 2]) for i in range(2, len(shape)))
        else:
            size = tuple(int(shape[i] * scale) for i in range(2, len(shape)))
    attrs: dict[str, Any] = {}
    whole = all(int(o) % i == 0 for o, i in zip(size, shape[2:], strict=True))
    if method == "nearest_neighbor" and not whole:
        # PyTorch's nearest is floor(out * in / out_size): TVM 0.27's half-pixel
        # rounding agrees with it only for whole upscale factors
        attrs = {"coordinate_transformation_mode": "asymmetric", "rounding_method": "floor"}
    return conv.emit_call(
        "image.resize2d",
        x,
        size,
        layout="NCHW",
        method=method,
        coordinate_transformation_mode=attrs.pop("coordinate_transformation_mode", mode),
        **attrs,
    )


@dataclass(frozen=True)
class Upsample:
    """`upsample_*2d.vec`: (input, output_size, [align_corners,] scale_factors)."""

    method: str
    has_align: bool
    align_default: Any
    antialias: bool = False

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        x = conv.env[node.args[0]]
        size = conv.arg(node, 1, "output_size")
        if self.has_align:
            align = conv.arg(node, 2, "align_corners", self.align_default)
            scale = conv.arg(node, 3, "scale_factors")
        else:
            align = self.align_default
            scale = conv.arg(node, 2, "scale_factors")
        if size is not None:
            scale = None
        elif scale is None:
            scale = 1
        if self.antialias and _shrinks(conv, x, size, scale):
            raise conv.error(node, "antialiased downsampling is not supported")
        return resize(conv, x, size, scale, self.method, align)


def _shrinks(conv: Converting, x: relax.Expr, size: Any, scale: Any) -> bool:
    shape = conv.static_shape(x)[2:]
    if size is not None:
        return any(int(o) < i for o, i in zip(size, shape, strict=True))
    scales = scale if isinstance(scale, (tuple, list)) else [scale] * len(shape)
    return any(s < 1 for s in scales)


register("upsample_nearest2d.vec", Upsample("nearest_neighbor", False, None))
register("upsample_bilinear2d.vec", Upsample("linear", True, True))
# upsampling with antialias is plain bilinear (the filter is no wider than bilinear's);
# `.vec` is the overload torch.export writes (TVM 0.27 keys only `.default`)
register("_upsample_bilinear2d_aa.default", Upsample("linear", True, False, antialias=True))
register("_upsample_bilinear2d_aa.vec", Upsample("linear", True, False, antialias=True))
register("upsample_bicubic2d.vec", Upsample("cubic", True, None))


_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


@converts("grid_sampler_2d.default")
def grid_sampler(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    data, grid = args[0], args[1]
    method = _INTERP.get(args[2] if len(args) > 2 else 0, "bilinear")
    padding = _PADDING.get(args[3] if len(args) > 3 else 0, "zeros")
    align = args[4] if len(args) > 4 else False
    # PyTorch's grid is (N, H, W, 2), Relax's (N, 2, H, W) (TVM 0.27 passes it as is)
    grid = conv.emit_call("permute_dims", grid, [0, 3, 1, 2])
    return conv.emit_call(
        "image.grid_sample",
        data,
        grid,
        method=method,
        layout="NCHW",
        padding_mode=padding,
        align_corners=align,
    )


@converts("affine_grid_generator.default")
def affine_grid(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    theta, size = args[0], args[1]
    align = args[2] if len(args) > 2 else False
    if not align:
        raise conv.error(node, "affine_grid with align_corners=False is not supported")
    grid = conv.emit_call("image.affine_grid", theta, (size[2], size[3]))
    # Relax's grid is (N, 2, H, W); PyTorch's (N, H, W, 2)
    return conv.emit_call("permute_dims", grid, [0, 2, 3, 1])


@converts("roi_align.default")
def roi_align(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    data, rois = args[0], args[1]
    scale = args[2] if len(args) > 2 else 1.0
    height = args[3] if len(args) > 3 else 1
    width = args[4] if len(args) > 4 else height
    ratio = args[5] if len(args) > 5 else -1
    aligned = args[6] if len(args) > 6 else False
    if aligned:
        # torchvision's aligned boxes are shifted half a pixel after scaling; Relax's
        # roi_align (TOPI's) does not shift, so the boxes are shifted by 0.5 / scale
        # before it scales them (TVM 0.27 shifts by 0.5: right for a scale of 1 only)
        index = conv.emit_call("strided_slice", rois, axes=[1], begin=[0], end=[1])
        boxes = conv.emit_call("strided_slice", rois, axes=[1], begin=[1], end=[5])
        shift = conv.const(0.5 / scale, conv.dtype(rois))
        boxes = conv.emit_call("subtract", boxes, shift)
        rois = conv.emit_call("concat", (index, boxes), axis=1)
    return conv.emit_call(
        "vision.roi_align",
        data,
        rois,
        pooled_size=(height, width),
        spatial_scale=scale,
        sample_ratio=ratio,
        aligned=aligned,
        layout="NCHW",
        mode="avg",
    )
