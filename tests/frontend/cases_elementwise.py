"""Cases: elementwise math, activations, binary arithmetic, comparisons, logic."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from cases import Case, boolean, f16, f32, f64, i32, i64, pos, u8, unit

X = f32(3, 4)

_UNARY = [
    ("abs.default", torch.abs, X),
    ("acos.default", torch.acos, unit(3, 4)),
    ("acosh.default", torch.acosh, f32(3, 4, low=1.1, high=4.0)),
    ("asin.default", torch.asin, unit(3, 4)),
    ("asinh.default", torch.asinh, X),
    ("atan.default", torch.atan, X),
    ("atanh.default", torch.atanh, unit(3, 4)),
    ("ceil.default", torch.ceil, X),
    ("cos.default", torch.cos, X),
    ("cosh.default", torch.cosh, X),
    ("erf.default", torch.erf, X),
    ("exp.default", torch.exp, X),
    ("floor.default", torch.floor, X),
    ("log.default", torch.log, pos(3, 4)),
    ("neg.default", torch.neg, X),
    ("sigmoid.default", torch.sigmoid, X),
    ("sign.default", torch.sign, X),
    ("sin.default", torch.sin, X),
    ("sinh.default", torch.sinh, X),
    ("square.default", torch.square, X),
    ("tan.default", torch.tan, unit(3, 4)),
    ("tanh.default", torch.tanh, X),
    ("trunc.default", torch.trunc, X),
    ("relu.default", torch.relu, X),
    ("selu.default", F.selu, X),
    ("silu.default", F.silu, X),
    ("relu6.default", F.relu6, X),
    ("log2.default", torch.log2, pos(3, 4)),
    ("log10.default", torch.log10, pos(3, 4)),
    ("log1p.default", torch.log1p, pos(3, 4)),
    ("expm1.default", torch.expm1, X),
    ("reciprocal.default", torch.reciprocal, pos(3, 4)),
    ("sqrt.default", torch.sqrt, pos(3, 4)),
    ("rsqrt.default", torch.rsqrt, pos(3, 4)),
    ("round.default", torch.round, f32(3, 4, low=-5, high=5)),
    ("gelu.default", F.gelu, X),
    ("hardsigmoid.default", F.hardsigmoid, f32(3, 4, low=-4, high=4)),
    ("hardswish.default", F.hardswish, f32(3, 4, low=-4, high=4)),
    ("hardtanh.default", F.hardtanh, X),
    ("leaky_relu.default", F.leaky_relu, X),
    ("softplus.default", F.softplus, X),
    ("celu.default", F.celu, X),
    ("elu.default", F.elu, X),
    ("isinf.default", torch.isinf, X),
    ("isnan.default", torch.isnan, X),
    ("isfinite.default", torch.isfinite, X),
    ("bitwise_not.default", torch.bitwise_not, i64(3, 4)),
    ("logical_not.default", torch.logical_not, X),
    ("max.default", torch.max, X),
    ("min.default", torch.min, X),
]


CASES = [Case(op, fn, (spec,)) for op, fn, spec in _UNARY]
CASES += [
    Case("sqrt.default", torch.sqrt, (i64(3, 4, low=0, high=9),), "int"),
    Case("rsqrt.default", torch.rsqrt, (i64(3, 4, low=1, high=9),), "int"),
    Case("exp.default", torch.exp, (f64(3, 4),), "f64"),
    Case("tanh.default", torch.tanh, (f64(3, 4),), "f64"),
    Case("abs.default", torch.abs, (i32(3, 4),), "i32", check="exact"),
    Case("neg.default", torch.neg, (i64(3, 4),), "i64", check="exact"),
    Case("relu.default", torch.relu, (f16(3, 4),), "f16", rtol=1e-3, atol=1e-3),
    Case("gelu.default", lambda x: F.gelu(x, approximate="tanh"), (X,), "tanh"),
    Case("leaky_relu.default", lambda x: F.leaky_relu(x, 0.2), (X,), "slope"),
    Case("hardtanh.default", lambda x: F.hardtanh(x, -0.5, 0.75), (X,), "bounds"),
    Case("softplus.default", lambda x: F.softplus(x, 2.0, 1.0), (X,), "beta"),
    Case("celu.default", lambda x: F.celu(x, 2.0), (X,), "alpha"),
    Case("elu.default", lambda x: F.elu(x, 0.5), (X,), "alpha"),
    Case("round.decimals", lambda x: torch.round(x, decimals=2), (X,)),
    Case("round.decimals", lambda x: torch.round(x * 100, decimals=-1), (X,), "negative"),
    Case("logical_not.default", torch.logical_not, (boolean(3, 4),), "bool"),
    Case("bitwise_not.default", torch.bitwise_not, (boolean(3, 4),), "bool"),
    Case("max.default", torch.max, (i64(3, 4),), "int", check="exact"),
    Case("clamp.default", lambda x: torch.clamp(x, -0.5, 0.5), (X,)),
    Case("clamp.default", lambda x: torch.clamp(x, min=0.0), (X,), "min_only"),
    Case("clamp.default", lambda x: torch.clamp(x, -3, 3), (i64(3, 4),), "int", check="exact"),
    Case("clamp.Tensor", lambda x, lo: torch.clamp(x, lo, None), (X, f32(3, 4))),
    Case("clamp_min.default", lambda x: torch.clamp_min(x, 0.25), (X,)),
    Case("clamp_max.default", lambda x: torch.clamp_max(x, 0.25), (X,)),
    Case("softmax.int", lambda x: torch.softmax(x, -1), (X,)),
    Case("softmax.int", lambda x: torch.softmax(x, 0), (X,), "dim0"),
    Case("_softmax.default", lambda x: torch.softmax(x, 1), (X,), decompose=True),
    Case("log_softmax.int", lambda x: torch.log_softmax(x, -1), (X,)),
    Case("_log_softmax.default", lambda x: torch.log_softmax(x, 1), (X,), decompose=True),
    Case("softshrink.default", F.softshrink, (X,)),
    Case("softshrink.default", lambda x: F.softshrink(x, 1.0), (X,), "lambda"),
    Case("prelu.default", F.prelu, (f32(2, 3, 4), f32(3))),
    Case("prelu.default", F.prelu, (f32(5), f32(1)), "1d"),
    Case("tril.default", torch.tril, (f32(4, 5),)),
    Case("tril.default", lambda x: torch.tril(x, 1), (f32(4, 5),), "k1"),
    Case("triu.default", torch.triu, (f32(4, 5),)),
    Case("triu.default", lambda x: torch.triu(x, -1), (f32(2, 4, 5),), "batched"),
    Case("relu_.default", lambda x: F.relu(x.clone(), inplace=True), (X,)),
    Case("silu_.default", lambda x: F.silu(x.clone(), inplace=True), (X,)),
    Case("relu6_.default", lambda x: F.relu6(x.clone(), inplace=True), (X,)),
    Case("hardswish_.default", lambda x: F.hardswish(x.clone(), inplace=True), (X,)),
    Case("hardtanh_.default", lambda x: F.hardtanh(x.clone(), inplace=True), (X,)),
    Case("leaky_relu_.default", lambda x: F.leaky_relu(x.clone(), inplace=True), (X,)),
    Case("isin.Tensor_Tensor", torch.isin, (i64(3, 4), i64(5)), check="exact"),
]

# ---------------------------------------------------------------- binary

Y = f32(3, 4)
ROW = f32(4)

CASES += [
    Case("add.Tensor", torch.add, (X, Y)),
    Case("add.Tensor", torch.add, (X, ROW), "broadcast"),
    Case("add.Tensor", lambda x: x + 2.5, (X,), "scalar"),
    Case("add.Tensor", lambda x: x + 3, (i64(3, 4),), "int_scalar", check="exact"),
    Case("add.Tensor", torch.add, (i32(3, 4), i64(3, 4)), "promote", check="exact"),
    Case("add.Tensor", torch.add, (X, f64(3, 4)), "promote_float"),
    Case("add.Tensor", lambda x: x * 0.5 + 1, (i64(3, 4),), "int_times_float"),
    Case("add.Tensor", lambda x, y: torch.add(x, y, alpha=2), (X, Y), "alpha", decompose=True),
    Case("add.Scalar", lambda x: torch.ops.aten.add.Scalar(x, 1.5), (X,)),
    Case("add_.Tensor", lambda x, y: x.clone().add_(y), (X, Y)),
    Case("sub.Tensor", torch.sub, (X, Y)),
    Case("rsub.Scalar", lambda x: 1.0 - x, (X,), "operator"),
    Case("softsign.default", torch.abs, (X,), retarget="abs.default", reference=F.softsign),
    Case("sub.Scalar", lambda x: torch.ops.aten.sub.Scalar(x, 1.5), (X,)),
    Case("rsub.Scalar", lambda x: torch.rsub(x, 2.0), (X,)),
    Case("rsub.Tensor", lambda x, y: torch.rsub(x, y), (X, Y)),
    Case("mul.Tensor", torch.mul, (X, Y)),
    Case("mul.Tensor", lambda x: x * 3, (i32(3, 4),), "int", check="exact"),
    Case("mul.Tensor", lambda x, y: x * y, (boolean(3, 4), boolean(3, 4)), "bool", check="exact"),
    Case("mul.Scalar", lambda x: torch.ops.aten.mul.Scalar(x, 1.5), (X,)),
    Case("mul_.Tensor", lambda x, y: x.clone().mul_(y), (X, Y)),
    Case("div.Tensor", torch.div, (X, pos(3, 4))),
    Case("div.Tensor", lambda x: x / 4, (X,), "scalar"),
    Case("div.Tensor", torch.div, (i64(3, 4), i64(3, 4, low=1, high=5)), "int_true_div"),
    Case("div.Scalar", lambda x: torch.ops.aten.div.Scalar(x, 4.0), (X,)),
    Case("div.Tensor_mode", lambda x, y: torch.div(x, y, rounding_mode="floor"), (X, pos(3, 4))),
    Case(
        "div.Tensor_mode",
        lambda x, y: torch.div(x, y, rounding_mode="trunc"),
        (X, pos(3, 4)),
        "trunc",
    ),
    Case("div.Tensor_mode", lambda x: torch.div(x, 2, rounding_mode="floor"), (X,), "scalar"),
    Case("floor_divide.default", torch.floor_divide, (X, pos(3, 4))),
    Case(
        "floor_divide.default",
        torch.floor_divide,
        (i64(3, 4), i64(3, 4, low=1, high=4)),
        "int",
        check="exact",
    ),
    Case("remainder.Tensor", torch.remainder, (X, pos(3, 4))),
    Case(
        "remainder.Tensor",
        torch.remainder,
        (i64(3, 4), i64(3, 4, low=1, high=4)),
        "int",
        check="exact",
    ),
    Case("remainder.Scalar", lambda x: torch.remainder(x, 1.5), (X,)),
    Case("fmod.Tensor", torch.fmod, (X, pos(3, 4))),
    Case("fmod.Scalar", lambda x: torch.fmod(x, 1.5), (X,)),
    Case("pow.Tensor_Tensor", torch.pow, (pos(3, 4), X)),
    Case("pow.Tensor_Scalar", lambda x: torch.pow(x, 3), (X,)),
    Case("pow.Tensor_Scalar", lambda x: torch.pow(x, 0.5), (pos(3, 4),), "sqrt"),
    Case("pow.Tensor_Scalar", lambda x: torch.pow(x, 3), (i64(3, 4),), "int", check="exact"),
    Case("pow.Tensor_Scalar", lambda x: torch.pow(x, 0), (i64(3, 4),), "int0", check="exact"),
    Case("pow.Scalar", lambda x: torch.pow(2.0, x), (X,)),
    Case("atan2.default", torch.atan2, (X, Y)),
    Case("logaddexp.default", torch.logaddexp, (X, Y)),
    Case("maximum.default", torch.maximum, (X, Y)),
    Case("minimum.default", torch.minimum, (X, Y)),
    Case("maximum.default", torch.maximum, (i64(3, 4), i64(3, 4)), "int", check="exact"),
    Case("max.other", lambda x, y: torch.max(x, y), (X, Y)),
    Case("min.other", lambda x, y: torch.min(x, y), (X, Y)),
    Case("outer.default", torch.outer, (f32(3), f32(4))),
]

# ---------------------------------------------------------------- compare, logic, bits

CASES += [
    Case(f"{name}.Tensor", getattr(torch, name), (X, Y), check="exact")
    for name in ("eq", "ne", "ge", "gt", "le", "lt")
]
CASES += [
    Case(f"{name}.Scalar", lambda x, n=name: getattr(torch, n)(x, 0.5), (X,), check="exact")
    for name in ("eq", "ne", "ge", "gt", "le", "lt")
]
CASES += [
    Case(
        "eq.Tensor",
        torch.eq,
        (i64(3, 4, low=0, high=3), i64(3, 4, low=0, high=3)),
        "int",
        check="exact",
    ),
    Case("gt.Scalar", lambda x: x > 0.5, (i64(3, 4),), "int_vs_float", check="exact"),
    Case("logical_and.default", torch.logical_and, (boolean(3, 4), boolean(3, 4)), check="exact"),
    Case(
        "logical_and.default",
        torch.logical_and,
        (X, i64(3, 4, low=0, high=2)),
        "cast",
        check="exact",
    ),
    Case("logical_or.default", torch.logical_or, (boolean(3, 4), boolean(3, 4)), check="exact"),
    Case("logical_xor.default", torch.logical_xor, (boolean(3, 4), boolean(3, 4)), check="exact"),
    Case("bitwise_and.Tensor", torch.bitwise_and, (i64(3, 4), i64(3, 4)), check="exact"),
    Case("bitwise_and.Scalar", lambda x: torch.bitwise_and(x, 6), (i64(3, 4),), check="exact"),
    Case("bitwise_or.Tensor", torch.bitwise_or, (i32(3, 4), i32(3, 4)), check="exact"),
    Case("bitwise_or.Scalar", lambda x: torch.bitwise_or(x, 6), (i64(3, 4),), check="exact"),
    Case("bitwise_xor.Tensor", torch.bitwise_xor, (u8(3, 4), u8(3, 4)), check="exact"),
    Case("bitwise_xor.Scalar", lambda x: torch.bitwise_xor(x, 5), (i64(3, 4),), check="exact"),
    Case(
        "bitwise_or_.Tensor",
        lambda x, y: x.clone().bitwise_or_(y),
        (i64(3, 4), i64(3, 4)),
        check="exact",
    ),
    Case("bitwise_or_.Scalar", lambda x: x.clone().bitwise_or_(3), (i64(3, 4),), check="exact"),
    Case("__and__.Tensor", lambda x, y: x & y, (boolean(3, 4), boolean(3, 4)), check="exact"),
    Case("__or__.Tensor", lambda x, y: x | y, (boolean(3, 4), boolean(3, 4)), check="exact"),
    Case("__xor__.Tensor", lambda x, y: x ^ y, (boolean(3, 4), boolean(3, 4)), check="exact"),
    Case(
        "__and__.Scalar", lambda x: torch.ops.aten.__and__.Scalar(x, 6), (i64(3, 4),), check="exact"
    ),
    Case(
        "__or__.Scalar", lambda x: torch.ops.aten.__or__.Scalar(x, 6), (i64(3, 4),), check="exact"
    ),
    Case(
        "__xor__.Scalar", lambda x: torch.ops.aten.__xor__.Scalar(x, 6), (i64(3, 4),), check="exact"
    ),
]
