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
The suppressions are in `nms.py`.
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import index_var, loop, seq, static_dims
from tvmlite.lowering.legalize.nn import softmax_stages
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize

I32 = "int32"


def element(buf: tir.Buffer, *index: tir.PrimExpr) -> tir.BufferLoad:
    """`buf[index]` (the IR-builder kernels here index N-d buffers directly)."""
    return tir.BufferLoad(buf, tuple(E.idx(i) for i in index), buf.dtype)


def put(buf: tir.Buffer, value: tir.PrimExpr, *index: tir.PrimExpr) -> tir.BufferStore:
    """`buf[index] = value`."""
    return tir.BufferStore(buf, value, tuple(E.idx(i) for i in index))


def check_field(ctx: LegalizeCtx, name: str, value: int, length: int) -> int:
    """An element index attribute, which the kernel reads at: in range, or no kernel."""
    if not 0 <= value < length:
        raise LegalizeUnsupported(f"{ctx.op.display} with {name}={value} outside the box")
    return value


def box_layout(ctx: LegalizeCtx) -> tuple[int, int, int, str]:
    """(batch, anchors, box length, dtype) of the boxes argument, whose `score_index`
    and `id_index` (when not -1) attributes must name elements of a box."""
    data = ctx.arg_sinfo[0]
    batch, anchors, length = static_dims(getattr(data, "shape", None) or (), ctx.op.display)
    check_field(ctx, "score_index", ctx.attrs["score_index"], length)
    if ctx.attrs["id_index"] >= 0:
        check_field(ctx, "id_index", ctx.attrs["id_index"], length)
    return batch, anchors, length, data.dtype  # type: ignore[union-attr]


@register_legalize("relax.vision.get_valid_counts")
def legalize_get_valid_counts(ctx: LegalizeCtx) -> relax.Expr:
    batch, anchors, length, dtype = box_layout(ctx)
    attrs = ctx.attrs
    score_index, id_index = attrs["score_index"], attrs["id_index"]
    threshold = E.const(attrs["score_threshold"], dtype)

    def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
        (src,), (count, out, index) = ins, outs
        i, j, k = index_var("i"), index_var("j"), index_var("k")
        valid = E.binary("gt", element(src, i, j, score_index), threshold)
        if id_index >= 0:
            valid = E.logical_and(
                valid, E.binary("ge", element(src, i, j, id_index), E.const(0, dtype))
            )
        cur = element(count, i)
        take = seq(
            loop(k, length, put(out, element(src, i, j, k), i, cur, k)),
            put(index, E.cast(j, I32), i, cur),
            put(count, E.add(cur, E.const(1, I32)), i),
        )
        empty = seq(
            loop(k, length, put(out, E.const(-1.0, dtype), i, j, k)),
            put(index, E.const(-1, I32), i, j),
        )
        rest = tir.IfThenElse(E.binary("ge", E.cast(j, I32), cur), empty)
        per_batch = seq(
            put(count, E.const(0, I32), i),
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
