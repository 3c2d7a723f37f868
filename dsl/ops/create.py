"""Tensor creation: full/zeros/ones (and `_like`), arange, eye, tril/triu,
hamming_window.

Scalar arguments are `PrimValue`s (int64/float64 from literals, as TVM's
wrappers make them); `R.arange` fills in its dtype the way TVM's wrapper does
(int64 when every bound is an integer, else float32).
"""

from __future__ import annotations

import math

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, like, ndim_of, sinfo_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, BuildCtx, define
from tvmlite.dsl.ops.registry import OpPatternKind as K

DTYPE_OPT = (AttrDef("dtype", None, "dtype?"),)
DTYPE_REQ = (AttrDef("dtype", kind="dtype"),)


def _fill_dtype(ctx: InferCtx, index: int) -> str:
    fill = ctx.tensor(index, "fill_value")
    if ndim_of(fill) > 0:
        ctx.fail(f"fill_value must be a 0-d tensor, got rank {ndim_of(fill)}")
    return fill.dtype


@define("relax.full", (ArgDef("shape", "shape"), ArgDef("fill_value")), DTYPE_OPT, K.kElemWise)
def infer_full(ctx: InferCtx) -> relax.StructInfo:
    fill_dtype = _fill_dtype(ctx, 1)
    dtype = ctx.attr("dtype") or fill_dtype
    values = ctx.shape_arg(0)
    return tensor_sinfo(values, dtype, ctx.shape_ndim(0))


@define("relax.full_like", (ArgDef("x"), ArgDef("fill_value")), DTYPE_OPT, K.kElemWise)
def infer_full_like(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    _fill_dtype(ctx, 1)
    return like(data, ctx.attr("dtype") or data.dtype)


def infer_fill(ctx: InferCtx) -> relax.StructInfo:
    """`R.zeros` / `R.ones`: a shape and a required dtype."""
    return tensor_sinfo(ctx.shape_arg(0), ctx.attr("dtype"), ctx.shape_ndim(0))


def infer_fill_like(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    return like(data, ctx.attr("dtype") or data.dtype)


for _name in ("zeros", "ones"):
    define(f"relax.{_name}", (ArgDef("shape", "shape"),), DTYPE_REQ, K.kElemWise)(infer_fill)
    define(f"relax.{_name}_like", ("x",), DTYPE_OPT, K.kElemWise)(infer_fill_like)


def _scalar_dtype(expr: relax.Expr | None) -> str:
    if isinstance(expr, relax.PrimValue):
        return expr.value.dtype
    sinfo = sinfo_of(expr) if expr is not None else None
    return sinfo.dtype if isinstance(sinfo, relax.PrimStructInfo) else "void"


def build_arange(ctx: BuildCtx) -> None:
    """`R.arange(n)` means `R.arange(0, n)`; a missing dtype follows the bounds."""
    start, end = ctx.args[0], ctx.args[1]
    if end is None:
        ctx.args[0], ctx.args[1] = relax.PrimValue(sa.const(0)), start
    if ctx.attrs["dtype"] is None:
        dtypes = [_scalar_dtype(a) for a in ctx.args]
        integral = all(d != "void" and dt.is_integer_like(d) for d in dtypes)
        ctx.attrs["dtype"] = "int64" if integral else "float32"


def _number(expr: tir.PrimExpr | None) -> int | float | None:
    if isinstance(expr, (tir.IntImm, tir.FloatImm)) and expr.dtype != "bool":
        return expr.value
    return None


@define(
    "relax.arange",
    (ArgDef("start", "prim"), ArgDef("end", "prim", None), ArgDef("step", "prim", 1)),
    DTYPE_OPT,
    K.kInjective,
    build_arange,
)
def infer_arange(ctx: InferCtx) -> relax.StructInfo:
    start, end, step = ctx.prim(0), ctx.prim(1), ctx.prim(2)
    dtype = ctx.attr("dtype") or "int64"
    values = [_number(v) for v in (start, end, step)]
    if all(v is not None for v in values):
        lo, hi, st = values
        if st == 0:
            ctx.fail("step must not be 0")
        return tensor_sinfo((sa.const(max(0, math.ceil((hi - lo) / st))),), dtype)  # type: ignore[operator]
    ints = all(v is None or isinstance(v, int) for v in values)
    positive_step = isinstance(values[2], int) and values[2] > 0
    if ints and start is not None and end is not None and positive_step:
        return tensor_sinfo((sa.ceildiv(sa.sub(end, start), step),), dtype)  # type: ignore[arg-type]
    return tensor_sinfo(None, dtype, 1)


def build_eye(ctx: BuildCtx) -> None:
    if ctx.args[1] is None:
        ctx.args[1] = ctx.args[0]


@define(
    "relax.eye",
    (ArgDef("n", "prim"), ArgDef("m", "prim", None), ArgDef("k", "prim", 0)),
    (AttrDef("dtype", "float32", "dtype"),),
    K.kInjective,
    build_eye,
)
def infer_eye(ctx: InferCtx) -> relax.StructInfo:
    n, m = ctx.prim(0), ctx.prim(1)
    ctx.prim(2)
    if n is None or m is None:
        return tensor_sinfo(None, ctx.attr("dtype"), 2)
    return tensor_sinfo((sa.to_index(n), sa.to_index(m)), ctx.attr("dtype"))


@define("relax.eye_like", (ArgDef("x"), ArgDef("k", "prim", 0)), DTYPE_OPT, K.kInjective)
def infer_eye_like(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    if ndim_of(data) not in (-1, 2):
        ctx.fail(f"x must be 2-d, got rank {ndim_of(data)}")
    return like(data, ctx.attr("dtype") or data.dtype)


def infer_triangle(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    if ndim_of(data) >= 0 and ndim_of(data) < 2:
        ctx.fail(f"x must have rank at least 2, got {ndim_of(data)}")
    ctx.prim(1)
    return like(data)


for _name in ("tril", "triu"):
    define(f"relax.{_name}", (ArgDef("x"), ArgDef("k", "prim", 0)), (), K.kInjective)(
        infer_triangle
    )


@define(
    "relax.hamming_window",
    (
        ArgDef("window_size", "prim"),
        ArgDef("periodic", "prim"),
        ArgDef("alpha", "prim"),
        ArgDef("beta", "prim"),
    ),
    DTYPE_REQ,
    K.kInjective,
)
def infer_hamming_window(ctx: InferCtx) -> relax.StructInfo:
    size = ctx.prim(0)
    if size is None:
        return tensor_sinfo(None, ctx.attr("dtype"), 1)
    return tensor_sinfo((sa.to_index(size),), ctx.attr("dtype"))
