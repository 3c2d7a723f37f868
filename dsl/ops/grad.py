"""Gradient operators (`R.grad.*`) that TVM's training passes emit: checkpoint
marks (identities) and the backward operators whose result has the shape of the
forward input they differentiate."""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops.context import InferCtx, like
from tvmlite.dsl.ops.registry import OPAQUE, ArgDef, AttrDef, OpDef, define, register
from tvmlite.dsl.ops.unary import infer_identity

for _mark in ("relax.grad.start_checkpoint", "relax.grad.end_checkpoint"):
    register(OpDef(_mark, (ArgDef("input"),), (), OPAQUE, infer_identity))


@define(
    "relax.grad.nll_loss_backward",
    (
        ArgDef("output_grad"),
        ArgDef("predictions"),
        ArgDef("targets"),
        ArgDef("weights", default=None),
    ),
    (AttrDef("reduction", "mean", "str"), AttrDef("ignore_index", -100, "int")),
    OPAQUE,
)
def infer_nll_loss_backward(ctx: InferCtx) -> relax.StructInfo:
    ctx.require_int(ctx.tensor(2), "targets")
    return like(ctx.tensor(1))


@define(
    "relax.grad.take_backward",
    (ArgDef("output_grad"), ArgDef("x"), ArgDef("indices")),
    (AttrDef("axis", None, "int?"), AttrDef("mode", "", "str")),  # TVM's default: ""
    OPAQUE,
)
def infer_take_backward(ctx: InferCtx) -> relax.StructInfo:
    ctx.require_int(ctx.tensor(2), "indices")
    return like(ctx.tensor(1))
