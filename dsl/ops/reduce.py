"""Reductions (`R.sum`, `R.mean`, ..., `R.argmax`) and scans (`R.cumsum`).

`axis=None` reduces every axis; `keepdims` keeps reduced axes as 1. When only
the rank is known the result keeps a rank; `R.median` over given axes also
returns the int64 indices, as TVM does.
"""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, OpDef, register
from tvmlite.dsl.ops.registry import OpPatternKind as K

STATISTICAL = ("max", "mean", "min", "prod", "std", "sum", "variance")
STAT_ATTRS = (AttrDef("axis", None, "ints?"), AttrDef("keepdims", False, "bool"))


def reduce_result(
    ctx: InferCtx, data: relax.TensorStructInfo, axes: tuple[int, ...] | None, dtype: str
) -> relax.TensorStructInfo:
    """Shape after reducing `axes` (None = all) of `data`, honouring `keepdims`. As in
    TVM, reducing every axis of a tensor of known rank gives a known shape (all ones,
    or 0-d) even when the input's dims are unknown."""
    keepdims = bool(ctx.attr("keepdims"))
    ndim = ndim_of(data)
    reduced = set(range(max(ndim, 0))) if axes is None else None
    if axes is not None and ndim >= 0:
        reduced = set(ctx.axes(axes, ndim))
    if keepdims:
        out_ndim = ndim
    elif axes is None:
        out_ndim = 0
    else:
        out_ndim = -1 if reduced is None else ndim - len(reduced)
    shape = known_shape(data)
    if shape is None:
        if axes is None and keepdims and out_ndim >= 0:
            return tensor_sinfo((sa.const(1),) * out_ndim, dtype)
        return tensor_sinfo(() if out_ndim == 0 else None, dtype, out_ndim)
    assert reduced is not None
    out = []
    for i, dim in enumerate(shape):
        if i not in reduced:
            out.append(dim)
        elif keepdims:
            out.append(sa.const(1))
    return tensor_sinfo(tuple(out), dtype)


def infer_statistical(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    return reduce_result(ctx, data, ctx.attr("axis"), data.dtype)


for _name in STATISTICAL:
    register(OpDef(f"relax.{_name}", (ArgDef("x"),), STAT_ATTRS, K.kCommReduce, infer_statistical))


def infer_median(ctx: InferCtx) -> relax.StructInfo:
    """Values and their int64 indices when one axis is reduced, the values alone when
    all or several are; TVM's rule also pairs them whenever the input's dims are
    unknown and the result's shape is too."""
    data = ctx.tensor(0)
    axes = ctx.attr("axis")
    values = reduce_result(ctx, data, axes, data.dtype)
    if known_shape(data) is None:
        alone = values.shape is not None
    else:
        alone = axes is None or len(axes) > 1
    if alone:
        return values
    indices = relax.TensorStructInfo(values.shape, "int64", values.ndim)
    return relax.TupleStructInfo((values, indices))


register(OpDef("relax.median", (ArgDef("x"),), STAT_ATTRS, K.kOpaque, infer_median))


def infer_arg_reduce(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    axis = ctx.attr("axis")
    return reduce_result(ctx, data, None if axis is None else (axis,), "int64")


for _name in ("argmax", "argmin"):
    register(
        OpDef(
            f"relax.{_name}",
            (ArgDef("x"),),
            (AttrDef("axis", None, "int?"), AttrDef("keepdims", False, "bool")),
            K.kCommReduce,
            infer_arg_reduce,
        )
    )


def infer_scan(ctx: InferCtx) -> relax.StructInfo:
    """A scan keeps its input's dtype, but bools accumulate in int64, as in PyTorch
    and NumPy (a running count: TVM infers bool, which no scan can accumulate in).
    Without an axis the input is flattened: its size is the product of its dims in
    order, as TVM multiplies them."""
    data = ctx.tensor(0)
    dtype = ctx.attr("dtype") or ("int64" if data.dtype == "bool" else data.dtype)
    axis = ctx.attr("axis")
    if axis is not None:
        ndim = ndim_of(data)
        if ndim >= 0:
            ctx.axis(axis, ndim)
        return like(data, dtype)
    shape = known_shape(data)
    if shape is None:
        return tensor_sinfo(None, dtype, 1)
    return tensor_sinfo((sa.ordered_product(shape),), dtype)


SCAN_ATTRS = (
    AttrDef("axis", None, "int?"),
    AttrDef("dtype", None, "dtype?"),
    AttrDef("exclusive", False, "bool"),
)
for _name in ("cumprod", "cumsum"):
    register(OpDef(f"relax.{_name}", (ArgDef("data"),), SCAN_ATTRS, K.kOpaque, infer_scan))
