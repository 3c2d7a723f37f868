"""`R.vision.*`: the detection operators of TVM's frontends (ONNX, TFLite, PyTorch):
box validity counts, non-maximum suppression, SSD box decoding, ROI align and pool.

Their results follow TVM 0.27's inference: boxes are `(batch, anchors, elements)`
tensors, counts and indices int32 (int64 for the ONNX-style all-class variant).
"""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, define
from tvmlite.dsl.ops.registry import OpPatternKind as K


def _rank(ctx: InferCtx, index: int, rank: int) -> relax.TensorStructInfo:
    data = ctx.tensor(index)
    if ndim_of(data) not in (-1, rank):
        ctx.fail(f"{ctx.arg_name(index)} must have rank {rank}, got {ndim_of(data)}")
    return data


def _dims(data: relax.TensorStructInfo, *axes: int) -> tuple | None:
    shape = known_shape(data)
    return None if shape is None else tuple(shape[a] for a in axes)


@define(
    "relax.vision.get_valid_counts",
    ("data",),
    (
        AttrDef("score_threshold", 0.0, "float"),
        AttrDef("id_index", 0, "int"),
        AttrDef("score_index", 1, "int"),
    ),
    K.kOpaque,
)
def infer_get_valid_counts(ctx: InferCtx) -> relax.StructInfo:
    """(valid count per batch, the boxes with valid ones first, their indices)."""
    data = _rank(ctx, 0, 3)
    batch = _dims(data, 0)
    rows = _dims(data, 0, 1)
    return relax.TupleStructInfo(
        (tensor_sinfo(batch, "int32", 1), like(data), tensor_sinfo(rows, "int32", 2))
    )


@define(
    "relax.vision.non_max_suppression",
    ("data", "valid_count", "indices"),
    (
        AttrDef("max_output_size", -1, "int"),
        AttrDef("iou_threshold", 0.5, "float"),
        AttrDef("force_suppress", False, "bool"),
        AttrDef("top_k", -1, "int"),
        AttrDef("coord_start", 2, "int"),
        AttrDef("score_index", 1, "int"),
        AttrDef("id_index", 0, "int"),
        AttrDef("return_indices", True, "bool"),
        AttrDef("invalid_to_bottom", False, "bool"),
        AttrDef("soft_nms_sigma", 0.0, "float"),
        AttrDef("score_threshold", 0.0, "float"),
    ),
    K.kOpaque,
)
def infer_non_max_suppression(ctx: InferCtx) -> relax.StructInfo:
    """The boxes; or, with `return_indices`, (box indices, valid box count), the
    decayed boxes first under soft-NMS (`soft_nms_sigma > 0`)."""
    data = _rank(ctx, 0, 3)
    _rank(ctx, 1, 1)
    _rank(ctx, 2, 2)
    if not ctx.attr("return_indices"):
        return like(data)
    rows = _dims(data, 0, 1)
    count = None if rows is None else (rows[0], sa.const(1))
    fields = (tensor_sinfo(rows, "int32", 2), tensor_sinfo(count, "int32", 2))
    if ctx.attr("soft_nms_sigma") > 0:
        fields = (like(data), *fields)
    return relax.TupleStructInfo(fields)


@define(
    "relax.vision.all_class_non_max_suppression",
    (
        "boxes",
        "scores",
        ArgDef("max_output_boxes_per_class"),
        ArgDef("iou_threshold"),
        ArgDef("score_threshold"),
    ),
    (AttrDef("output_format", "onnx", "str"),),
    K.kOpaque,
)
def infer_all_class_nms(ctx: InferCtx) -> relax.StructInfo:
    """ONNX: (selected (batch, class, box) rows, their count); TensorFlow: per batch
    (class and box of each selection, its score, the count)."""
    _rank(ctx, 0, 3)
    scores = _rank(ctx, 1, 3)
    form = ctx.attr("output_format")
    if form not in ("onnx", "tensorflow"):
        ctx.fail(f"output_format must be 'onnx' or 'tensorflow', got {form!r}")
    dims = _dims(scores, 0, 1, 2)
    if form == "onnx":
        rows = None if dims is None else (sa.product(dims), sa.const(3))
        return relax.TupleStructInfo(
            (tensor_sinfo(rows, "int64", 2), tensor_sinfo((sa.const(1),), "int64", 1))
        )
    batch, per_batch = (None, None) if dims is None else (dims[0], sa.mul(dims[1], dims[2]))
    return relax.TupleStructInfo(
        (
            tensor_sinfo(None if dims is None else (batch, per_batch, sa.const(2)), "int64", 3),
            tensor_sinfo(None if dims is None else (batch, per_batch), "float32", 2),
            tensor_sinfo(None if dims is None else (batch,), "int64", 1),
        )
    )


