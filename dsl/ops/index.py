"""Indexing operators: slicing, take/gather, scatter, index_tensor, one_hot.

Static slices follow Python's slice rules exactly; a symbolic dim with constant
bounds gets TVM's clamped form (`(T.min(3, n) + 1 - T.min(1, n)) // 2`), a
symbolic end (a size) ends at `T.min(end, dim)`; other symbolic cases keep
only the rank.
"""

from __future__ import annotations

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.binary import broadcast_shapes
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, ndim_of, sinfo_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, define
from tvmlite.dsl.ops.registry import OpPatternKind as K


def _prim_items(ctx: InferCtx, index: int) -> list[tir.PrimExpr | None] | None:
    """Values of a tuple-of-scalars argument; None when not a literal tuple."""
    sinfo = ctx.sinfo(index)
    if not isinstance(sinfo, relax.TupleStructInfo):
        return None
    out: list[tir.PrimExpr | None] = []
    for field in sinfo.fields:
        if not isinstance(field, relax.PrimStructInfo):
            ctx.fail(f"{ctx.arg_name(index)} must hold scalars")
        out.append(field.value)
    return out


def bound_dtype_conflict(call: relax.Call) -> str | None:
    """The error for `R.strided_slice` given axes, bounds or strides that are not
    int64 (`T.FloorDiv(32, 4)` is int32): TVM's check refuses them, its parser
    keeps an annotated one. None when the call is no such thing."""
    if not (isinstance(call.op, relax.Op) and call.op.name == "relax.strided_slice"):
        return None
    for name, arg in zip(("axes", "begin", "end", "strides"), call.args[1:], strict=False):
        sinfo = sinfo_of(arg)
        fields = sinfo.fields if isinstance(sinfo, relax.TupleStructInfo) else ()
        for field in fields:
            if isinstance(field, relax.PrimStructInfo) and field.dtype != "int64":
                return f"R.strided_slice: {name} must hold int64 values, one is {field.dtype}"
    return None


def _clamp(bound: int, dim: tir.PrimExpr) -> tir.PrimExpr:
    if bound >= 0:
        return sa.const(0) if bound == 0 else sa.minimum(sa.const(bound), dim)
    return sa.maximum(sa.add(dim, sa.const(bound)), sa.const(0))


