"""Elementwise operators of one tensor: math functions and activations.

Each converter writes what TVM 0.27's translator writes for the operator, including
the decompositions it chooses (`celu`, `hardswish`, `log2` as a division by ln 2,
`round` with decimals as a scaled round)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from torch import fx

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.frontend.context import Converting
from tvmlite.frontend.registry import converts, register


@dataclass(frozen=True)
class Unary:
    """`op(x)` for the node's first argument."""

    op: str

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        return conv.emit_call(self.op, conv.env[node.args[0]])


_UNARY = {
    "abs": "abs",
    "acos": "acos",
    "acosh": "acosh",
    "asin": "asin",
    "asinh": "asinh",
    "atan": "atan",
    "atanh": "atanh",
    "bitwise_not": "bitwise_not",
    "ceil": "ceil",
    "cos": "cos",
    "cosh": "cosh",
    "erf": "erf",
    "exp": "exp",
    "floor": "floor",
    "isfinite": "isfinite",
    "isinf": "isinf",
    "isnan": "isnan",
    "log": "log",
    "neg": "negative",
    "relu": "nn.relu",
    "relu_": "nn.relu",
    "relu6": "nn.relu6",
    "relu6_": "nn.relu6",
    "selu": "nn.selu",
    "sigmoid": "sigmoid",
    "sign": "sign",
    "silu": "nn.silu",
    "silu_": "nn.silu",
    "sin": "sin",
    "sinh": "sinh",
    "square": "square",
    "tan": "tan",
    "tanh": "tanh",
    "trunc": "trunc",
    "max": "max",
    "min": "min",
}
for _name, _op in _UNARY.items():
    register(f"{_name}.default", Unary(_op))


