"""Tensor creation (arange, full/zeros/ones/empty and their `_like`/`new_` forms, eye,
linspace, hamming_window, scalar_tensor, randn), dtype conversion (`_to_copy`, `to`,
`type_as`), copies, and the operators that are the identity for inference (clone,
contiguous, detach, dropout, alias...)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import fx

from tvmlite.dsl import relax, tir
from tvmlite.frontend.context import Converting, convert_dtype
from tvmlite.frontend.registry import converts, register


def default_dtype() -> str:
    return convert_dtype(torch.get_default_dtype())


def fill_value(conv: Converting, value: Any, dtype: str) -> relax.Expr:
    """A fill value as a 0-d tensor of `dtype`: a Python number as a constant, a size
    computed from symbolic dims through a shape (it is only known when run)."""
    if isinstance(value, tir.PrimExpr):
        index = value if value.dtype == "int64" else tir.Cast("int64", value)
        tensor = conv.emit_call("shape_to_tensor", relax.ShapeExpr((index,)))
        if dtype != "int64":
            tensor = conv.emit_call("astype", tensor, dtype)
        return conv.emit_call("squeeze", tensor, axis=[0])
    if isinstance(value, relax.Expr):
        return value
    return conv.const(value, dtype)


def _size(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (list, tuple, torch.Size)) else (value,)


def _kw_dtype(conv: Converting, node: fx.Node) -> str:
    dtype = node.kwargs.get("dtype")
    return default_dtype() if dtype is None else convert_dtype(dtype)


# ---------------------------------------------------------------- creation


@converts("arange.default", "arange.start", "arange.start_step")
def arange(conv: Converting, node: fx.Node) -> relax.Var:
    bounds: list[Any] = [node.kwargs.get(k) for k in ("start", "end", "step")]
    if len(node.args) == 1:
        bounds[1] = node.args[0]
    elif len(node.args) >= 2:
        bounds[: len(node.args)] = node.args[:3]
    bounds[0] = 0 if bounds[0] is None else bounds[0]
    bounds[2] = 1 if bounds[2] is None else bounds[2]
    if "dtype" in node.kwargs and node.kwargs["dtype"] is not None:
        dtype = convert_dtype(node.kwargs["dtype"])
    elif any(isinstance(b, float) for b in bounds):
        dtype = default_dtype()
    else:
        dtype = "int64"
    start, end, step = conv.retrieve(bounds)
    return conv.emit_call("arange", start, end, step, dtype=dtype)


@converts("zeros.default")
def zeros(conv: Converting, node: fx.Node) -> relax.Var:
    size = _size(conv.args(node)[0])
    return conv.emit_call("zeros", size, _kw_dtype(conv, node))


@converts("empty.default", "empty.memory_format", "empty_permuted.default")
def empty(conv: Converting, node: fx.Node) -> relax.Var:
    # uninitialized memory in PyTorch: zeros here
    return conv.emit_call("zeros", _size(conv.args(node)[0]), _kw_dtype(conv, node))


@converts("ones.default")
def ones(conv: Converting, node: fx.Node) -> relax.Var:
    size = _size(conv.args(node)[0])
    dtype = _kw_dtype(conv, node)
    return conv.emit_call("full", size, conv.const(1, dtype), dtype)


@converts("full.default")
def full(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    size = _size(args[0])
    dtype_arg = node.kwargs.get("dtype")
    if dtype_arg is None:
        dtype = conv.torch_dtype(node)
        if dtype is None:
            if isinstance(args[1], bool):
                dtype = "bool"
            elif isinstance(args[1], int):
                dtype = "int64"
            elif isinstance(args[1], tir.PrimExpr):
                dtype = args[1].dtype
            else:
                dtype = default_dtype()
    else:
        dtype = convert_dtype(dtype_arg)
    return conv.emit_call("full", size, fill_value(conv, args[1], dtype), dtype)


@converts("full_like.default")
def full_like(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    x, value = args[0], args[1]
    x_dtype = conv.dtype(x)
    requested = node.kwargs.get("dtype")
    dtype = x_dtype if requested is None else convert_dtype(requested)
    fill_dtype = dtype if dtype != x_dtype else None
    non_finite = isinstance(value, (int, float)) and (math.isinf(value) or math.isnan(value))
    if fill_dtype is None and non_finite and "float" not in x_dtype:
        fill_dtype = dtype = "float32"
    return conv.emit_call("full_like", x, fill_value(conv, value, dtype), dtype=fill_dtype)


@converts("fill.Scalar")
def fill(conv: Converting, node: fx.Node) -> relax.Var:
    x, value = conv.args(node)[:2]
    dtype = conv.dtype(x)
    return conv.emit_call("full", conv.shape(x), fill_value(conv, value, dtype), dtype)


@converts("fill_.Scalar")
def fill_(conv: Converting, node: fx.Node) -> relax.Var:
    filled = fill(conv, node)
    conv.env[node.args[0]] = filled
    return filled


@dataclass(frozen=True)
class NewFull:
    """`x.new_ones(size)` / `x.new_zeros(size)`: x's dtype."""

    value: int

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        args = conv.args(node)
        size = args[1] if isinstance(args[1], (list, tuple)) else args[1:]
        dtype = conv.dtype(args[0])
        return conv.emit_call("full", tuple(size), conv.const(self.value, dtype), dtype)


