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


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    al, at, ar, ab = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    bl, bt, br, bb = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    inter = max(0.0, min(ar, br) - max(al, bl)) * max(0.0, min(ab, bb) - max(at, bt))
    union = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - inter
    return 0.0 if union <= 0 else inter / union


def nms(data, valid_count, indices, iou_threshold, *, max_output_size=-1, force_suppress=False,
        top_k=-1, coord_start=2, score_index=1, id_index=0, return_indices=True,
        invalid_to_bottom=False, soft_nms_sigma=0.0, score_threshold=0.0):  # fmt: skip
    """TOPI's classic non-maximum suppression, box by box."""
    out = np.full_like(data, -1.0)
    box = np.full(data.shape[:2], -1, "int32")
    count = np.zeros((len(data), 1), "int32")
    soft = soft_nms_sigma > 0
    thresh = np.float32(score_threshold if soft else 0.0)
    room = (lambda n: n < max_output_size) if max_output_size > 0 else (lambda n: True)
    for i, boxes in enumerate(data):
        vc = min(max(int(valid_count[i]), 0), len(boxes))
        order = sorted(range(vc), key=lambda p: -boxes[p, score_index])  # stable
        nkeep = top_k if 0 < top_k < vc else vc
        out[i, :nkeep], box[i, :nkeep] = boxes[order[:nkeep]], order[:nkeep]
        o, b = out[i], box[i]

        def coords(j, o=o):
            return o[j, coord_start : coord_start + 4].astype("float64")

        def same(a, c, o=o):
            return force_suppress or id_index < 0 or o[a, id_index] == o[c, id_index]

        kept = 0
        if not soft:
            for j in range(nkeep):
                if o[j, score_index] > thresh and room(kept):
                    kept += 1
                    for k in range(j + 1, nkeep):
                        if o[k, score_index] > thresh and same(j, k):
                            if _iou(coords(j), coords(k)) >= iou_threshold:
                                o[k, score_index], b[k] = -1, -1
                else:
                    o[j], b[j] = -1, -1
            if return_indices:
                alive = [indices[i, p] for p in b if p >= 0]
                b[:] = -1
                b[: len(alive)] = alive
                count[i, 0] = len(alive)
            continue
        for _ in range(nkeep):
            if not room(kept):
                continue
            live = [j for j in range(kept, nkeep) if b[j] >= 0 and o[j, score_index] > thresh]
            if not live:
                continue
            best = max(live, key=lambda j: (o[j, score_index], -j))
            b[[kept, best]], o[[kept, best]] = b[[best, kept]], o[[best, kept]]
            for j in range(kept + 1, nkeep):
                if b[j] >= 0 and o[j, score_index] > thresh and same(kept, j):
                    iou = np.float32(_iou(coords(kept), coords(j)))
                    if iou >= iou_threshold:
                        b[j] = -1
                    else:
                        decay = np.exp(np.float32(-0.5 / soft_nms_sigma) * iou * iou)
                        o[j, score_index] = o[j, score_index] * decay
                        if o[j, score_index] <= thresh:
                            b[j] = -1
            kept += 1
        o[kept:] = -1
        if return_indices:
            b[:kept] = indices[i, b[:kept]]
            b[kept:] = -1
            count[i, 0] = kept
    if return_indices:
        return (out, box, count) if soft else (box, count)
    if invalid_to_bottom:
        moved = np.full_like(out, -1.0)
        for i, o in enumerate(out):
            rows = o[o[:, score_index] >= 0]
            moved[i, : len(rows)] = rows
        return moved
    return out


def _boxes() -> np.ndarray:
    data = G.uniform(2, 5, 6, lo=-0.5, hi=1.0)
    data[:, :, 0] = G.ints(-1, 3, 2, 5)  # class ids, some negative
    return data


ROIS = np.array(
    [[0, 1, 1, 6, 5], [1, 0.5, 2.2, 4.4, 7.9], [0, -2, -1, 3, 2], [1, 5, 6, 5.5, 6.2]], "float32"
)


def _detections() -> np.ndarray:
    """Two batches of six overlapping (class, score, x0, y0, x1, y1) boxes."""
    data = np.zeros((2, 6, 6), "float32")
    data[:, :, 0] = G.ints(0, 2, 2, 6)
    data[:, :, 1] = G.uniform(2, 6, lo=0.0, hi=1.0)
    corner, size = G.uniform(2, 6, 2, lo=0.0, hi=1.5), G.uniform(2, 6, 2, lo=2.0, hi=4.0)
    data[:, :, 2:4], data[:, :, 4:6] = corner, corner + size
    return data


def _nms_cases() -> list[Case]:
    boxes = (
        _detections(),
        np.array([6, 4], "int32"),
        np.array([[5, 4, 3, 2, 1, 0], [10, 11, 12, 13, 14, 15]], "int32"),
    )
    forms = {
        "hard": ("iou_threshold=0.3", {"iou_threshold": 0.3}),
        "top-k-to-bottom": (
            "iou_threshold=0.3, top_k=3, return_indices=False, invalid_to_bottom=True",
            {"iou_threshold": 0.3, "top_k": 3, "return_indices": False, "invalid_to_bottom": True},
        ),
        "force-suppress": (
            "iou_threshold=0.4, force_suppress=True, return_indices=False",
            {"iou_threshold": 0.4, "force_suppress": True, "return_indices": False},
        ),
        "max-output": (
            "max_output_size=1, iou_threshold=0.9",
            {"max_output_size": 1, "iou_threshold": 0.9},
        ),
        "soft": (
            "iou_threshold=0.5, soft_nms_sigma=0.5, score_threshold=0.1",
            {"iou_threshold": 0.5, "soft_nms_sigma": 0.5, "score_threshold": 0.1},
        ),
        "soft-any-class": (
            "max_output_size=2, iou_threshold=0.5, id_index=-1, soft_nms_sigma=0.8, "
            "return_indices=False",
            {
                "max_output_size": 2,
                "iou_threshold": 0.5,
                "id_index": -1,
                "soft_nms_sigma": 0.8,
                "return_indices": False,
            },
        ),
    }
    return [
        case(
            f"non_max_suppression-{name}",
            f"R.vision.non_max_suppression(x, y, z, {text})",
            boxes,
            lambda d, v, ix, kw=kw: nms(d, v, ix, **kw),
        )
        for name, (text, kw) in forms.items()
    ]


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


CASES: list[Case] = _vision_cases() + _nms_cases()