@converts("celu.default")
def celu(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    alpha = conv.arg(node, 1, "alpha", 1.0)
    dtype = conv.dtype(x)
    alpha_c = conv.const(alpha, dtype)
    zero = conv.const(0, dtype)
    # alpha * min(0, exp(x / alpha) - 1) + relu(x). TVM 0.27 writes exp(x) / alpha,
    # which is the same for alpha 1 (its text is kept there) and wrong otherwise.
    if alpha == 1:
        scaled_exp = conv.call("divide", conv.call("exp", x), alpha_c)
    else:
        scaled_exp = conv.call("exp", conv.call("divide", x, alpha_c))
    inner = conv.call("subtract", scaled_exp, conv.const(1, dtype))
    scaled = conv.call("multiply", alpha_c, conv.call("minimum", zero, inner))
    return conv.emit(conv.call("add", scaled, conv.call("nn.relu", x)))


@converts("elu.default")
def elu(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    alpha = conv.arg(node, 1, "alpha", 1.0)
    dtype = conv.dtype(x)
    neg_alpha = conv.const(-alpha, dtype)
    # -alpha * relu(1 - exp(x)) + relu(x)
    left = conv.call(
        "multiply",
        neg_alpha,
        conv.call("nn.relu", conv.call("subtract", conv.const(1, dtype), conv.call("exp", x))),
    )
    return conv.emit(conv.call("add", left, conv.call("nn.relu", x)))


@converts("clamp.default", "clamp.Tensor")
def clamp(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    x = args[0]
    low = args[1] if len(args) > 1 else node.kwargs.get("min", -math.inf)
    high = args[2] if len(args) > 2 else node.kwargs.get("max", math.inf)
    return _clip(conv, x, low, high)


@converts("clamp_min.default")
def clamp_min(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    low = args[1] if len(args) > 1 else node.kwargs.get("min", -math.inf)
    return _clip(conv, args[0], low, math.inf)


@converts("clamp_max.default")
def clamp_max(conv: Converting, node: fx.Node) -> relax.Var:
    # TVM 0.27 reads the bound at position 2 (clamp's) and so never clamps; the
    # bound is at position 1
    args = conv.args(node)
    high = args[1] if len(args) > 1 else node.kwargs.get("max", math.inf)
    return _clip(conv, args[0], -math.inf, high)


def _clip(conv: Converting, x: relax.Expr, low: Any, high: Any) -> relax.Var:
    """`clip` with scalar bounds; a tensor bound is applied first as maximum/minimum."""
    low = -math.inf if low is None else low
    high = math.inf if high is None else high
    if not isinstance(low, (int, float)):
        bound = conv.emit_call("broadcast_to", low, conv.shape(x))
        x = conv.emit_call("maximum", x, bound)
        low = -math.inf
    if not isinstance(high, (int, float)):
        bound = conv.emit_call("broadcast_to", high, conv.shape(x))
        x = conv.emit_call("minimum", x, bound)
        high = math.inf
    return conv.emit_call("clip", x, low, high)


@converts("gelu.default")
def gelu(conv: Converting, node: fx.Node) -> relax.Var:
    approximate = node.kwargs.get("approximate", "none")
    x = conv.env[node.args[0]]
    if approximate == "none":
        return conv.emit_call("nn.gelu", x)
    if approximate == "tanh":
        return conv.emit_call("nn.gelu_tanh", x)
    raise conv.error(node, f"unknown gelu approximation {approximate!r}")


@converts("hardsigmoid.default")
def hardsigmoid(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.args(node)[0]
    dtype = conv.dtype(x)
    shifted = conv.call("clip", conv.call("add", x, conv.const(3, dtype)), 0, 6)
    return conv.emit(conv.call("divide", shifted, conv.const(6, dtype)))


@converts("hardswish.default", "hardswish_.default")
def hardswish(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.args(node)[0]
    dtype = conv.dtype(x)
    shifted = conv.call("clip", conv.call("add", x, conv.const(3, dtype)), 0, 6)
    gate = conv.call("divide", shifted, conv.const(6, dtype))
    return conv.emit(conv.call("multiply", x, gate))


@converts("hardtanh.default", "hardtanh_.default")
def hardtanh(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.args(node)[0]
    low = conv.arg(node, 1, "min_val", -1.0)
    high = conv.arg(node, 2, "max_val", 1.0)
    return conv.emit_call("clip", x, low, high)


@converts("leaky_relu.default", "leaky_relu_.default")
def leaky_relu(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    return conv.emit_call("nn.leakyrelu", x, conv.arg(node, 1, "negative_slope", 0.01))


@converts("log_softmax.int", "_log_softmax.default")
def log_softmax(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    return conv.emit_call("nn.log_softmax", x, conv.arg(node, 1, "dim", -1))


@converts("softmax.int", "_softmax.default")
def softmax(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    return conv.emit_call("nn.softmax", x, conv.arg(node, 1, "dim", -1))


@converts("log2.default")
def log2(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    ln2 = conv.const(0.6931471805599453, conv.dtype(x))
    return conv.emit(conv.call("divide", conv.call("log", x), ln2))


@converts("log10.default")
def log10(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    ln10 = conv.const(2.302585092994046, conv.dtype(x))
    return conv.emit(conv.call("divide", conv.call("log", x), ln10))


@converts("log1p.default")
def log1p(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    return conv.emit(conv.call("log", conv.call("add", x, conv.const(1, conv.dtype(x)))))


@converts("expm1.default")
def expm1(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    return conv.emit(conv.call("subtract", conv.call("exp", x), conv.const(1.0, conv.dtype(x))))


@converts("reciprocal.default")
def reciprocal(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    return conv.emit_call("divide", conv.const(1.0, conv.dtype(x)), x)


@dataclass(frozen=True)
class FloatUnary:
    """`op(x)`, an integer input cast to float32 first (sqrt, rsqrt)."""

    op: str

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        x = conv.env[node.args[0]]
        if dt.is_int(conv.dtype(x)) or dt.is_uint(conv.dtype(x)):
            x = conv.emit_call("astype", x, "float32")
        return conv.emit_call(self.op, x)


register("sqrt.default", FloatUnary("sqrt"))
register("rsqrt.default", FloatUnary("rsqrt"))


@dataclass(frozen=True)
class Logical:
    """A logical operator: non-bool operands are cast to bool first (torch treats
    nonzero as true; Relax's logical operators take bools)."""

    op: str
    arity: int

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        operands = []
        for arg in node.args[: self.arity]:
            x = conv.env[arg]
            if conv.dtype(x) != "bool":
                x = conv.emit_call("astype", x, "bool")
            operands.append(x)
        return conv.emit_call(self.op, *operands)


register("logical_not.default", Logical("logical_not", 1))
register("logical_and.default", Logical("logical_and", 2))
register("logical_or.default", Logical("logical_or", 2))
register("logical_xor.default", Logical("logical_xor", 2))


@converts("prelu.default")
def prelu(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    alpha = conv.env[node.args[1]]
    axis = 0 if conv.ndim(x) == 1 else 1
    channels = conv.shape(x)[axis]
    if conv.static_shape(alpha) == [1] and not (
        isinstance(channels, tir.IntImm) and channels.value == 1
    ):
        # one slope for every channel (nn.PReLU()'s default): PyTorch broadcasts it;
        # Relax's prelu reads one per channel (TVM 0.27 passes it as is)
        alpha = conv.emit_call("broadcast_to", alpha, (channels,))
    return conv.emit_call("nn.prelu", x, alpha, axis)


@converts("round.default", "round.decimals")
def round_(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    decimals = node.kwargs.get("decimals", 0)
    if decimals == 0:
        return conv.emit_call("round", x)
    # round(x * 10^d) / 10^d, in float32 for 16-bit floats whose range 10^d leaves
    in_dtype = conv.dtype(x)
    dtype = in_dtype
    if dtype in ("float16", "bfloat16"):
        dtype = "float32"
        x = conv.emit_call("astype", x, dtype)
    exponent = abs(decimals)
    largest = 308 if dtype == "float64" else 38
    scale = conv.const(math.inf if exponent > largest else 10.0**exponent, dtype)
    if decimals > 0:
        result = conv.call("divide", conv.call("round", conv.call("multiply", x, scale)), scale)
    else:
        result = conv.call("multiply", conv.call("round", conv.call("divide", x, scale)), scale)
    if in_dtype in ("float16", "bfloat16"):
        result = conv.call("astype", result, in_dtype)
    return conv.emit(result)


@converts("softplus.default")
def softplus(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    beta = conv.arg(node, 1, "beta", 1.0)
    threshold = conv.arg(node, 2, "threshold", 20.0)
    return conv.emit_call("nn.softplus", x, beta, threshold)


@converts("softsign.default")
def softsign(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    magnitude = conv.emit_call("abs", x)
    # TVM adds a float32 one whatever the input dtype
    denom = conv.emit_call("add", magnitude, conv.const(1.0, "float32"))
    return conv.emit_call("divide", x, denom)


@converts("softshrink.default")
def softshrink(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    x = args[0]
    dtype = conv.dtype(x)
    lambd = conv.const(args[1] if len(args) > 1 else 0.5, dtype)
    above = conv.call(
        "multiply",
        conv.call("subtract", x, lambd),
        conv.call("astype", conv.call("greater", x, lambd), dtype),
    )
    below = conv.call(
        "multiply",
        conv.call("add", x, lambd),
        conv.call("astype", conv.call("less", x, conv.call("negative", lambd)), dtype),
    )
    return conv.emit(conv.call("add", above, below))


@dataclass(frozen=True)
class Triangle:
    """`tril`/`triu` with the diagonal offset."""

    op: str

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        x = conv.env[node.args[0]]
        k = conv.arg(node, 1, "diagonal", 0)
        return conv.emit_call(self.op, x, k)


register("tril.default", Triangle("tril"))
register("triu.default", Triangle("triu"))


@converts("isin.Tensor_Tensor")
def isin(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    elements, tests = args[0], args[1]
    matches = conv.call(
        "equal", conv.call("expand_dims", elements, -1), conv.call("reshape", tests, (-1,))
    )
    # counted in int64: TVM 0.27 sums the bools and compares the bool sum with a
    # constant of the elements' dtype, which Relax refuses
    count = conv.call("sum", conv.call("astype", matches, "int64"), axis=-1)
    return conv.emit(conv.call("greater", count, conv.const(0, "int64")))
