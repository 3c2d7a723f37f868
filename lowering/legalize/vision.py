"""Detection operators (`R.vision.*`) as TOPI computes them on a CPU.

get_valid_counts: one serial pass per batch moves the boxes whose score beats the
threshold (and whose class id is not negative) to the front, then fills the rest
with -1. multibox_transform_loc: SSD/TFLite box decoding around each anchor and
the class scores (softmax, threshold mask, optional background zeroing).
roi_pool: the maximum over each bin of a rounded region, 0 for an empty bin.
roi_align: the average or maximum of `sample_ratio` x `sample_ratio` bilinear
samples per bin, or with `sample_ratio <= 0` an adaptive grid as many samples
high and wide as the bin is pixels (a reduction whose extent the region's data
gives, as TOPI's).
non_max_suppression: TOPI's classic single-class suppression per batch (boxes
sorted by score with the stable merge sort, top_k, then greedy hard NMS or
LiteRT's soft-NMS with Gaussian decay), optionally compacting the kept boxes.
all_class_non_max_suppression is not legalized yet: a build stops at it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops.context import tensor_sinfo
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import (
    at0,
    index_var,
    local_scalar,
    loop,
    seq,
    set0,
    static_dims,
)
from tvmlite.lowering.legalize.nn import softmax_stages
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize
from tvmlite.lowering.legalize.sort import Order, ahead, merge_sort

I32 = "int32"


def _load(buf: tir.Buffer, *index: tir.PrimExpr) -> tir.BufferLoad:
    return tir.BufferLoad(buf, tuple(E.idx(i) for i in index), buf.dtype)


def _store(buf: tir.Buffer, value: tir.PrimExpr, *index: tir.PrimExpr) -> tir.BufferStore:
    return tir.BufferStore(buf, value, tuple(E.idx(i) for i in index))


def _field(ctx: LegalizeCtx, name: str, value: int, length: int) -> int:
    """An element index attribute, which the kernel reads at: in range, or no kernel."""
    if not 0 <= value < length:
        raise LegalizeUnsupported(f"{ctx.op.display} with {name}={value} outside the box")
    return value


@register_legalize("relax.vision.get_valid_counts")
def legalize_get_valid_counts(ctx: LegalizeCtx) -> relax.Expr:
    data = ctx.arg_sinfo[0]
    batch, anchors, length = static_dims(getattr(data, "shape", None) or (), "get_valid_counts")
    attrs = ctx.attrs
    score_index = _field(ctx, "score_index", attrs["score_index"], length)
    id_index = attrs["id_index"]
    if id_index >= 0:
        _field(ctx, "id_index", id_index, length)
    dtype = data.dtype  # type: ignore[union-attr]
    threshold = E.const(attrs["score_threshold"], dtype)

    def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
        (src,), (count, out, index) = ins, outs
        i, j, k = index_var("i"), index_var("j"), index_var("k")
        valid = E.binary("gt", _load(src, i, j, score_index), threshold)
        if id_index >= 0:
            valid = E.logical_and(
                valid, E.binary("ge", _load(src, i, j, id_index), E.const(0, dtype))
            )
        cur = _load(count, i)
        take = seq(
            loop(k, length, _store(out, _load(src, i, j, k), i, cur, k)),
            _store(index, E.cast(j, I32), i, cur),
            _store(count, E.add(cur, E.const(1, I32)), i),
        )
        empty = seq(
            loop(k, length, _store(out, E.const(-1.0, dtype), i, j, k)),
            _store(index, E.const(-1, I32), i, j),
        )
        rest = tir.IfThenElse(E.binary("ge", E.cast(j, I32), cur), empty)
        per_batch = seq(
            _store(count, E.const(0, I32), i),
            loop(j, anchors, tir.IfThenElse(valid, take)),
            loop(j, anchors, rest),
        )
        return loop(i, batch, per_batch, tir.PARALLEL)

    def build(kb: te.KernelBuilder, x: te.Tensor) -> list[te.Tensor]:
        outs = [
            ("valid_count", (batch,), I32, False),
            ("out_tensor", (batch, anchors, length), dtype, False),
            ("out_indices", (batch, anchors), I32, False),
        ]
        return kb.extern("get_valid_counts", outs, [x], body)

    return ctx.call_te("get_valid_counts", build)


@register_legalize("relax.vision.multibox_transform_loc")
def legalize_multibox_transform_loc(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs
    vx, vy, vw, vh = attrs["variances"]

    def build(
        kb: te.KernelBuilder, cls: te.Tensor, loc: te.Tensor, anchor: te.Tensor
    ) -> list[te.Tensor]:
        dtype = cls.dtype
        batch, _, anchors = cls.shape

        def c(value: float) -> tir.PrimExpr:
            return E.const(value, dtype)

        def decode(b: tir.Var, a: tir.Var, k: tir.Var) -> tir.PrimExpr:
            left, top, right, bottom = (anchor.load([E.idx(0), a, E.idx(q)]) for q in range(4))
            ex, ey, ew, eh = (loc.load([b, E.add(E.mul(a, 4), q)]) for q in range(4))
            ah, aw = E.sub(bottom, top), E.sub(right, left)
            ycenter = E.add(E.mul(E.mul(ey, c(vy)), ah), E.mul(E.add(top, bottom), c(0.5)))
            xcenter = E.add(E.mul(E.mul(ex, c(vx)), aw), E.mul(E.add(left, right), c(0.5)))
            half_h = E.mul(E.mul(c(0.5), E.call("exp", dtype, E.mul(eh, c(vh)))), ah)
            half_w = E.mul(E.mul(c(0.5), E.call("exp", dtype, E.mul(ew, c(vw)))), aw)
            corners = [
                E.sub(ycenter, half_h),
                E.sub(xcenter, half_w),
                E.add(ycenter, half_h),
                E.add(xcenter, half_w),
            ]
            if attrs["clip"]:
                corners = [E.maximum(c(0.0), E.minimum(c(1.0), v)) for v in corners]
            ymin, xmin, ymax, xmax = corners
            pick = E.select(E.binary("eq", k, E.idx(2)), ymax, xmax)
            pick = E.select(E.binary("eq", k, E.idx(1)), xmin, pick)
            return E.select(E.binary("eq", k, E.idx(0)), ymin, pick)

        boxes = kb.compute((batch, anchors, E.idx(4)), decode, "multibox_boxes", prefix="i")
        scores = softmax_stages(kb, cls, 1, log=False) if attrs["apply_softmax"] else cls
        threshold = c(attrs["threshold"])

        def post(b: tir.Var, k: tir.Var, a: tir.Var) -> tir.PrimExpr:
            s = scores.load([b, k, a])
            kept = E.mul(s, E.cast(E.binary("ge", s, threshold), dtype))
            if attrs["keep_background"]:
                return kept
            return E.select(E.binary("eq", k, E.idx(0)), c(0.0), kept)

        return [boxes, kb.compute(cls.shape, post, "multibox_scores", prefix="i")]

    return ctx.call_te("multibox_transform_loc", build)


def _batch_of(rois: te.Tensor, i: tir.Var, batch: tir.PrimExpr) -> tir.PrimExpr:
    """The image a region belongs to (column 0), clamped to the batch: TOPI reads
    unchecked there, so a bad index would read outside the data."""
    n = E.cast(E.cast(rois.load([i, E.idx(0)]), I32), E.INDEX)
    return E.minimum(E.maximum(n, E.idx(0)), E.sub(E.idx(batch), E.idx(1)))


def _roi_corner(rois: te.Tensor, i: tir.Var, q: int, scale: float) -> tir.PrimExpr:
    return E.mul(rois.load([i, E.idx(q)]), E.const(scale, rois.dtype))


@register_legalize("relax.vision.roi_pool")
def legalize_roi_pool(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs
    if attrs["layout"] != "NCHW":
        raise LegalizeUnsupported(f"roi_pool in layout {attrs['layout']}")
    ph_size, pw_size = attrs["pooled_size"]
    scale = attrs["spatial_scale"]

    def build(kb: te.KernelBuilder, data: te.Tensor, rois: te.Tensor) -> te.Tensor:
        _, channels, height, width = data.shape
        rtype = rois.dtype

        def rounded(i: tir.Var, q: int) -> tir.PrimExpr:  # round half away, as floor(x + 0.5)
            x = E.add(_roi_corner(rois, i, q, scale), E.const(0.5, rtype))
            return E.cast(E.call("floor", rtype, x), I32)

        def bounds(i: tir.Var, ph: tir.Var, pw: tir.Var) -> list[tir.PrimExpr]:
            start_w, start_h, end_w, end_h = (rounded(i, q) for q in (1, 2, 3, 4))
            one = E.const(1, I32)
            roi_h = E.maximum(E.add(E.sub(end_h, start_h), one), one)
            roi_w = E.maximum(E.add(E.sub(end_w, start_w), one), one)
            bin_h = E.div(E.cast(roi_h, rtype), E.const(float(ph_size), rtype))
            bin_w = E.div(E.cast(roi_w, rtype), E.const(float(pw_size), rtype))

            def edge(
                p: tir.PrimExpr, size: tir.PrimExpr, fn: str, start: tir.PrimExpr, limit: E.Expr
            ) -> tir.PrimExpr:
                at = E.cast(E.call(fn, rtype, E.mul(E.cast(p, rtype), size)), I32)
                return E.minimum(E.maximum(E.add(at, start), E.const(0, I32)), E.cast(limit, I32))

            return [
                edge(ph, bin_h, "floor", start_h, height),
                edge(E.add(ph, 1), bin_h, "ceil", start_h, height),
                edge(pw, bin_w, "floor", start_w, width),
                edge(E.add(pw, 1), bin_w, "ceil", start_w, width),
            ]

        def pooled(i: tir.Var, ch: tir.Var, ph: tir.Var, pw: tir.Var) -> te.Reduce:
            rh, rw = te.reduce_axis(height, "rh"), te.reduce_axis(width, "rw")
            hstart, hend, wstart, wend = bounds(i, ph, pw)
            y, x = E.cast(rh.var, I32), E.cast(rw.var, I32)
            inside = E.logical_and(
                E.logical_and(E.binary("le", hstart, y), E.binary("lt", y, hend)),
                E.logical_and(E.binary("le", wstart, x), E.binary("lt", x, wend)),
            )
            value = data.load([_batch_of(rois, i, data.shape[0]), ch, rh.var, rw.var])
            return te.max_(E.if_then_else(inside, value, E.min_value(data.dtype)), [rh, rw])

        best = kb.compute((rois.shape[0], channels, ph_size, pw_size), pooled, "roi_pool_max")

        def result(i: tir.Var, ch: tir.Var, ph: tir.Var, pw: tir.Var) -> tir.PrimExpr:
            hstart, hend, wstart, wend = bounds(i, ph, pw)
            empty = E.logical_or(E.binary("le", hend, hstart), E.binary("le", wend, wstart))
            return E.if_then_else(empty, E.const(0.0, data.dtype), best.load([i, ch, ph, pw]))

        return kb.compute(best.shape, result, "roi_pool")

    return ctx.call_te("roi_pool", build)


@register_legalize("relax.vision.roi_align")
def legalize_roi_align(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs
    ratio = attrs["sample_ratio"]
    ph_size, pw_size = attrs["pooled_size"]
    scale, aligned, avg = attrs["spatial_scale"], attrs["aligned"], attrs["mode"] == "avg"
    nhwc = attrs["layout"] == "NHWC"

    def build(kb: te.KernelBuilder, data: te.Tensor, rois: te.Tensor) -> te.Tensor:
        if nhwc:
            batch, height, width, channels = data.shape
        else:
            batch, channels, height, width = data.shape
        rtype = rois.dtype

        def c(value: float) -> tir.PrimExpr:
            return E.const(value, rtype)

        def at(n: tir.PrimExpr, ch: tir.PrimExpr, y: tir.PrimExpr, x: tir.PrimExpr) -> tir.PrimExpr:
            index = [n, y, x, ch] if nhwc else [n, ch, y, x]
            return data.load([E.idx(v) for v in index])

        def bilinear(
            n: tir.PrimExpr, ch: tir.Var, y: tir.PrimExpr, x: tir.PrimExpr
        ) -> tir.PrimExpr:
            h_f, w_f = E.cast(height, rtype), E.cast(width, rtype)
            outside = E.logical_or(
                E.logical_or(E.binary("lt", y, c(-1.0)), E.binary("lt", x, c(-1.0))),
                E.logical_or(E.binary("gt", y, h_f), E.binary("gt", x, w_f)),
            )
            y = E.minimum(E.maximum(y, c(0.0)), E.cast(E.sub(height, 1), rtype))
            x = E.minimum(E.maximum(x, c(0.0)), E.cast(E.sub(width, 1), rtype))
            y0, x0 = (E.cast(E.call("floor", rtype, v), I32) for v in (y, x))
            y1, x1 = (E.cast(E.call("ceil", rtype, v), I32) for v in (y, x))
            dy, dx = E.sub(y, E.cast(y0, rtype)), E.sub(x, E.cast(x0, rtype))
            top = E.add(at(n, ch, y0, x0), E.mul(E.sub(at(n, ch, y0, x1), at(n, ch, y0, x0)), dx))
            low = E.add(at(n, ch, y1, x0), E.mul(E.sub(at(n, ch, y1, x1), at(n, ch, y1, x0)), dx))
            value = E.add(top, E.mul(E.sub(low, top), dy))
            return E.if_then_else(outside, E.const(0.0, data.dtype), value)

        def sample(i: tir.Var, ch: tir.Var, ph: tir.Var, pw: tir.Var) -> te.Reduce:
            start_w, start_h, end_w, end_h = (_roi_corner(rois, i, q, scale) for q in (1, 2, 3, 4))
            roi_h, roi_w = E.sub(end_h, start_h), E.sub(end_w, start_w)
            if not aligned:
                roi_h, roi_w = E.maximum(roi_h, c(1.0)), E.maximum(roi_w, c(1.0))
            bin_h, bin_w = E.div(roi_h, c(float(ph_size))), E.div(roi_w, c(float(pw_size)))
            y0 = E.add(start_h, E.mul(E.cast(ph, rtype), bin_h))
            x0 = E.add(start_w, E.mul(E.cast(pw, rtype), bin_w))
            if ratio > 0:
                grid_h = grid_w = E.const(ratio, I32)
            else:  # adaptive: as many samples as the bin is pixels high and wide
                grid_h = E.cast(E.call("ceil", rtype, E.div(roi_h, c(float(ph_size)))), I32)
                grid_w = E.cast(E.call("ceil", rtype, E.div(roi_w, c(float(pw_size)))), I32)
            rh = te.reduce_axis(E.cast(grid_h, E.INDEX), "rh")
            rw = te.reduce_axis(E.cast(grid_w, E.INDEX), "rw")
            counts = {rh.var: grid_h, rw.var: grid_w}

            def offset(r: tir.Var, size: tir.PrimExpr) -> tir.PrimExpr:
                spread = E.mul(E.add(E.cast(r, rtype), c(0.5)), size)
                return E.div(spread, E.cast(counts[r], rtype))

            n = _batch_of(rois, i, batch)
            value = bilinear(
                n, ch, E.add(y0, offset(rh.var, bin_h)), E.add(x0, offset(rw.var, bin_w))
            )
            if avg:
                count = E.cast(E.mul(grid_h, grid_w), rtype)
                return te.sum_(E.div(value, count), [rh, rw])
            return te.max_(value, [rh, rw])

        num_roi = rois.shape[0]
        if nhwc:
            shape = (num_roi, ph_size, pw_size, channels)
            return kb.compute(shape, lambda i, ph, pw, ch: sample(i, ch, ph, pw), "roi_align")
        return kb.compute((num_roi, channels, ph_size, pw_size), sample, "roi_align")

    return ctx.call_te("roi_align", build)


@dataclass(frozen=True)
class _Nms:
    """TOPI's classic (single-class) suppression of one batch `i` of `data`, boxes
    ordered by score; `out`/`box` are the kept boxes and their positions."""

    i: tir.Var
    out: tir.Buffer
    box: tir.Buffer
    length: int
    attrs: dict

    def at(self, j: E.Expr, k: E.Expr) -> tir.BufferLoad:
        return _load(self.out, self.i, j, k)

    def score(self, j: E.Expr) -> tir.BufferLoad:
        return self.at(j, self.attrs["score_index"])

    def iou(self, a: E.Expr, b: E.Expr) -> tir.PrimExpr:
        """Intersection over union of kept boxes `a` and `b` (corners in any order)."""
        c = self.attrs["coord_start"]
        dtype = self.out.dtype
        zero = E.const(0.0, dtype)

        def corners(j: E.Expr) -> tuple[tir.PrimExpr, ...]:
            x0, y0, x1, y1 = (self.at(j, c + q) for q in range(4))
            return E.minimum(x0, x1), E.minimum(y0, y1), E.maximum(x0, x1), E.maximum(y0, y1)

        (al, at, ar, ab), (bl, bt, br, bb) = corners(a), corners(b)
        w = E.maximum(zero, E.sub(E.minimum(ar, br), E.maximum(al, bl)))
        h = E.maximum(zero, E.sub(E.minimum(ab, bb), E.maximum(at, bt)))
        inter = E.mul(h, w)
        union = E.sub(
            E.add(E.mul(E.sub(ar, al), E.sub(ab, at)), E.mul(E.sub(br, bl), E.sub(bb, bt))), inter
        )
        return E.select(E.binary("le", union, zero), zero, E.div(inter, union))

    def same_class(self, a: E.Expr, b: E.Expr) -> tir.PrimExpr:
        id_index = self.attrs["id_index"]
        if self.attrs["force_suppress"] or id_index < 0:
            return E.const(True, "bool")
        return E.binary("eq", self.at(a, id_index), self.at(b, id_index))

    def fill(self, j: E.Expr, also_box: bool) -> tir.Stmt:
        k = index_var("k")
        minus = loop(k, self.length, _store(self.out, E.const(-1.0, self.out.dtype), self.i, j, k))
        return seq(minus, _store(self.box, E.const(-1, I32), self.i, j)) if also_box else minus


def _room(kept: tir.PrimExpr, max_output: int) -> tir.PrimExpr:
    """Whether another box may be kept under `max_output_size` (-1: no limit)."""
    if max_output > 0:
        return E.binary("lt", kept, E.const(max_output, I32))
    return E.const(True, "bool")


def _hard_nms(nms: _Nms, nkeep: tir.PrimExpr, kept: tir.Buffer, iou_threshold: float) -> tir.Stmt:
    """Keep boxes in score order; each kept one drops the later boxes of its class
    that overlap it by `iou_threshold` or more."""
    dtype = nms.out.dtype
    thresh = E.const(0.0, dtype)
    j, k = index_var("j"), index_var("k")
    overlaps = E.binary("ge", nms.iou(j, k), E.const(iou_threshold, dtype))
    drop = seq(
        _store(nms.out, E.const(-1.0, dtype), nms.i, k, nms.attrs["score_index"]),
        _store(nms.box, E.const(-1, I32), nms.i, k),
    )
    later = E.logical_and(E.binary("gt", k, j), E.binary("gt", nms.score(k), thresh))
    suppress = tir.IfThenElse(
        later, tir.IfThenElse(nms.same_class(j, k), tir.IfThenElse(overlaps, drop))
    )
    keep = seq(set0(kept, E.add(at0(kept), E.const(1, I32))), _for(k, nkeep, suppress))
    wanted = E.logical_and(
        E.binary("gt", nms.score(j), thresh), _room(at0(kept), nms.attrs["max_output_size"])
    )
    return _for(j, nkeep, tir.IfThenElse(wanted, keep, nms.fill(j, True)))


def _soft_nms(nms: _Nms, nkeep: tir.PrimExpr, kept: tir.Buffer, iou_threshold: float) -> tir.Stmt:
    """LiteRT's soft-NMS: each round moves the best remaining box to the front, drops
    the later boxes overlapping it by `iou_threshold`, and decays the scores of the
    others by exp(-iou^2 / (2 sigma)) (dropped once at or below `score_threshold`)."""
    attrs, dtype, i = nms.attrs, nms.out.dtype, nms.i
    thresh = E.const(attrs["score_threshold"], dtype)
    scale = E.const(-0.5 / attrs["soft_nms_sigma"], dtype)
    best, best_score = local_scalar("best_idx", I32), local_scalar("best_score", dtype)
    tmp_idx, tmp_val = local_scalar("tmp_idx", I32), local_scalar("tmp_val", dtype)
    r, j, k = index_var("round"), index_var("j"), index_var("k")
    n = at0(kept)
    alive = E.binary("ge", _load(nms.box, i, j), E.const(0, I32))
    better = E.logical_and(
        E.logical_and(E.binary("ge", E.cast(j, I32), n), alive),
        E.binary("gt", nms.score(j), at0(best_score)),
    )
    pick = _for(
        j,
        nkeep,
        tir.IfThenElse(better, seq(set0(best, E.cast(j, I32)), set0(best_score, nms.score(j)))),
    )
    b = at0(best)
    swap = seq(
        set0(tmp_idx, _load(nms.box, i, n)),
        _store(nms.box, _load(nms.box, i, b), i, n),
        _store(nms.box, at0(tmp_idx), i, b),
        loop(
            k,
            nms.length,
            seq(
                set0(tmp_val, nms.at(n, k)),
                _store(nms.out, nms.at(b, k), i, n, k),
                _store(nms.out, at0(tmp_val), i, b, k),
            ),
        ),
    )
    score_index = attrs["score_index"]
    iou = nms.iou(n, j)
    iou_thr = E.const(iou_threshold, dtype)
    drop = _store(nms.box, E.const(-1, I32), i, j)
    decayed = E.mul(nms.score(j), E.call("exp", dtype, E.mul(E.mul(scale, iou), iou)))
    decay = seq(
        _store(nms.out, decayed, i, j, score_index),
        tir.IfThenElse(E.binary("le", nms.score(j), thresh), drop),
    )
    update = seq(
        tir.IfThenElse(E.binary("ge", iou, iou_thr), drop),
        tir.IfThenElse(E.binary("lt", iou, iou_thr), decay),
    )
    candidate = E.logical_and(
        E.logical_and(E.binary("gt", E.cast(j, I32), n), alive),
        E.binary("gt", nms.score(j), thresh),
    )
    others = _for(j, nkeep, tir.IfThenElse(candidate, tir.IfThenElse(nms.same_class(n, j), update)))
    chosen = seq(
        tir.IfThenElse(E.binary("ne", b, n), swap),
        others,
        set0(kept, E.add(n, E.const(1, I32))),
    )
    round_ = seq(
        set0(best, E.const(-1, I32)),
        set0(best_score, thresh),
        pick,
        tir.IfThenElse(E.binary("ge", b, E.const(0, I32)), chosen),
    )
    body = _for(r, nkeep, tir.IfThenElse(_room(n, attrs["max_output_size"]), round_))
    return seq(
        *(tir.AllocBuffer(buf, "alloc_local") for buf in (best, best_score, tmp_idx, tmp_val)),
        body,
    )


def _for(var: tir.Var, extent: tir.PrimExpr, body: tir.Stmt) -> tir.For:
    """A serial loop over a run-time count (an int32 local)."""
    return tir.For(var, E.idx(0), E.cast(extent, E.INDEX), tir.SERIAL, body)


@register_legalize("relax.vision.non_max_suppression")
def legalize_non_max_suppression(ctx: LegalizeCtx) -> relax.Expr:
    data = ctx.arg_sinfo[0]
    batch, anchors, length = static_dims(getattr(data, "shape", None) or (), "non_max_suppression")
    attrs = ctx.attrs
    score_index = _field(ctx, "score_index", attrs["score_index"], length)
    coord = attrs["coord_start"]
    _field(ctx, "coord_start", coord, length - 3 if length >= 4 else 0)
    if attrs["id_index"] >= 0:
        _field(ctx, "id_index", attrs["id_index"], length)
    soft, with_indices = attrs["soft_nms_sigma"] > 0, attrs["return_indices"]
    dtype = data.dtype  # type: ignore[union-attr]
    top_k = attrs["top_k"]

    def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
        src, valid_count, indices = ins
        out, box = outs[0], outs[1]
        i, j, k = index_var("i"), index_var("j"), index_var("k")
        nms = _Nms(i, out, box, length, attrs)
        vc = E.cast(_load(valid_count, i), E.INDEX)

        def before(p: tir.PrimExpr, q: tir.PrimExpr) -> tuple[list[tir.Stmt], tir.PrimExpr]:
            pv, qv = E.binary("lt", p, vc), E.binary("lt", q, vc)
            higher = ahead(_load(src, i, p, score_index), _load(src, i, q, score_index), True)
            first = E.logical_and(pv, E.logical_not(qv))
            return [], E.logical_or(first, E.logical_and(E.logical_and(pv, qv), higher))

        sort, order = merge_sort(anchors, Order(before))
        nkeep, kept = local_scalar("nkeep", I32), local_scalar("num_valid_boxes", I32)
        clamped = E.minimum(
            E.maximum(_load(valid_count, i), E.const(0, I32)), E.const(anchors, I32)
        )
        limit = [set0(nkeep, clamped)]
        if top_k > 0:
            fewer = E.binary("lt", E.const(top_k, I32), at0(nkeep))
            limit.append(tir.IfThenElse(fewer, set0(nkeep, E.const(top_k, I32))))
        pos = tir.BufferLoad(order, (j,), order.dtype)
        copy = seq(
            loop(k, length, _store(out, _load(src, i, pos, k), i, j, k)),
            _store(box, E.cast(pos, I32), i, j),
        )
        first = loop(
            j,
            anchors,
            tir.IfThenElse(E.binary("lt", E.cast(j, I32), at0(nkeep)), copy, nms.fill(j, True)),
        )
        run = _soft_nms if soft else _hard_nms
        stmts = [
            *sort,
            tir.AllocBuffer(nkeep, "alloc_local"),
            tir.AllocBuffer(kept, "alloc_local"),
            *limit,
            first,
            set0(kept, E.const(0, I32)),
            run(nms, at0(nkeep), kept, attrs["iou_threshold"]),
        ]
        n = at0(kept)
        beyond = E.binary("ge", E.cast(j, I32), n)
        if soft and with_indices:
            original = _load(indices, i, _load(box, i, j))
            remap = tir.IfThenElse(E.binary("lt", E.cast(j, I32), n), _store(box, original, i, j))
            stmts += [
                _store(outs[2], n, i, 0),
                loop(j, anchors, seq(remap, tir.IfThenElse(beyond, nms.fill(j, True)))),
            ]
        elif soft:
            stmts.append(loop(j, anchors, tir.IfThenElse(beyond, nms.fill(j, False))))
        elif with_indices:
            count = local_scalar("valid_idx", I32)
            c = at0(count)
            move = seq(
                _store(box, _load(indices, i, _load(box, i, j)), i, c),
                set0(count, E.add(c, E.const(1, I32))),
            )
            alive = E.binary("ge", _load(box, i, j), E.const(0, I32))
            stmts += [
                tir.AllocBuffer(count, "alloc_local"),
                set0(count, E.const(0, I32)),
                loop(j, anchors, tir.IfThenElse(alive, move)),
                _store(outs[2], c, i, 0),
                loop(
                    j,
                    anchors,
                    tir.IfThenElse(
                        E.binary("ge", E.cast(j, I32), c), _store(box, E.const(-1, I32), i, j)
                    ),
                ),
            ]
        return loop(i, batch, seq(*stmts), tir.PARALLEL)

    outputs = [
        ("out_data", (batch, anchors, length), dtype, False),
        ("out_box_indices", (batch, anchors), I32, False),
    ]
    if with_indices:
        outputs.append(("out_valid_box_count", (batch, 1), I32, False))

    def build(kb: te.KernelBuilder, x: te.Tensor, vc: te.Tensor, idx: te.Tensor) -> list[te.Tensor]:
        return kb.extern("non_max_suppression", outputs, [x, vc, idx], body)

    sinfos = tuple(tensor_sinfo(tuple(E.idx(d) for d in shape), dt) for _, shape, dt, _ in outputs)
    result = ctx.emit(
        ctx.call_te("non_max_suppression", build, out_sinfo=relax.TupleStructInfo(sinfos))
    )
    if with_indices:
        wanted = (0, 1, 2) if soft else (1, 2)
        return relax.Tuple(tuple(ctx.emit(relax.TupleGetItem(result, f)) for f in wanted))
    boxes = ctx.emit(relax.TupleGetItem(result, 0))
    if not attrs["invalid_to_bottom"]:
        return boxes
    return ctx.call_te(
        "rearrange_out", _rearrange(batch, anchors, length, score_index), args=[boxes]
    )


def _rearrange(batch: int, anchors: int, length: int, score_index: int):  # noqa: ANN202
    """A kernel moving the boxes with a score >= 0 to the front, -1 after them."""

    def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
        (src,), (out,) = ins, outs
        i, j, k = index_var("i"), index_var("j"), index_var("k")
        count = local_scalar("valid_idx", I32)
        c = at0(count)
        move = seq(
            loop(k, length, _store(out, _load(src, i, j, k), i, c, k)),
            set0(count, E.add(c, E.const(1, I32))),
        )
        valid = E.binary("ge", _load(src, i, j, score_index), E.const(0.0, src.dtype))
        rest = loop(k, length, _store(out, E.const(-1.0, src.dtype), i, j, k))
        per_batch = seq(
            tir.AllocBuffer(count, "alloc_local"),
            set0(count, E.const(0, I32)),
            loop(j, anchors, tir.IfThenElse(valid, move)),
            loop(j, anchors, tir.IfThenElse(E.binary("ge", E.cast(j, I32), c), rest)),
        )
        return loop(i, batch, per_batch, tir.PARALLEL)

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        outs = [("rearranged", (batch, anchors, length), x.dtype, False)]
        return kb.extern("rearrange_out", outs, [x], body)[0]

    return build
