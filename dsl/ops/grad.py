"""Gradient operators (`R.grad.*`) that TVM's training passes emit: checkpoint and
no-gradient marks (identities) and the backward operators (of nll_loss, take,
max/avg_pool2d) whose result has the shape of the forward input they differentiate."""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops.context import InferCtx, like
from tvmlite.dsl.ops.nn_conv import POOL_SIGNATURE, build_out_layout, pool_attrs
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, OpDef, define, register
from tvmlite.dsl.ops.registry import OpPatternKind as K
from tvmlite.dsl.ops.unary import infer_identity

for _mark in ("relax.grad.start_checkpoint", "relax.grad.end_checkpoint", "relax.grad.no_grad"):
    register(OpDef(_mark, (ArgDef("input"),), (), K.kOpaque, infer_identity))


@define(
    "relax.grad.nll_loss_backward",
    (
        ArgDef("output_grad"),
        ArgDef("predictions"),
        ArgDef("targets"),
        ArgDef("weights", default=None),
    ),
    (AttrDef("reduction", "mean", "str"), AttrDef("ignore_index", -100, "int")),
    K.kOpaque,
)
def infer_nll_loss_backward(ctx: InferCtx) -> relax.StructInfo:
    ctx.require_int(ctx.tensor(2), "targets")
    return like(ctx.tensor(1))


@define(
    "relax.grad.take_backward",
    (ArgDef("output_grad"), ArgDef("x"), ArgDef("indices")),
    (AttrDef("axis", None, "int?"), AttrDef("mode", "", "str")),  # TVM's default: ""
    K.kOpaque,
)
def infer_take_backward(ctx: InferCtx) -> relax.StructInfo:
    ctx.require_int(ctx.tensor(2), "indices")
    return like(ctx.tensor(1))


def infer_pool_backward(ctx: InferCtx) -> relax.StructInfo:
    ctx.tensor(0, "output_grad")
    return like(ctx.tensor(1, "data"))


# The gradients of 2-d pooling: the forward op's attributes and signature after the
# output gradient (TVM's `count_include_pad` default is False for both).
for _kind in ("max", "avg"):
    register(
        OpDef(
            f"relax.grad.{_kind}_pool2d_backward",
            (ArgDef("output_grad"), ArgDef("data")),
            pool_attrs(2, False),
            K.kOpaque,
            infer_pool_backward,
            build_out_layout,
            signature=("output_grad", *POOL_SIGNATURE),
        )
    )
