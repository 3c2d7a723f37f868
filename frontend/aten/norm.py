"""Normalizations (batch, layer, group, instance), attention, and the loss TVM maps
(`cross_entropy_loss` as log-softmax plus NLL)."""

from __future__ import annotations

from typing import Any

import numpy as np
from torch import fx

from tvmlite.dsl import relax
from tvmlite.frontend.context import Converting
from tvmlite.frontend.registry import converts

# ---------------------------------------------------------------- batch norm


def _channel_const(conv: Converting, fill: float, channels: int, dtype: str) -> relax.Constant:
    return conv.const(np.full(channels, fill), dtype)


def _batch_norm(conv: Converting, node: fx.Node) -> relax.Var:
    """`nn.batch_norm` as a tuple (output, new mean, new var); absent weight, bias or
    statistics are ones and zeros. The momentum/eps positions depend on the overload."""
    x = conv.env[node.args[0]]
    channels = int(conv.static_dim(x, 1))
    dtype = conv.dtype(x)
    has_scale = node.args[1] is not None
    has_center = node.args[2] is not None
    gamma = conv.env.get(node.args[1]) or _channel_const(conv, 1.0, channels, dtype)
    beta = conv.env.get(node.args[2]) or _channel_const(conv, 0.0, channels, dtype)
    mean = conv.env.get(node.args[3]) or _channel_const(conv, 0.0, channels, dtype)
    var = conv.env.get(node.args[4]) or _channel_const(conv, 1.0, channels, dtype)
    name = node.target.__name__
    if name.startswith("_native_batch_norm_legit_no_training"):
        momentum = conv.arg(node, 5, "momentum", 0.1)
        eps = conv.arg(node, 6, "eps", 1e-05)
        training = False
    elif name.startswith("_native_batch_norm_legit_functional"):
        momentum = conv.arg(node, 6, "momentum", 0.1)
        eps = conv.arg(node, 7, "eps", 1e-05)
        training = True
    else:
        # aten.batch_norm(input, weight, bias, mean, var, training, momentum, eps, ...):
        # TVM 0.27 reads training as momentum and always normalizes with batch statistics
        training = bool(conv.arg(node, 5, "training", False))
        momentum = conv.arg(node, 6, "momentum", 0.1)
        eps = conv.arg(node, 7, "eps", 1e-05)
    return conv.emit_call(
        "nn.batch_norm",
        x,
        gamma,
        beta,
        mean,
        var,
        axis=1,
        epsilon=eps,
        scale=has_scale,
        center=has_center,
        momentum=momentum,
        training=training,
    )


@converts("_native_batch_norm_legit_no_training.default", "batch_norm.default")
def batch_norm_inference(conv: Converting, node: fx.Node) -> relax.Var:
    return conv.emit(relax.TupleGetItem(_batch_norm(conv, node), 0))


@converts("_native_batch_norm_legit_functional.default")
def batch_norm_training(conv: Converting, node: fx.Node) -> relax.Var:
    result = _batch_norm(conv, node)
    x = conv.env[node.args[0]]
    channels = int(conv.static_dim(x, 1))
    output = conv.emit(relax.TupleGetItem(result, 0))
    new_mean = conv.emit(relax.TupleGetItem(result, 1))
    reserve = conv.emit_call("zeros", (channels,), conv.dtype(x))
    return conv.emit(relax.Tuple((output, new_mean, reserve, reserve, reserve)))


