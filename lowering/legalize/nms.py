"""Non-maximum suppression (`R.vision.non_max_suppression`) as TOPI's classic
single-class kernel computes it on a CPU: per batch, the boxes sorted by score
(the stable merge sort of `sort.py`), at most `top_k` of them, then greedy hard
NMS or LiteRT's soft-NMS with Gaussian decay, optionally compacting the kept
boxes' indices or moving the kept boxes to the top. The all-class variant is not
legalized yet: a build stops at it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops.context import tensor_sinfo
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import at0, index_var, local_scalar, loop, seq, set0
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize
from tvmlite.lowering.legalize.sort import Order, ahead, merge_sort
from tvmlite.lowering.legalize.vision import I32, box_layout, check_field, element, put


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
        return element(self.out, self.i, j, k)

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
        minus = loop(k, self.length, put(self.out, E.const(-1.0, self.out.dtype), self.i, j, k))
        return seq(minus, put(self.box, E.const(-1, I32), self.i, j)) if also_box else minus


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
        put(nms.out, E.const(-1.0, dtype), nms.i, k, nms.attrs["score_index"]),
        put(nms.box, E.const(-1, I32), nms.i, k),
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
    alive = E.binary("ge", element(nms.box, i, j), E.const(0, I32))
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
        set0(tmp_idx, element(nms.box, i, n)),
        put(nms.box, element(nms.box, i, b), i, n),
        put(nms.box, at0(tmp_idx), i, b),
        loop(
            k,
            nms.length,
            seq(
                set0(tmp_val, nms.at(n, k)),
                put(nms.out, nms.at(b, k), i, n, k),
                put(nms.out, at0(tmp_val), i, b, k),
            ),
        ),
    )
    score_index = attrs["score_index"]
    iou = nms.iou(n, j)
    iou_thr = E.const(iou_threshold, dtype)
    drop = put(nms.box, E.const(-1, I32), i, j)
    decayed = E.mul(nms.score(j), E.call("exp", dtype, E.mul(E.mul(scale, iou), iou)))
    decay = seq(
        put(nms.out, decayed, i, j, score_index),
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
    batch, anchors, length, dtype = box_layout(ctx)
    attrs = ctx.attrs
    score_index = attrs["score_index"]
    check_field(ctx, "coord_start", attrs["coord_start"], max(length - 3, 0))  # four coordinates
    soft, with_indices = attrs["soft_nms_sigma"] > 0, attrs["return_indices"]
    top_k = attrs["top_k"]

    def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
        src, valid_count, indices = ins
        out, box = outs[0], outs[1]
        i, j, k = index_var("i"), index_var("j"), index_var("k")
        nms = _Nms(i, out, box, length, attrs)
        vc = E.cast(element(valid_count, i), E.INDEX)

        def before(p: tir.PrimExpr, q: tir.PrimExpr) -> tuple[list[tir.Stmt], tir.PrimExpr]:
            pv, qv = E.binary("lt", p, vc), E.binary("lt", q, vc)
            higher = ahead(element(src, i, p, score_index), element(src, i, q, score_index), True)
            first = E.logical_and(pv, E.logical_not(qv))
            return [], E.logical_or(first, E.logical_and(E.logical_and(pv, qv), higher))

        sort, order = merge_sort(anchors, Order(before))
        nkeep, kept = local_scalar("nkeep", I32), local_scalar("num_valid_boxes", I32)
        clamped = E.minimum(
            E.maximum(element(valid_count, i), E.const(0, I32)), E.const(anchors, I32)
        )
        limit = [set0(nkeep, clamped)]
        if top_k > 0:
            fewer = E.binary("lt", E.const(top_k, I32), at0(nkeep))
            limit.append(tir.IfThenElse(fewer, set0(nkeep, E.const(top_k, I32))))
        pos = tir.BufferLoad(order, (j,), order.dtype)
        copy = seq(
            loop(k, length, put(out, element(src, i, pos, k), i, j, k)),
            put(box, E.cast(pos, I32), i, j),
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
            original = element(indices, i, element(box, i, j))
            remap = tir.IfThenElse(E.binary("lt", E.cast(j, I32), n), put(box, original, i, j))
            stmts += [
                put(outs[2], n, i, 0),
                loop(j, anchors, seq(remap, tir.IfThenElse(beyond, nms.fill(j, True)))),
            ]
        elif soft:
            stmts.append(loop(j, anchors, tir.IfThenElse(beyond, nms.fill(j, False))))
        elif with_indices:
            count = local_scalar("valid_idx", I32)
            c = at0(count)
            move = seq(
                put(box, element(indices, i, element(box, i, j)), i, c),
                set0(count, E.add(c, E.const(1, I32))),
            )
            alive = E.binary("ge", element(box, i, j), E.const(0, I32))
            stmts += [
                tir.AllocBuffer(count, "alloc_local"),
                set0(count, E.const(0, I32)),
                loop(j, anchors, tir.IfThenElse(alive, move)),
                put(outs[2], c, i, 0),
                loop(
                    j,
                    anchors,
                    tir.IfThenElse(
                        E.binary("ge", E.cast(j, I32), c), put(box, E.const(-1, I32), i, j)
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
            loop(k, length, put(out, element(src, i, j, k), i, c, k)),
            set0(count, E.add(c, E.const(1, I32))),
        )
        valid = E.binary("ge", element(src, i, j, score_index), E.const(0.0, src.dtype))
        rest = loop(k, length, put(out, E.const(-1.0, src.dtype), i, j, k))
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