def slice_length(
    dim: tir.PrimExpr, begin: object, end: object, stride: object, inbound: bool
) -> tir.PrimExpr | None:
    """Length of `dim[begin:end:stride]`, or None when it cannot be written down."""
    b, e, s = sa.as_int(begin), sa.as_int(end), sa.as_int(stride)
    n = sa.as_int(dim)
    if b is not None and e is not None and s is not None and s != 0:
        if n is not None:
            return sa.const(len(range(*slice(b, e, s).indices(n))))
        if s > 0 and inbound and b >= 0 and e >= 0:
            return sa.const(max(0, -(-(e - b) // s)))
        if s > 0:
            lo, hi = _clamp(b, dim), _clamp(e, dim)
            if s == 1:
                return sa.sub(hi, lo)
            return sa.floordiv(sa.sub(sa.add(hi, sa.const(s - 1)), lo), sa.const(s))
        return None
    if s == 1 and b == 0 and isinstance(end, tir.PrimExpr) and sa.equal(end, dim):
        return dim
    if b is not None and s is not None and s > 0 and _nonnegative(end) and not inbound:
        # A symbolic end is a size (TVM takes shape vars to be non-negative): the
        # slice ends at T.min(end, dim).
        lo, hi = _clamp(b, dim), sa.minimum(end, dim)  # type: ignore[arg-type]
        if s == 1:
            return sa.sub(hi, lo)
        return sa.floordiv(sa.sub(sa.add(hi, sa.const(s - 1)), lo), sa.const(s))
    if s == 1 and isinstance(begin, tir.PrimExpr) and isinstance(end, tir.PrimExpr) and inbound:
        return sa.sub(end, begin)
    return None


def _nonnegative(e: object) -> bool:
    """Whether `e` is a size built from symbolic dims: vars, non-negative
    constants, their sums, products, quotients, minima and maxima."""
    if isinstance(e, tir.Var):
        return True
    if isinstance(e, tir.IntImm):
        return e.value >= 0
    if isinstance(e, tir.BinaryOp) and e.kind in ("add", "mul", "floordiv", "min", "max"):
        return _nonnegative(e.a) and _nonnegative(e.b)
    return False


@define(
    "relax.strided_slice",
    (
        ArgDef("x"),
        ArgDef("axes", "prim_tuple"),
        ArgDef("begin", "prim_tuple"),
        ArgDef("end", "prim_tuple"),
        ArgDef("strides", "prim_tuple", None),
    ),
    (AttrDef("assume_inbound", False, "bool"),),
    K.kInjective,
)
def infer_strided_slice(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    axes, begin, end = _prim_items(ctx, 1), _prim_items(ctx, 2), _prim_items(ctx, 3)
    strides = _prim_items(ctx, 4) if ctx.nargs > 4 else None
    ndim = ndim_of(data)
    if axes is None or begin is None or end is None:
        return tensor_sinfo(None, data.dtype, ndim)
    if strides is None:
        strides = [sa.const(1)] * len(axes)
    if not len(axes) == len(begin) == len(end) == len(strides):
        ctx.fail(
            f"axes, begin, end and strides must have the same length, got {len(axes)}, "
            f"{len(begin)}, {len(end)} and {len(strides)}"
        )
    if any(sa.as_int(a) is None for a in axes):
        ctx.fail("axes must be integer constants")
    if ndim < 0:
        return tensor_sinfo(None, data.dtype, -1)
    positions = ctx.axes(tuple(sa.as_int(a) for a in axes), ndim, "axes")  # type: ignore[misc]
    if any(sa.as_int(s) == 0 for s in strides):
        ctx.fail("strides must not be 0")
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, data.dtype, ndim)
    out = list(shape)
    inbound = bool(ctx.attr("assume_inbound"))
    for pos, b, e, s in zip(positions, begin, end, strides, strict=True):
        length = slice_length(shape[pos], b, e, s, inbound)
        if length is None:
            return tensor_sinfo(None, data.dtype, ndim)
        out[pos] = length
    return tensor_sinfo(tuple(out), data.dtype)


@define("relax.dynamic_strided_slice", ("x", "begin", "end", "strides"), (), K.kInjective)
def infer_dynamic_strided_slice(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    ndim = ndim_of(data)
    for i in (1, 2, 3):
        bounds = ctx.tensor(i)
        if bounds.dtype != "int64":  # TVM's rule
            ctx.fail(f"{ctx.arg_name(i)} must have dtype int64, got {bounds.dtype}")
        if ndim_of(bounds) not in (-1, 1):
            ctx.fail(f"{ctx.arg_name(i)} must be 1-d, got rank {ndim_of(bounds)}")
        shape = known_shape(bounds)
        if shape is not None and len(shape) == 1 and ndim >= 0:
            ctx.check_dims(shape[0], sa.const(ndim), f"{ctx.arg_name(i)} needs one entry per axis")
    return tensor_sinfo(None, data.dtype, ndim)


@define(
    "relax.take",
    ("x", "indices"),
    (AttrDef("axis", None, "int?"), AttrDef("mode", "fast", "str")),
    K.kInjective,
)
def infer_take(ctx: InferCtx) -> relax.StructInfo:
    """`indices` is an integer tensor or an integer scalar (`R.take(A, n - 1)`,
    taken as a 0-d index)."""
    data = ctx.tensor(0)
    scalar = ctx.sinfo(1)
    if isinstance(scalar, relax.PrimStructInfo):
        if not dt.is_integer_like(scalar.dtype):
            ctx.fail(f"indices must have an integer dtype, got {scalar.dtype}")
        indices = relax.TensorStructInfo((), scalar.dtype, 0)
    else:
        indices = ctx.tensor(1)
    ctx.require_int(indices, "indices")
    if ctx.attr("mode") not in ("fast", "clip", "wrap"):
        ctx.fail(f"mode must be 'fast', 'clip' or 'wrap', got {ctx.attr('mode')!r}")
    ndim, axis = ndim_of(data), ctx.attr("axis")
    if axis is None:
        if ndim >= 0 and ndim != 1:
            ctx.fail(f"without axis the data must be 1-d, got rank {ndim}")
        axis, ndim = 0, 1
    if ndim < 0:
        return tensor_sinfo(None, data.dtype, -1)
    axis = ctx.axis(axis, ndim)
    shape, ishape = known_shape(data), known_shape(indices)
    if shape is None or ishape is None:
        ind = ndim_of(indices)
        return tensor_sinfo(None, data.dtype, ndim - 1 + ind if ind >= 0 else -1)
    return tensor_sinfo(shape[:axis] + ishape + shape[axis + 1 :], data.dtype)


@define("relax.gather_elements", ("data", "indices"), (AttrDef("axis", 0, "int"),), K.kInjective)
def infer_gather_elements(ctx: InferCtx) -> relax.StructInfo:
    data, indices = ctx.tensor(0), ctx.tensor(1)
    ctx.require_int(indices, "indices")
    if ndim_of(data) >= 0:
        if ndim_of(indices) >= 0 and ndim_of(indices) != ndim_of(data):
            ctx.fail(f"indices must have rank {ndim_of(data)}, got {ndim_of(indices)}")
        ctx.axis(ctx.attr("axis"), ndim_of(data))
    return like(indices, data.dtype)


@define("relax.gather_nd", ("data", "indices"), (AttrDef("batch_dims", 0, "int"),), K.kInjective)
def infer_gather_nd(ctx: InferCtx) -> relax.StructInfo:
    data, indices = ctx.tensor(0), ctx.tensor(1)
    ctx.require_int(indices, "indices")
    batch = ctx.attr("batch_dims")
    shape, ishape = known_shape(data), known_shape(indices)
    if shape is None or ishape is None or not ishape or sa.as_int(ishape[-1]) is None:
        return tensor_sinfo(None, data.dtype, -1)
    depth = sa.as_int(ishape[-1])
    if batch + depth > len(shape):  # type: ignore[operator]
        ctx.fail(f"indices reach {batch + depth} dims but data has rank {len(shape)}")  # type: ignore[operator]
    return tensor_sinfo(ishape[:-1] + shape[batch + depth :], data.dtype)  # type: ignore[operator]


@define(
    "relax.scatter_elements",
    ("data", "indices", "updates"),
    (AttrDef("axis", 0, "int"), AttrDef("reduction", "update", "str")),
    K.kOpaque,
)
def infer_scatter_elements(ctx: InferCtx) -> relax.StructInfo:
    data, indices, updates = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    ctx.require_int(indices, "indices")
    ctx.same_dtype(data.dtype, updates.dtype, "data and updates")
    if ndim_of(data) >= 0:
        ctx.axis(ctx.attr("axis"), ndim_of(data))
    return like(data)


@define(
    "relax.scatter_nd",
    ("data", "indices", "updates"),
    (AttrDef("reduction", "update", "str"),),
    K.kOpaque,
)
def infer_scatter_nd(ctx: InferCtx) -> relax.StructInfo:
    data, indices, updates = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    ctx.require_int(indices, "indices")
    ctx.same_dtype(data.dtype, updates.dtype, "data and updates")
    return like(data)


@define(
    "relax.slice_scatter",
    (
        ArgDef("input_tensor"),
        ArgDef("src"),
        ArgDef("start", "prim"),
        ArgDef("end", "prim"),
        ArgDef("step", "prim"),
    ),
    (AttrDef("axis", 0, "int"),),
    K.kOpaque,
)
def infer_slice_scatter(ctx: InferCtx) -> relax.StructInfo:
    data, src = ctx.tensor(0), ctx.tensor(1)
    ctx.same_dtype(data.dtype, src.dtype, "input_tensor and src")
    if ndim_of(data) >= 0:
        ctx.axis(ctx.attr("axis"), ndim_of(data))
    return like(data)


@define(
    "relax.index_put",
    (ArgDef("data"), ArgDef("indices", "tuple"), ArgDef("values")),
    (AttrDef("accumulate", False, "bool"),),
    K.kOpaque,
)
def infer_index_put(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    indices = ctx.tensors(1)
    if ndim_of(data) >= 0 and len(indices) != ndim_of(data):
        ctx.fail(f"needs {ndim_of(data)} index tensors, got {len(indices)}")
    return like(data)


@define("relax.index_tensor", (ArgDef("data"), ArgDef("indices", "tuple")), (), K.kInjective)
def infer_index_tensor(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    indices = ctx.tensors(1)
    for i, t in enumerate(indices):
        ctx.require_int(t, f"indices[{i}]")
    shape = known_shape(data)
    ishapes = [known_shape(t) for t in indices]
    if shape is not None and len(indices) > len(shape):
        ctx.fail(f"got {len(indices)} index tensors for data of rank {len(shape)}")
    if shape is None or any(s is None for s in ishapes) or not indices:
        return tensor_sinfo(None, data.dtype, -1)
    lead = broadcast_shapes(ctx, ishapes)  # type: ignore[arg-type]
    if lead is None:
        return tensor_sinfo(None, data.dtype, -1)
    return tensor_sinfo(lead + shape[len(indices) :], data.dtype)


@define(
    "relax.one_hot",
    # int32/float32 literals: TVM prints int32 values bare (`R.one_hot(x, 7, -1, ...)`)
    # and annotates the result int32, so reading them back as int32 round-trips.
    (ArgDef("indices"), ArgDef("on_value", "prim32"), ArgDef("off_value", "prim32")),
    (AttrDef("depth", kind="int"), AttrDef("axis", -1, "int")),
    K.kInjective,
)
def infer_one_hot(ctx: InferCtx) -> relax.StructInfo:
    indices = ctx.tensor(0)
    ctx.require_int(indices, "indices")
    on, off = ctx.sinfo(1), ctx.sinfo(2)
    if not isinstance(on, relax.PrimStructInfo) or not isinstance(off, relax.PrimStructInfo):
        ctx.fail("on_value and off_value must be scalars")
    dtype = ctx.same_dtype(on.dtype, off.dtype, "on_value and off_value")
    depth = ctx.attr("depth")
    ndim = ndim_of(indices)
    if ndim < 0:
        return tensor_sinfo(None, dtype, -1)
    axis = ctx.attr("axis")
    axis = ndim if axis == -1 else ctx.axis(axis, ndim + 1)
    shape = known_shape(indices)
    if shape is None:
        return tensor_sinfo(None, dtype, ndim + 1)
    return tensor_sinfo(shape[:axis] + (sa.const(depth),) + shape[axis:], dtype)
