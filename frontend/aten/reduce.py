"""Reductions, scans and search: sum/mean/prod/std/var/any/median, max with indices,
argmax/argmin, cumsum/cumprod, topk, sort/argsort, bucketize."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from torch import fx

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.frontend.context import Converting, convert_dtype
from tvmlite.frontend.registry import converts, register


def _dim_keepdim(conv: Converting, node: fx.Node) -> tuple[Any, Any]:
    args = conv.args(node)
    dim = args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    keepdim = args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    return dim, keepdim


@converts("mean.dim", "mean.default")
def mean(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim, keepdim = _dim_keepdim(conv, node)
    dtype = node.kwargs.get("dtype")
    if dtype is not None:
        x = conv.emit_call("astype", x, convert_dtype(dtype))
    return conv.emit_call("mean", x, dim, keepdims=keepdim)


@converts("sum.default", "sum.dim_IntList")
def sum_(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim, keepdim = _dim_keepdim(conv, node)
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dim = None
    dtype = node.kwargs.get("dtype")
    if dtype is not None:
        x = conv.emit_call("astype", x, convert_dtype(dtype))
    else:
        # PyTorch sums bools and integers in int64
        in_dtype = conv.dtype(x)
        if in_dtype == "bool" or (dt.is_integer_like(in_dtype) and in_dtype != "int64"):
            x = conv.emit_call("astype", x, "int64")
    return conv.emit_call("sum", x, dim, keepdims=keepdim)


@converts("prod.default")
def prod(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim, keepdim = _dim_keepdim(conv, node)
    return conv.emit_call("prod", x, dim, keepdims=keepdim)


@dataclass(frozen=True)
class Spread:
    """`var.correction` / `std.correction`: the population statistic, scaled by
    n / (n - correction) (its square root for std; TVM 0.27 leaves std unscaled).
    The correction defaults to 1 (Bessel's), as in PyTorch."""

    op: str

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        x = conv.env[node.args[0]]
        dim = conv.value(node, 1, "dim")
        keepdim = node.kwargs.get("keepdim", False)
        correction = node.kwargs.get("correction")
        correction = 1 if correction is None else correction
        result = conv.emit_call(self.op, x, dim, keepdims=keepdim)
        if correction == 0:
            return result
        count = _reduced_size(conv, x, dim)
        if count is None:
            raise conv.error(node, "var/std with a correction needs static reduced dims")
        scale = float("nan") if count - correction <= 0 else count / (count - correction)
        if self.op == "std":
            scale = math.sqrt(scale) if scale == scale else scale
        return conv.emit_call("multiply", result, conv.const(scale, conv.dtype(x)))


register("var.correction", Spread("variance"))
register("std.correction", Spread("std"))


def _reduced_size(conv: Converting, x: relax.Expr, dim: Any) -> int | None:
    shape = conv.shape(x)
    if shape is None:
        return None
    rank = len(shape)
    if dim is None:
        axes = list(range(rank))
    elif isinstance(dim, int):
        axes = [dim]
    elif isinstance(dim, (list, tuple)) and all(isinstance(a, int) for a in dim):
        axes = list(dim)
    else:
        return None
    count = 1
    for axis in axes:
        size = shape[axis + rank if axis < 0 else axis]
        if not isinstance(size, tir.IntImm):
            return None
        count *= size.value
    return count


@converts("any.dim", "any.dims")
def any_(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim, keepdim = _dim_keepdim(conv, node)
    if conv.dtype(x) != "bool":
        # nonzero is true; TVM 0.27 takes the max of the values (a number, and wrong
        # for negatives)
        x = conv.emit_call("astype", x, "bool")
    # the max of the bools, in int8 and cast back
    reduced = conv.call("max", conv.call("astype", x, "int8"), dim, keepdims=keepdim)
    return conv.emit(conv.call("astype", reduced, "bool"))


@converts("median.dim", "median.default")
def median(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim, keepdim = _dim_keepdim(conv, node)
    return conv.emit_call("median", x, dim, keepdims=keepdim)


@converts("max.dim")
def max_dim(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim = node.args[1]
    keepdim = conv.arg(node, 2, "keepdim", False)
    both = conv.emit_call("topk", x, k=1, axis=dim, largest=True, ret_type="both", dtype="int64")
    values: relax.Expr = relax.TupleGetItem(both, 0)
    indices: relax.Expr = relax.TupleGetItem(both, 1)
    if not keepdim:
        values = conv.emit_call("squeeze", values, axis=[dim])
        indices = conv.emit_call("squeeze", indices, axis=[dim])
    return conv.emit(relax.Tuple((values, indices)))


@dataclass(frozen=True)
class ArgExtreme:
    op: str

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        x = conv.env[node.args[0]]
        dim = conv.arg(node, 1, "dim")
        keepdim = conv.arg(node, 2, "keepdim", False)
        return conv.emit_call(self.op, x, dim, keepdim)


register("argmax.default", ArgExtreme("argmax"))
register("argmin.default", ArgExtreme("argmin"))


@dataclass(frozen=True)
class Scan:
    op: str

    def __call__(self, conv: Converting, node: fx.Node) -> relax.Var:
        x = conv.env[node.args[0]]
        dim = conv.arg(node, 1, "dim")
        dtype = node.kwargs.get("dtype")
        if "out" in node.kwargs:
            raise conv.error(node, "an out= tensor is not supported")
        return conv.emit_call(self.op, x, dim, convert_dtype(dtype) if dtype else None)


register("cumsum.default", Scan("cumsum"))
register("cumprod.default", Scan("cumprod"))


@converts("topk.default")
def topk(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    x = args[0]
    k = args[1] if len(args) > 1 else node.kwargs.get("k", 1)
    dim = args[2] if len(args) > 2 else node.kwargs.get("dim", -1)
    largest = args[3] if len(args) > 3 else node.kwargs.get("largest", True)
    ordered = args[4] if len(args) > 4 else node.kwargs.get("sorted", True)
    if not ordered:
        raise conv.error(node, "topk supports sorted output only")
    return conv.emit_call("topk", x, k=k, axis=dim, largest=largest, ret_type="both", dtype="int64")


@converts("sort.default")
def sort(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim = conv.arg(node, 1, "dim", -1)
    descending = conv.arg(node, 2, "descending", False)
    indices = conv.emit_call("argsort", x, dim, descending, dtype="int64")
    values = conv.emit_call("gather_elements", x, indices, axis=dim)
    return conv.emit(relax.Tuple((values, indices)))


@converts("argsort.default")
def argsort(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim = conv.arg(node, 1, "dim", -1)
    descending = conv.arg(node, 2, "descending", False)
    return conv.emit_call("argsort", x, dim, descending, dtype="int64")


@converts("bucketize.Tensor")
def bucketize(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    right = node.kwargs.get("right", False)
    out_int32 = node.kwargs.get("out_int32", False)
    return conv.emit_call("bucketize", args[0], args[1], out_int32, right)
