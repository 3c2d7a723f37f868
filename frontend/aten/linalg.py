"""Linear algebra: addmm/baddbmm, linear, einsum, vector norms, diagonals, and the
sparse products (their sparse operand is made dense when the program is read)."""

from __future__ import annotations

from typing import Any

import torch
from torch import fx

from tvmlite.dsl import relax, tir
from tvmlite.frontend.context import Converting
from tvmlite.frontend.registry import converts


@converts("addmm.default")
def addmm(conv: Converting, node: fx.Node) -> relax.Expr:
    bias, mat1, mat2 = (conv.env[a] for a in node.args[:3])
    return _scaled_sum(conv, node, bias, conv.call("matmul", mat1, mat2, out_dtype="float32"))


@converts("baddbmm.default")
def baddbmm(conv: Converting, node: fx.Node) -> relax.Expr:
    bias, batch1, batch2 = (conv.env[a] for a in node.args[:3])
    return _scaled_sum(conv, node, bias, conv.call("matmul", batch1, batch2), product_first=True)


def _scaled_sum(
    conv: Converting,
    node: fx.Node,
    bias: relax.Expr,
    product: relax.Call,
    product_first: bool = False,
) -> relax.Expr:
    """beta * bias + alpha * product, skipping the terms and scales that are 0 or 1."""
    alpha = node.kwargs.get("alpha", 1)
    beta = node.kwargs.get("beta", 1)
    result = None
    if alpha != 0:
        result = conv.emit(product)
        if alpha != 1:
            result = conv.emit_call("multiply", result, conv.const(alpha, conv.dtype(result)))
    if beta != 0:
        scaled = bias
        if beta != 1:
            scaled = conv.emit_call("multiply", bias, conv.const(beta, conv.dtype(bias)))
        if result is None:
            result = scaled
        elif product_first:
            result = conv.emit_call("add", result, scaled)
        else:
            result = conv.emit_call("add", scaled, result)
    return result