@define(
    "relax.vision.multibox_transform_loc",
    ("cls_pred", "loc_pred", "anchor"),
    (
        AttrDef("clip", False, "bool"),
        AttrDef("threshold", 0.0, "float"),
        AttrDef("variances", (1.0, 1.0, 1.0, 1.0), "floats/4"),
        AttrDef("keep_background", True, "bool"),
        AttrDef("apply_softmax", True, "bool"),
    ),
    K.kOpaque,
)
def infer_multibox_transform_loc(ctx: InferCtx) -> relax.StructInfo:
    """(decoded boxes (batch, anchors, 4), class scores (batch, classes, anchors))."""
    cls = _rank(ctx, 0, 3)
    loc = _rank(ctx, 1, 2)
    anchor = _rank(ctx, 2, 3)
    dtype = ctx.same_dtype(cls.dtype, loc.dtype, "cls_pred and loc_pred")
    ctx.same_dtype(dtype, anchor.dtype, "cls_pred and anchor")
    dims = _dims(cls, 0, 1, 2)
    loc_dims = _dims(loc, 0, 1)
    if dims is not None and loc_dims is not None:
        ctx.check_dims(loc_dims[1], sa.mul(dims[2], sa.const(4)), "loc_pred.shape[1] (4 * anchors)")
    boxes = None if dims is None else (dims[0], dims[2], sa.const(4))
    return relax.TupleStructInfo((tensor_sinfo(boxes, dtype, 3), tensor_sinfo(dims, dtype, 3)))


def _roi(ctx: InferCtx) -> relax.StructInfo:
    """(rois, C, pooled h, pooled w), or channels last under NHWC."""
    data = _rank(ctx, 0, 4)
    rois = _rank(ctx, 1, 2)
    layout = ctx.attr("layout")
    if layout not in ("NCHW", "NHWC"):
        ctx.fail(f"layout must be 'NCHW' or 'NHWC', got {layout!r}")
    shape, roi_shape = known_shape(data), known_shape(rois)
    if shape is None or roi_shape is None:
        return tensor_sinfo(None, data.dtype, 4)
    ph, pw = (sa.const(v) for v in ctx.attr("pooled_size"))
    if layout == "NCHW":
        return tensor_sinfo((roi_shape[0], shape[1], ph, pw), data.dtype)
    return tensor_sinfo((roi_shape[0], ph, pw, shape[3]), data.dtype)


@define(
    "relax.vision.roi_align",
    ("data", "rois"),
    (
        AttrDef("pooled_size", kind="ints/2"),
        AttrDef("spatial_scale", kind="float"),
        AttrDef("sample_ratio", -1, "int"),
        AttrDef("aligned", False, "bool"),
        AttrDef("layout", "NCHW", "str"),
        AttrDef("mode", "avg", "str"),
    ),
    K.kOpaque,
)
def infer_roi_align(ctx: InferCtx) -> relax.StructInfo:
    mode = ctx.attr("mode")
    if mode not in ("avg", "max"):
        ctx.fail(f"mode must be 'avg' or 'max', got {mode!r}")
    return _roi(ctx)


@define(
    "relax.vision.roi_pool",
    ("data", "rois"),
    (
        AttrDef("pooled_size", kind="ints/2"),
        AttrDef("spatial_scale", kind="float"),
        AttrDef("layout", "NCHW", "str"),
    ),
    K.kOpaque,
)
def infer_roi_pool(ctx: InferCtx) -> relax.StructInfo:
    return _roi(ctx)
