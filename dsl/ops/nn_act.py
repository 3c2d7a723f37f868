"""`R.nn` activations, softmax, dropout, pad, pixel_shuffle, batch_flatten,
losses and attention.

`R.nn.relu6(x)` is not an operator in TVM: its wrapper builds `R.clip(x, 0, 6)`,
and so does ours. `R.nn.attention` with a bias becomes `R.nn.attention_bias`.
"""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.convert import prim_value
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, BuildCtx, OpDef, define, register
from tvmlite.dsl.ops.registry import OpPatternKind as K
from tvmlite.dsl.ops.unary import infer_any_unary, infer_float_unary

register(OpDef("relax.nn.relu", (ArgDef("data"),), (), K.kElemWise, infer_any_unary))
for _name in ("gelu", "gelu_tanh", "selu", "silu"):
    register(OpDef(f"relax.nn.{_name}", (ArgDef("data"),), (), K.kElemWise, infer_float_unary))


def build_relu6(ctx: BuildCtx) -> relax.Call:
    return relax.Call(
        relax.Op("relax.clip"), (ctx.args[0], prim_value(0), prim_value(6)), span=ctx.span
    )


register(OpDef("relax.nn.relu6", (ArgDef("data"),), (), K.kElemWise, infer_any_unary, build_relu6))
register(
    OpDef(
        "relax.nn.leakyrelu",
        (ArgDef("data"),),
        (AttrDef("alpha", 0.01, "float"),),
        K.kElemWise,
        infer_float_unary,
    )
)
register(
    OpDef(
        "relax.nn.softplus",
        (ArgDef("data"),),
        (AttrDef("beta", 1.0, "float"), AttrDef("threshold", 20.0, "float")),
        K.kElemWise,
        infer_float_unary,
    )
)


@define("relax.nn.prelu", ("data", "alpha"), (AttrDef("axis", 1, "int"),), K.kElemWise)
def infer_prelu(ctx: InferCtx) -> relax.StructInfo:
    data, alpha = ctx.tensor(0), ctx.tensor(1)
    ctx.require_float(data, "data")
    ctx.same_dtype(data.dtype, alpha.dtype, "data and alpha")
    if ndim_of(data) >= 0:
        ctx.axis(ctx.attr("axis"), ndim_of(data))
    return like(data)