@converts("linear.default")
def linear(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    x, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    product = conv.call("matmul", x, conv.call("permute_dims", weight), out_dtype="float32")
    if bias is not None:
        product = conv.call("add", product, bias)
    return conv.emit(product)


@converts("einsum.default")
def einsum(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    operands = args[1] if isinstance(args[1], (torch.Size, tuple, list)) else args[1:]
    return conv.emit_call("einsum", tuple(operands), args[0])


@converts("linalg_vector_norm.default")
def vector_norm(conv: Converting, node: fx.Node) -> relax.Var:
    data = conv.env[node.args[0]]
    dtype = conv.dtype(data)
    order = conv.arg(node, 1, "ord", 2)
    axis = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim")
    keepdims = node.args[3] if len(node.args) > 3 else node.kwargs.get("keepdim", False)
    magnitude = conv.call("abs", data)
    if order == float("inf"):
        return conv.emit(conv.call("max", magnitude, axis=axis, keepdims=keepdims))
    if order == float("-inf"):
        return conv.emit(conv.call("min", magnitude, axis=axis, keepdims=keepdims))
    if order == "fro":
        squares = conv.call("sum", conv.call("multiply", data, data), axis, keepdims)
        return conv.emit(conv.call("sqrt", squares))
    powered = conv.call("power", magnitude, conv.const(float(order), dtype))
    total = conv.call("sum", powered, axis=axis, keepdims=keepdims)
    return conv.emit(conv.call("power", total, conv.const(1.0 / order, dtype)))


@converts("diagonal.default")
def diagonal(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    x = args[0]
    offset = int(args[1] if len(args) > 1 else node.kwargs.get("offset", 0))
    dim1 = args[2] if len(args) > 2 else node.kwargs.get("dim1", 0)
    dim2 = args[3] if len(args) > 3 else node.kwargs.get("dim2", 1)
    shape = conv.shape(x)
    ndim = len(shape)
    dim1 = dim1 + ndim if dim1 < 0 else dim1
    dim2 = dim2 + ndim if dim2 < 0 else dim2
    if dim1 == dim2:
        raise conv.error(node, f"diagonal needs dim1 != dim2, got {dim1} twice")
    n, m = shape[dim1], shape[dim2]
    if offset == 0 and ndim - 2 <= 25 and _same_dim(n, m):
        return conv.emit_call("einsum", (x,), _diagonal_subscripts(ndim, dim1, dim2))
    # move the two axes last, crop both to the diagonal's length, contract them
    perm = [i for i in range(ndim) if i not in (dim1, dim2)] + [dim1, dim2]
    permuted = conv.emit_call("permute_dims", x, perm)
    if offset >= 0:
        length = _max(0, _min(n, _sub(m, offset)))
        begin1, end1, begin2, end2 = 0, length, offset, _add(offset, length)
    else:
        length = _max(0, _min(_add(n, offset), m))
        begin1, end1, begin2, end2 = -offset, _add(-offset, length), 0, length
    cropped = conv.emit_call("strided_slice", permuted, [ndim - 2], [begin1], [end1], [1])
    cropped = conv.emit_call("strided_slice", cropped, [ndim - 1], [begin2], [end2], [1])
    return conv.emit_call("einsum", (cropped,), "...zz->...z")


def _same_dim(a: tir.PrimExpr, b: tir.PrimExpr) -> bool:
    if isinstance(a, tir.IntImm) and isinstance(b, tir.IntImm):
        return a.value == b.value
    return a is b


def _int(e: Any) -> Any:
    return e.value if isinstance(e, tir.IntImm) else e


def _fold(kind: str, a: Any, b: Any) -> Any:
    """TVM's `tirx.min`/`max`/`+`/`-` on two dims: folded when both are known."""
    a, b = _int(a), _int(b)
    if isinstance(a, int) and isinstance(b, int):
        return {"min": min, "max": max, "add": int.__add__, "sub": int.__sub__}[kind](a, b)
    as_expr = [v if isinstance(v, tir.PrimExpr) else tir.IntImm("int64", v) for v in (a, b)]
    return tir.BinaryOp(kind, as_expr[0], as_expr[1], "int64")


def _min(a: Any, b: Any) -> Any:
    return _fold("min", a, b)


def _max(a: Any, b: Any) -> Any:
    return _fold("max", a, b)


def _add(a: Any, b: Any) -> Any:
    return _fold("add", a, b)


def _sub(a: Any, b: Any) -> Any:
    return _fold("sub", a, b)


def _diagonal_subscripts(ndim: int, dim1: int, dim2: int) -> str:
    """`ab...zz->ab...z`: the other axes keep their order, the diagonal comes last."""
    letters = iter("abcdefghijklmnopqrstuvwxy")
    labels = ["z" if i in (dim1, dim2) else next(letters) for i in range(ndim)]
    rest = "".join(label for i, label in enumerate(labels) if i not in (dim1, dim2))
    return f"{''.join(labels)}->{rest}z"


@converts("_sparse_mm.default")
def sparse_mm(conv: Converting, node: fx.Node) -> relax.Var:
    sparse, dense = conv.args(node)[:2]
    return conv.emit_call("matmul", sparse, dense, out_dtype="float32")


@converts("_sparse_addmm.default")
def sparse_addmm(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    bias, sparse, dense = args[0], args[1], args[2]
    alpha = node.kwargs.get("alpha", 1.0)
    beta = node.kwargs.get("beta", 1.0)
    result = conv.emit_call("matmul", sparse, dense, out_dtype="float32")
    if alpha != 1.0:
        result = conv.emit_call("multiply", result, conv.const(alpha, conv.dtype(result)))
    if beta == 0.0:
        return result
    if beta != 1.0:
        bias = conv.emit_call("multiply", bias, conv.const(beta, conv.dtype(bias)))
    return conv.emit_call("add", bias, result)