@converts("_native_batch_norm_legit.no_stats")
def batch_norm_no_stats(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    channels = int(conv.static_dim(x, 1))
    dtype = conv.dtype(x)
    gamma = conv.env.get(node.args[1]) or _channel_const(conv, 1.0, channels, dtype)
    beta = conv.env.get(node.args[2]) or _channel_const(conv, 0.0, channels, dtype)
    eps = conv.arg(node, 5, "eps", 1e-05)
    axes = [0, *range(2, conv.ndim(x))]
    return conv.emit_call(
        "nn.instance_norm", x, gamma, beta, channel_axis=1, axes=axes, epsilon=eps
    )


# ---------------------------------------------------------------- other norms


def layer_norm(
    conv: Converting, x: relax.Expr, gamma: Any, beta: Any, eps: float, normalized: Any
) -> relax.Var:
    shape = tuple(normalized)
    axes = list(range(-len(shape), 0))
    dtype = conv.dtype(x)
    if gamma is None:
        gamma = conv.const(np.ones([int(s) for s in shape]), dtype)
    if beta is None:
        beta = conv.const(np.zeros([int(s) for s in shape]), dtype)
    return conv.emit_call("nn.layer_norm", x, gamma, beta, axes=axes, epsilon=eps)


@converts("layer_norm.default")
def layer_norm_op(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    gamma = conv.env.get(node.args[2]) if len(node.args) > 2 else None
    beta = conv.env.get(node.args[3]) if len(node.args) > 3 else None
    eps = node.args[4] if len(node.args) > 4 else 1e-05
    return layer_norm(conv, x, gamma, beta, eps, node.args[1])


@converts("native_layer_norm.default")
def native_layer_norm(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    gamma = conv.env.get(node.args[2]) if len(node.args) > 2 else None
    beta = conv.env.get(node.args[3]) if len(node.args) > 3 else None
    eps = node.args[4] if len(node.args) > 4 else 1e-05
    return layer_norm(conv, x, gamma, beta, eps, node.args[1])


@converts("group_norm.default")
def group_norm(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    gamma = conv.env.get(node.args[2]) if len(node.args) > 2 else None
    beta = conv.env.get(node.args[3]) if len(node.args) > 3 else None
    eps = node.args[4] if len(node.args) > 4 else 1e-05
    return _group_norm(conv, x, gamma, beta, node.args[1], eps)


@converts("native_group_norm.default")
def native_group_norm(conv: Converting, node: fx.Node) -> relax.Var:
    # (input, weight, bias, N, C, HxW, group, eps)
    x = conv.env[node.args[0]]
    gamma = conv.env.get(node.args[1]) if len(node.args) > 1 else None
    beta = conv.env.get(node.args[2]) if len(node.args) > 2 else None
    groups = node.args[6] if len(node.args) > 6 else 1
    eps = node.args[7] if len(node.args) > 7 else 1e-05
    return _group_norm(conv, x, gamma, beta, groups, eps)


def _group_norm(
    conv: Converting, x: relax.Expr, gamma: Any, beta: Any, groups: int, eps: float
) -> relax.Var:
    axes = list(range(2, conv.ndim(x)))
    return conv.emit_call(
        "nn.group_norm",
        x,
        gamma,
        beta,
        num_groups=groups,
        channel_axis=1,
        axes=axes,
        epsilon=eps,
    )


@converts("instance_norm.default")
def instance_norm(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    channels = int(conv.static_dim(x, 1))
    dtype = conv.dtype(x)
    gamma = conv.env.get(node.args[1]) or _channel_const(conv, 1.0, channels, dtype)
    beta = conv.env.get(node.args[2]) or _channel_const(conv, 0.0, channels, dtype)
    eps = node.args[7] if len(node.args) > 7 and node.args[7] else 1e-05
    axes = list(range(2, conv.ndim(x)))
    return conv.emit_call(
        "nn.instance_norm", x, gamma, beta, channel_axis=1, axes=axes, epsilon=eps
    )


# ---------------------------------------------------------------- attention


@converts("scaled_dot_product_attention.default")
def scaled_dot_product_attention(conv: Converting, node: fx.Node) -> relax.Var:
    q, k, v = (conv.env[a] for a in node.args[:3])
    ndim = conv.ndim(q)
    if ndim == 2:
        # (seq, dim) -> (1, 1, seq, dim)
        q, k, v = (conv.emit_call("expand_dims", t, axis=0) for t in (q, k, v))
        q, k, v = (conv.emit_call("expand_dims", t, axis=1) for t in (q, k, v))
    elif ndim == 4:
        # PyTorch's (batch, heads, seq, dim) is Relax's (batch, seq, heads, dim) permuted
        q, k, v = (conv.emit_call("permute_dims", t, [0, 2, 1, 3]) for t in (q, k, v))
    else:
        raise conv.error(node, f"attention takes 2-d or 4-d inputs, got {ndim}-d")
    mask = conv.arg(node, 3, "attn_mask")
    dropout = conv.arg(node, 4, "dropout_p", 0.0)
    if dropout != 0.0:
        raise conv.error(node, "attention dropout is not supported (export in eval mode)")
    causal = conv.arg(node, 5, "is_causal", False)
    scale = node.kwargs.get("scale")
    if mask is not None:
        mask = conv.env[mask]
        if conv.dtype(mask) == "bool":
            raise conv.error(node, "only a float attention mask is supported, got a bool mask")
    attrs: dict[str, Any] = {"causal_mask": "TopLeft" if causal else None}
    if scale is not None:
        attrs["scale"] = scale
    out = conv.emit_call("nn.attention", q, k, v, mask, **attrs)
    if ndim == 2:
        return conv.emit_call("squeeze", out, axis=[0, 1])
    return conv.emit_call("permute_dims", out, [0, 2, 1, 3])


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}  # ATen's Reduction enum


@converts("cross_entropy_loss.default")
def cross_entropy(conv: Converting, node: fx.Node) -> relax.Var:
    # (self, target, weight, reduction, ignore_index, label_smoothing): positional, the
    # reduction as ATen's enum (TVM 0.27 reads keywords only)
    preds = conv.env[node.args[0]]
    targets = conv.env[node.args[1]]
    weight = conv.env.get(node.args[2]) if len(node.args) > 2 else None
    reduction = conv.arg(node, 3, "reduction", 1)
    reduction = _REDUCTIONS.get(reduction, reduction)
    ignore_index = conv.arg(node, 4, "ignore_index", -100)
    if conv.arg(node, 5, "label_smoothing", 0.0):
        raise conv.error(node, "cross_entropy with label_smoothing is not supported")
    log_probs = conv.call("nn.log_softmax", preds)
    return conv.emit_call("nn.nll_loss", log_probs, targets, weight, reduction, ignore_index)
