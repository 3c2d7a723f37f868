"""torchvision's roi_align as a custom operator of this test package (torchvision is
not a test dependency): its eager kernel is a direct transcription of torchvision's
CPU algorithm, and torch.export writes it as `roi_align.default`."""

from __future__ import annotations

import math

import torch
from cases import Fixed

ROIS = Fixed(
    torch.tensor([[0, 1.0, 1.5, 6.0, 5.0], [1, 0.0, 0.0, 7.5, 7.5], [1, 2.2, 3.1, 4.0, 4.9]])
)


@torch.library.custom_op("tvmlite_test::roi_align", mutates_args=())
def roi_align(
    data: torch.Tensor,
    rois: torch.Tensor,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    sampling_ratio: int,
    aligned: bool,
) -> torch.Tensor:
    n_rois, channels = rois.shape[0], data.shape[1]
    height, width = data.shape[2], data.shape[3]
    out = torch.zeros(n_rois, channels, pooled_height, pooled_width, dtype=data.dtype)
    offset = 0.5 if aligned else 0.0
    for n in range(n_rois):
        batch = int(rois[n, 0])
        x1, y1, x2, y2 = (float(v) * spatial_scale - offset for v in rois[n, 1:])
        roi_w, roi_h = x2 - x1, y2 - y1
        if not aligned:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / pooled_height, roi_w / pooled_width
        grid_h = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_h / pooled_height)
        grid_w = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_w / pooled_width)
        count = max(grid_h * grid_w, 1)
        feat = data[batch]
        for py in range(pooled_height):
            for px in range(pooled_width):
                total = torch.zeros(channels, dtype=data.dtype)
                for iy in range(grid_h):
                    y = y1 + py * bin_h + (iy + 0.5) * bin_h / grid_h
                    for ix in range(grid_w):
                        x = x1 + px * bin_w + (ix + 0.5) * bin_w / grid_w
                        total += _bilinear(feat, y, x, height, width)
                out[n, :, py, px] = total / count
    return out


@roi_align.register_fake
def _(data, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    return data.new_empty(rois.shape[0], data.shape[1], pooled_height, pooled_width)


def _bilinear(feat: torch.Tensor, y: float, x: float, height: int, width: int) -> torch.Tensor:
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return torch.zeros(feat.shape[0], dtype=feat.dtype)
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_low = y_high = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_low = x_high = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    return (
        hy * hx * feat[:, y_low, x_low]
        + hy * lx * feat[:, y_low, x_high]
        + ly * hx * feat[:, y_high, x_low]
        + ly * lx * feat[:, y_high, x_high]
    )