def infer_softmax(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    ctx.require_float(data, "data")
    if ndim_of(data) >= 0:
        ctx.axis(ctx.attr("axis"), ndim_of(data))
    return like(data)


for _name in ("softmax", "log_softmax"):
    define(f"relax.nn.{_name}", ("data",), (AttrDef("axis", -1, "int"),), K.kOutEWiseFusable)(
        infer_softmax
    )


@define("relax.nn.dropout", ("data",), (AttrDef("rate", 0.5, "float"),), K.kOpaque)
def infer_dropout(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    rate = ctx.attr("rate")
    if not 0.0 <= rate <= 1.0:
        ctx.fail(f"rate must be in [0, 1], got {rate}")
    return relax.TupleStructInfo((like(data), like(data)))


@define(
    "relax.nn.pad",
    ("data",),
    (
        AttrDef("pad_width", kind="ints"),
        AttrDef("pad_value", 0.0, "float"),
        AttrDef("pad_mode", "constant", "str"),
    ),
    K.kInjective,
    signature=("data", "pad_width", "pad_mode", "pad_value"),
)
def infer_pad(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    width = ctx.attr("pad_width")
    mode = ctx.attr("pad_mode")
    if mode not in ("constant", "reflect", "replicate", "circular", "edge"):
        ctx.fail(f"unknown pad_mode {mode!r}")
    ndim = ndim_of(data)
    if ndim >= 0 and len(width) != 2 * ndim:
        ctx.fail(f"pad_width needs {2 * ndim} entries for rank {ndim}, got {len(width)}")
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, ndim)
    out = tuple(sa.add(d, sa.const(width[2 * i] + width[2 * i + 1])) for i, d in enumerate(shape))
    return tensor_sinfo(out, data.dtype)


@define("relax.nn.pixel_shuffle", ("data",), (AttrDef("upscale_factor", kind="int"),), K.kInjective)
def infer_pixel_shuffle(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    r = ctx.attr("upscale_factor")
    shape = known_shape(data)
    if shape is None or len(shape) < 3:
        return tensor_sinfo(None, data.dtype, ndim_of(data))
    channels = shape[-3]
    if sa.as_int(channels) is not None and sa.as_int(channels) % (r * r):  # type: ignore[operator]
        ctx.fail(f"channels {sa.show(channels)} are not divisible by {r * r}")
    out = shape[:-3] + (
        sa.floordiv(channels, sa.const(r * r)),
        sa.mul(shape[-2], sa.const(r)),
        sa.mul(shape[-1], sa.const(r)),
    )
    return tensor_sinfo(out, data.dtype)


@define("relax.nn.batch_flatten", ("data",), (), K.kInjective)
def infer_batch_flatten(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, 2)
    if not shape:
        ctx.fail("data must have rank at least 1")
    return tensor_sinfo((shape[0], sa.product(shape[1:])), data.dtype)


@define("relax.nn.cross_entropy_with_logits", ("predictions", "labels"), (), K.kOpaque)
def infer_cross_entropy(ctx: InferCtx) -> relax.StructInfo:
    pred, labels = ctx.tensor(0), ctx.tensor(1)
    dtype = ctx.same_dtype(pred.dtype, labels.dtype, "predictions and labels")
    return tensor_sinfo((), dtype)


@define(
    "relax.nn.nll_loss",
    (ArgDef("predictions"), ArgDef("targets"), ArgDef("weights", default=None)),
    (AttrDef("reduction", "mean", "str"), AttrDef("ignore_index", -100, "int")),
    K.kOpaque,
)
def infer_nll_loss(ctx: InferCtx) -> relax.StructInfo:
    pred, targets = ctx.tensor(0), ctx.tensor(1)
    ctx.require_int(targets, "targets")
    reduction = ctx.attr("reduction")
    if reduction not in ("mean", "sum", "none"):
        ctx.fail(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if reduction == "none":
        return like(targets, pred.dtype)
    return tensor_sinfo((), pred.dtype)


ATTENTION_ATTRS = (
    AttrDef("scale", None, "floatimm?"),
    AttrDef("causal_mask", None, "str?"),
    AttrDef("window_size", None, "int?"),
)


def build_attention(ctx: BuildCtx) -> relax.Call | None:
    if ctx.args[3] is None:
        return None
    return relax.Call(
        relax.Op("relax.nn.attention_bias"),
        tuple(ctx.args),
        attrs=tuple(ctx.attrs.items()),
        span=ctx.span,
    )


def infer_attention(ctx: InferCtx) -> relax.StructInfo:
    q, k, v = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    dtype = ctx.same_dtype(ctx.same_dtype(q.dtype, k.dtype), v.dtype)
    mask = ctx.attr("causal_mask")
    if mask not in (None, "TopLeft", "BottomRight"):
        ctx.fail(f"causal_mask must be 'TopLeft' or 'BottomRight', got {mask!r}")
    shapes = [known_shape(t) for t in (q, k, v)]
    for name, t in zip(("query", "key", "value"), (q, k, v), strict=True):
        if ndim_of(t) not in (-1, 4):
            ctx.fail(f"{name} must be 4-d (batch, seq, heads, dim), got rank {ndim_of(t)}")
    if any(s is None for s in shapes):
        return tensor_sinfo(None, dtype, 4)
    sq, sk, sv = shapes
    ctx.check_dims(sq[0], sk[0], "query and key batch differ")  # type: ignore[index]
    heads_q, heads_k = sa.as_int(sq[2]), sa.as_int(sk[2])  # type: ignore[index]
    if heads_q is not None and heads_k and heads_q % heads_k:
        # TVM's rule: grouped-query attention shares each key head among a group.
        ctx.fail(f"query heads ({heads_q}) must be a multiple of key heads ({heads_k})")
    ctx.check_dims(sq[3], sk[3], "query and key head dims differ")  # type: ignore[index]
    ctx.check_dims(sk[1], sv[1], "key and value sequence lengths differ")  # type: ignore[index]
    return tensor_sinfo((sq[0], sq[1], sq[2], sv[3]), dtype)  # type: ignore[index]


register(
    OpDef(
        "relax.nn.attention",
        (ArgDef("query"), ArgDef("key"), ArgDef("value"), ArgDef("bias", default=None)),
        ATTENTION_ATTRS,
        K.kOutEWiseFusable,
        infer_attention,
        build_attention,
    )
)
register(
    OpDef(
        "relax.nn.attention_bias",
        (ArgDef("query"), ArgDef("key"), ArgDef("value"), ArgDef("bias")),
        ATTENTION_ATTRS,
        K.kOutEWiseFusable,
        infer_attention,
    )
)


@define(
    "relax.nn.attention_var_len",
    (
        "queries",
        "keys",
        "values",
        "seqstart_q",
        "seqstart_k",
        ArgDef("max_seqlen_q", "prim"),
        ArgDef("max_seqlen_k", "prim"),
    ),
    ATTENTION_ATTRS,
    K.kOutEWiseFusable,
    signature=(
        "queries",
        "keys",
        "values",
        "seqstart_q",
        "max_seqlen_q",
        "seqstart_k",
        "max_seqlen_k",
        "scale",
        "causal_mask",
        "window_size",
    ),
)
def infer_attention_var_len(ctx: InferCtx) -> relax.StructInfo:
    """TVM's attention inference (sequences concatenated along axis 1), and what
    the kernels TVM offloads it to require: integer offsets, and a sliding window
    only with the bottom-right causal mask."""
    batch = known_shape(ctx.tensor(0))
    if batch is not None and len(batch) == 4 and sa.as_int(batch[0]) not in (None, 1):
        ctx.fail(
            f"queries must have batch size 1 (sequences are concatenated), got {sa.show(batch[0])}"
        )
    out = infer_attention(ctx)
    lengths = []
    for index in (3, 4):
        starts = ctx.tensor(index)
        ctx.require_int(starts, ctx.arg_name(index))
        if ndim_of(starts) not in (-1, 1):
            ctx.fail(f"{ctx.arg_name(index)} must be 1-d, got rank {ndim_of(starts)}")
        lengths.append(known_shape(starts))
    if lengths[0] is not None and lengths[1] is not None:
        ctx.check_dims(lengths[0][0], lengths[1][0], "seqstart_q and seqstart_k differ in length")
    if ctx.attr("window_size") is not None and ctx.attr("causal_mask") != "BottomRight":
        ctx.fail('window_size needs causal_mask="BottomRight"')
    return out
