"""Numerics cases: detection operators (`R.vision.*`), against NumPy versions of
TOPI's definitions (TVM 0.27 computes the same values for these inputs)."""

from __future__ import annotations

import math

import numpy as np
from op_cases_common import Case, Inputs, case

G = Inputs(11)


def valid_counts(data, threshold, id_index, score_index):
    count = np.zeros(data.shape[0], "int32")
    out = np.full_like(data, -1.0)
    index = np.full(data.shape[:2], -1, "int32")
    for i, boxes in enumerate(data):
        for j, box in enumerate(boxes):
            if box[score_index] > threshold and (id_index < 0 or box[id_index] >= 0):
                out[i, count[i]], index[i, count[i]] = box, j
                count[i] += 1
    return count, out, index


def roi_pool(x, rois, pooled, scale):
    ph_size, pw_size = pooled
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, ph_size, pw_size), "float32")
    for i, roi in enumerate(rois):
        sw, sh, ew, eh = (int(math.floor(np.float32(v) * np.float32(scale) + 0.5)) for v in roi[1:])
        bin_h = np.float32(max(eh - sh + 1, 1)) / np.float32(ph_size)
        bin_w = np.float32(max(ew - sw + 1, 1)) / np.float32(pw_size)
        for ph in range(ph_size):
            for pw in range(pw_size):
                h0 = min(max(int(math.floor(ph * bin_h)) + sh, 0), h)
                h1 = min(max(int(math.ceil((ph + 1) * bin_h)) + sh, 0), h)
                w0 = min(max(int(math.floor(pw * bin_w)) + sw, 0), w)
                w1 = min(max(int(math.ceil((pw + 1) * bin_w)) + sw, 0), w)
                if h1 > h0 and w1 > w0:
                    out[i, :, ph, pw] = x[int(roi[0]), :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


def roi_align(x, rois, pooled, scale, grid, aligned, mode):
    ph_size, pw_size = pooled
    n, c, h, w = x.shape

    def bilinear(img, y, xx):
        if y < -1 or xx < -1 or y > h or xx > w:
            return np.zeros(c)
        y, xx = min(max(y, 0.0), h - 1.0), min(max(xx, 0.0), w - 1.0)
        y0, x0, y1, x1 = math.floor(y), math.floor(xx), math.ceil(y), math.ceil(xx)
        top = img[:, y0, x0] + (img[:, y0, x1] - img[:, y0, x0]) * (xx - x0)
        low = img[:, y1, x0] + (img[:, y1, x1] - img[:, y1, x0]) * (xx - x0)
        return top + (low - top) * (y - y0)

    out = np.zeros((len(rois), c, ph_size, pw_size))
    for i, roi in enumerate(rois):
        sw, sh, ew, eh = (float(v) * scale for v in roi[1:])
        rh, rw = eh - sh, ew - sw
        if not aligned:
            rh, rw = max(rh, 1.0), max(rw, 1.0)
        bh, bw = rh / ph_size, rw / pw_size
        gh, gw = (grid, grid) if grid > 0 else (math.ceil(bh), math.ceil(bw))  # adaptive
        for ph in range(ph_size):
            for pw in range(pw_size):
                samples = [
                    bilinear(
                        x[int(roi[0])],
                        sh + ph * bh + (a + 0.5) * bh / gh,
                        sw + pw * bw + (b + 0.5) * bw / gw,
                    )
                    for a in range(gh)
                    for b in range(gw)
                ]
                pick = np.mean if mode == "avg" else np.max
                out[i, :, ph, pw] = pick(samples, axis=0)
    return out


def multibox(cls_pred, loc, anchor, variances, clip, threshold, keep_background, softmax):
    left, top, right, bottom = np.moveaxis(anchor[0], 1, 0)
    ex, ey, ew, eh = np.moveaxis(loc.reshape(len(loc), -1, 4), 2, 0)
    vx, vy, vw, vh = variances
    ah, aw = bottom - top, right - left
    yc, xc = ey * vy * ah + (top + bottom) / 2, ex * vx * aw + (left + right) / 2
    hh, hw = 0.5 * np.exp(eh * vh) * ah, 0.5 * np.exp(ew * vw) * aw
    boxes = np.stack([yc - hh, xc - hw, yc + hh, xc + hw], axis=2)
    if clip:
        boxes = np.clip(boxes, 0, 1)
    scores = cls_pred
    if softmax:
        e = np.exp(cls_pred - cls_pred.max(axis=1, keepdims=True))
        scores = e / e.sum(axis=1, keepdims=True)
    scores = scores * (scores >= threshold)
    if not keep_background:
        scores[:, 0] = 0
    return boxes, scores


def _boxes() -> np.ndarray:
    data = G.uniform(2, 5, 6, lo=-0.5, hi=1.0)
    data[:, :, 0] = G.ints(-1, 3, 2, 5)  # class ids, some negative
    return data


ROIS = np.array(
    [[0, 1, 1, 6, 5], [1, 0.5, 2.2, 4.4, 7.9], [0, -2, -1, 3, 2], [1, 5, 6, 5.5, 6.2]], "float32"
)


def _vision_cases() -> list[Case]:
    data, x = _boxes(), G.normal(2, 3, 8, 7)
    cls_pred, loc = G.normal(2, 3, 5), G.normal(2, 20)
    anchor = np.sort(G.uniform(1, 5, 4, lo=0.0, hi=1.0), axis=2)
    ssd = (cls_pred, loc, anchor)
    return [
        case(
            "get_valid_counts",
            "R.vision.get_valid_counts(x, score_threshold=0.25, id_index=0, score_index=1)",
            data,
            lambda d: valid_counts(d, 0.25, 0, 1),
        ),
        case(
            "get_valid_counts-no-class-id",
            "R.vision.get_valid_counts(x, score_threshold=0.5, id_index=-1, score_index=2)",
            data,
            lambda d: valid_counts(d, 0.5, -1, 2),
        ),
        case(
            "roi_pool",
            "R.vision.roi_pool(x, y, (2, 3), 0.5)",
            (x, ROIS),
            lambda d, r: roi_pool(d, r, (2, 3), 0.5),
        ),
        case(
            "roi_align-avg",
            "R.vision.roi_align(x, y, pooled_size=(3, 2), spatial_scale=0.5, sample_ratio=2)",
            (x, ROIS),
            lambda d, r: roi_align(d, r, (3, 2), 0.5, 2, False, "avg").astype("float32"),
        ),
        case(
            "roi_align-max-aligned",
            "R.vision.roi_align(x, y, pooled_size=2, spatial_scale=1.0, sample_ratio=3, "
            'aligned=True, mode="max")',
            (x, ROIS),
            lambda d, r: roi_align(d, r, (2, 2), 1.0, 3, True, "max").astype("float32"),
        ),
        case(
            "roi_align-adaptive-grid",
            "R.vision.roi_align(x, y, pooled_size=2, spatial_scale=1.0, sample_ratio=0)",
            (x, ROIS),
            lambda d, r: roi_align(d, r, (2, 2), 1.0, 0, False, "avg").astype("float32"),
        ),
        case(
            "roi_align-adaptive-grid-max",
            "R.vision.roi_align(x, y, pooled_size=(3, 2), spatial_scale=0.5, sample_ratio=-1, "
            'aligned=True, mode="max")',
            (x, ROIS),
            lambda d, r: roi_align(d, r, (3, 2), 0.5, -1, True, "max").astype("float32"),
        ),
        case(
            "roi_align-nhwc",
            "R.vision.roi_align(x, y, pooled_size=2, spatial_scale=0.5, sample_ratio=1, "
            'layout="NHWC")',
            (x.transpose(0, 2, 3, 1).copy(), ROIS),
            lambda d, r: (
                roi_align(d.transpose(0, 3, 1, 2), r, (2, 2), 0.5, 1, False, "avg")
                .transpose(0, 2, 3, 1)
                .astype("float32")
            ),
        ),
        case(
            "multibox_transform_loc",
            "R.vision.multibox_transform_loc(x, y, z, clip=True, threshold=0.3, "
            "variances=(0.1, 0.1, 0.2, 0.2))",
            ssd,
            lambda c, lo, a: multibox(c, lo, a, (0.1, 0.1, 0.2, 0.2), True, 0.3, True, True),
        ),
        case(
            "multibox_transform_loc-raw-scores",
            "R.vision.multibox_transform_loc(x, y, z, keep_background=False, apply_softmax=False)",
            ssd,
            lambda c, lo, a: multibox(c, lo, a, (1.0,) * 4, False, 0.0, False, False),
        ),
    ]


CASES: list[Case] = _vision_cases()