register("new_ones.default", NewFull(1))
register("new_zeros.default", NewFull(0))


@converts("ones_like.default")
def ones_like(conv: Converting, node: fx.Node) -> relax.Var:
    return conv.emit_call("ones_like", conv.env[node.args[0]])


@converts("zeros_like.default", "empty_like.default", "exponential.default")
def zeros_like(conv: Converting, node: fx.Node) -> relax.Var:
    # exponential (random) is written as zeros by TVM
    return conv.emit_call("zeros_like", conv.env[node.args[0]])


@converts("zero_.default")
def zero_(conv: Converting, node: fx.Node) -> relax.Var:
    output = conv.emit_call("zeros_like", conv.env[node.args[0]])
    conv.env[node.args[0]] = output
    return output


@converts("eye.default", "eye.m")
def eye(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    n = args[0]
    m = args[1] if len(args) > 1 else n
    return conv.emit_call("eye", n, m, dtype=_kw_dtype(conv, node))


@converts("linspace.default")
def linspace(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    start, stop, steps = args[0], args[1], args[2]
    if steps != 1:
        step = (stop - start) / (steps - 1)
        stop = stop + step / 2
    else:
        step = steps
        stop = start + steps
    dtype = default_dtype() if len(args) <= 3 or args[3] is None else convert_dtype(args[3])
    if node.kwargs.get("dtype") is not None:
        dtype = convert_dtype(node.kwargs["dtype"])
    return conv.emit_call("arange", start, stop, step, dtype=dtype)


@converts(
    "hamming_window.default",
    "hamming_window.periodic",
    "hamming_window.periodic_alpha",
    "hamming_window.periodic_alpha_beta",
)
def hamming_window(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    size = args[0]
    periodic = args[1] if len(args) > 1 else True
    alpha = args[2] if len(args) > 2 else 0.54
    beta = args[3] if len(args) > 3 else 0.46
    dtype = convert_dtype(node.kwargs.get("dtype") or "float")
    return conv.emit_call("hamming_window", size, periodic, alpha, beta, dtype)


@converts("scalar_tensor.default")
def scalar_tensor(conv: Converting, node: fx.Node) -> relax.Var:
    value = conv.args(node)[0]
    return conv.emit(conv.const(value, _kw_dtype(conv, node)))


@converts("randn.default")
def randn(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    size = _size(args[0])
    dtype = _kw_dtype(conv, node)
    return conv.emit(conv.const(np.random.randn(*size), dtype))


@converts("randn_like.default")
def randn_like(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    requested = node.kwargs.get("dtype")
    dtype = conv.dtype(x) if requested is None else convert_dtype(requested)
    return conv.emit(conv.const(np.random.randn(*conv.static_shape(x)), dtype))


# ---------------------------------------------------------------- dtype and copies


@converts("_to_copy.default", "lift_fresh_copy.default", "to.dtype", "to.dtype_layout")
def to_dtype(conv: Converting, node: fx.Node) -> relax.Expr:
    x = conv.env[node.args[0]]
    if len(node.args) == 2 and isinstance(node.args[1], torch.dtype):
        return conv.emit_call("astype", x, convert_dtype(node.args[1]))
    if len(node.args) != 2 and node.kwargs.get("dtype") is not None:
        return conv.emit_call("astype", x, convert_dtype(node.kwargs["dtype"]))
    return x


@converts("type_as.default")
def type_as(conv: Converting, node: fx.Node) -> relax.Var:
    x, other = conv.env[node.args[0]], conv.env[node.args[1]]
    return conv.emit_call("astype", x, conv.dtype(other))


@converts("copy_.default", "copy.default")
def copy_(conv: Converting, node: fx.Node) -> relax.Expr:
    dest = conv.env[node.args[0]]
    src = conv.env[node.args[1]]
    if conv.dtype(src) != conv.dtype(dest):
        src = conv.emit_call("astype", src, conv.dtype(dest))
    # broadcast to the destination's shape even when it is the source's: TVM compares
    # the two shape objects, which are never the same one
    src = conv.emit_call("broadcast_to", src, conv.shape(dest))
    conv.env[node.args[0]] = src
    return src


@converts(
    "alias.default",
    "clone.default",
    "contiguous.default",
    "detach.default",
    "detach_.default",
    "dropout.default",
    "dropout_.default",
    "native_dropout.default",
    "bernoulli.p",
    "_assert_tensor_metadata.default",
    "to_sparse.default",
)
def identity(conv: Converting, node: fx.Node) -> Any:
    """Operators that change nothing an inference program computes."""
    return conv.env[node.args[0]]
