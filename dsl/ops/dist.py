"""Operators of distributed Relax (`R.dist.*`, `R.ccl.*`) that TVM's sharding
passes print: calls into prim functions on distributed tensors, sharding marks and
redistribution, and collective communication.

Their results are described at the global shape. TVM propagates shardings
through ordinary operators; tvmlite does not, so such a binding states its
`R.DTensor` annotation (TVM always prints it). A CPU build refuses them all
(tvmlite builds for one device).
"""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.calls import call_tir_op
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, OpDef, define, register
from tvmlite.dsl.ops.registry import OpPatternKind as K
from tvmlite.dsl.ops.unary import infer_identity

# `R.dist.call_tir(f, args, out_ty=R.DTensor(...))`: call_tir on global shapes; the
# local-view variant calls a prim function written for one shard.
for _name in ("relax.dist.call_tir", "relax.dist.call_tir_local_view"):
    register(call_tir_op(_name))

_SHARDING = (AttrDef("device_mesh", kind="str"), AttrDef("placement", kind="str"))

# A hint for sharding propagation: the value itself.
register(
    OpDef("relax.dist.annotate_sharding", (ArgDef("input"),), _SHARDING, K.kOpaque, infer_identity)
)


@define("relax.dist.redistribute", (ArgDef("input"),), _SHARDING, K.kOpaque)
def infer_redistribute(ctx: InferCtx) -> relax.StructInfo:
    """The input, placed anew."""
    x = ctx.tensor(0)
    return relax.DTensorStructInfo(
        x.shape,
        x.dtype,
        x.ndim,
        device_mesh=ctx.attr("device_mesh"),
        placement=ctx.attr("placement"),
    )


@define(
    "relax.dist.redistribute_replica_to_shard",
    (ArgDef("input"),),
    (AttrDef("num_workers", kind="int"), AttrDef("axis", kind="int")),
    K.kOpaque,
)
def infer_replica_to_shard(ctx: InferCtx) -> relax.StructInfo:
    """The global tensor; its new placement is what the binding states."""
    return like(ctx.tensor(0))


@define(
    "relax.ccl.allreduce",
    (ArgDef("x"),),
    (AttrDef("op_type", "sum", "str"), AttrDef("in_group", True, "bool")),
    K.kOpaque,
)
def infer_allreduce(ctx: InferCtx) -> relax.StructInfo:
    return like(ctx.tensor(0))


def _workers(ctx: InferCtx) -> int:
    workers = ctx.attr("num_workers")
    if workers <= 0:
        ctx.fail(f"num_workers must be positive, got {workers}")
    return workers


@define(
    "relax.ccl.allgather",
    (ArgDef("x"),),
    (AttrDef("num_workers", kind="int"), AttrDef("in_group", True, "bool")),
    K.kOpaque,
)
def infer_allgather(ctx: InferCtx) -> relax.StructInfo:
    """Every worker's tensor, stacked along the first axis: `num_workers` times as long."""
    x, workers = ctx.tensor(0), _workers(ctx)
    shape = known_shape(x)
    if not shape:
        return like(x)
    return tensor_sinfo((sa.mul(shape[0], sa.const(workers)), *shape[1:]), x.dtype)


register(OpDef("relax.ccl.broadcast_from_worker0", (ArgDef("x"),), (), K.kOpaque, infer_identity))


@define(
    "relax.ccl.scatter_from_worker0",
    (ArgDef("x"),),
    (AttrDef("num_workers", kind="int"), AttrDef("axis", 0, "int")),
    K.kOpaque,
)
def infer_scatter(ctx: InferCtx) -> relax.StructInfo:
    """One worker's part: `axis` split into `num_workers` (TVM refuses an uneven split)."""
    x, workers = ctx.tensor(0), _workers(ctx)
    shape = known_shape(x)
    if shape is None:
        return like(x)
    axis = ctx.axis(ctx.attr("axis"), len(shape))
    extent = sa.as_int(shape[axis])
    if extent is not None and extent % workers:
        ctx.fail(f"axis {axis} of extent {extent} does not split into {workers} workers")
    parts = list(shape)
    parts[axis] = sa.floordiv(shape[axis], sa.const(workers))
    return tensor_sinfo(tuple(parts), x.dtype)
