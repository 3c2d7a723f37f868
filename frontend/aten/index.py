"""Indexing: gather/scatter, advanced indexing (`index.Tensor`, `index_put`), take,
index_select, embedding, masked fill/select, where, slice_scatter, one_hot."""

from __future__ import annotations

import math
from typing import Any

from torch import fx

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.frontend.aten.create import fill_value
from tvmlite.frontend.context import Converting
from tvmlite.frontend.registry import converts


@converts("gather.default")
def gather(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim = conv.arg(node, 1, "dim", 0)
    index = conv.env[node.args[2]]
    return conv.emit_call("gather_elements", x, index, axis=dim)


@converts("scatter.src")
def scatter(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    if len(node.args) == 1:
        dim = node.kwargs["dim"]
        index = conv.env[node.kwargs["index"]]
        src = conv.env[node.kwargs["src"]]
    elif len(node.args) == 4:
        dim, index, src = node.args[1], conv.env[node.args[2]], conv.env[node.args[3]]
    else:
        raise conv.error(node, f"unexpected arguments {node.args}")
    return conv.emit_call("scatter_elements", x, index, src, axis=dim)


@converts("scatter.value")
def scatter_value(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim = node.args[1]
    index = conv.env[node.args[2]]
    value = conv.const(node.args[3], conv.dtype(x))
    src = conv.emit_call("broadcast_to", value, conv.shape(index))
    return conv.emit_call("scatter_elements", x, index, src, axis=dim)


@converts("index_select.default")
def index_select(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    return conv.emit_call("take", x, conv.env[node.args[2]], node.args[1])


@converts("take.default")
def take(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    indices = conv.emit_call("astype", conv.env[node.args[1]], "int32")
    if conv.ndim(x) != 1:
        # torch.take indexes the flattened tensor (Relax's take without an axis
        # takes a 1-d one; TVM 0.27 passes the tensor as it is)
        x = conv.emit_call("reshape", x, (-1,))
    return conv.emit_call("take", x, indices)


def embedding(conv: Converting, weight: relax.Expr, indices: relax.Expr) -> relax.Var:
    """Rows of `weight` at `indices` (int32), flattened and reshaped back for n-d."""
    indices = conv.emit_call("astype", indices, "int32")
    if conv.ndim(indices) == 1:
        return conv.emit_call("take", weight, indices, axis=0)
    shape = conv.shape(indices)
    width = conv.shape(weight)[-1]
    flat = conv.emit_call("reshape", indices, [-1])
    rows = conv.emit_call("take", weight, flat, axis=0)
    return conv.emit_call("reshape", rows, [*shape, width])


@converts("embedding.default")
def embedding_op(conv: Converting, node: fx.Node) -> relax.Var:
    return embedding(conv, conv.env[node.args[0]], conv.env[node.args[1]])


def full_indices(conv: Converting, data: relax.Expr, indices: list[Any]) -> list[relax.Expr]:
    """One index tensor per axis of `data` for PyTorch's advanced indexing with slices
    (None): the result has the index tensors' broadcast dims where the first index
    tensor is (or first, when slices separate them) and each sliced axis in order.
    A sliced axis gets 0..n-1 shaped to broadcast into its place."""
    ndim = conv.ndim(data)
    indices = list(indices) + [None] * (ndim - len(indices))
    given = [axis for axis, idx in enumerate(indices) if idx is not None]
    width = max(conv.ndim(indices[axis]) for axis in given)
    adjacent = given == list(range(given[0], given[-1] + 1))
    start = given[0] if adjacent else 0  # where the broadcast index dims go
    sliced = [axis for axis, idx in enumerate(indices) if idx is None]
    total = len(sliced) + width
    slot = {}
    for k, axis in enumerate(sliced):
        slot[axis] = k if k < start else k + width
    shape = conv.shape(data)
    out: list[relax.Expr] = []
    for axis, idx in enumerate(indices):
        if idx is None:
            extent = shape[axis]
            values = conv.emit_call("arange", _prim(0), relax.PrimValue(extent), _prim(1), "int64")
            place = [1] * total
            place[slot[axis]] = extent
            out.append(conv.emit_call("reshape", values, place))
            continue
        trailing = total - (start + width)
        if trailing:
            idx = conv.emit_call("reshape", idx, [*conv.shape(idx), *([1] * trailing)])
        out.append(idx)
    return out


@converts("index.Tensor")
def index_tensor(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    data, indices = args[0], list(args[1])
    given = [(axis, idx) for axis, idx in enumerate(indices) if idx is not None]
    if len(given) == 1:
        axis, idx = given[0]
        return conv.emit_call("take", data, idx, axis=axis)
    if len(given) == len(indices):
        return conv.emit_call("index_tensor", data, tuple(idx for _, idx in given))
    # slices among the index tensors: TVM 0.27 takes them one after the other, which
    # is PyTorch's result only when the index tensors are orthogonal
    return conv.emit_call("index_tensor", data, tuple(full_indices(conv, data, indices)))


@converts("index_put.default", "index_put_.default")
def index_put(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    tensor = args[0]
    indices = args[1] if len(args) > 1 else node.kwargs.get("indices")
    values = args[2] if len(args) > 2 else node.kwargs.get("values")
    accumulate = args[3] if len(args) > 3 else node.kwargs.get("accumulate", False)
    if indices is None or values is None:
        raise conv.error(node, "index_put needs indices and values")
    if not isinstance(accumulate, bool):
        raise conv.error(node, f"accumulate must be a bool, got {type(accumulate).__name__}")
    if all(idx is not None for idx in indices) and len(indices) == conv.ndim(tensor):
        index_tuple = relax.Tuple(tuple(indices))
    else:
        # sliced or trailing axes (TVM 0.27 handles only leading slices)
        index_tuple = relax.Tuple(tuple(full_indices(conv, tensor, list(indices))))
    output = conv.emit_call("index_put", tensor, index_tuple, values, accumulate)
    if node.target.__name__.startswith("index_put_"):
        _rebind(conv, tensor, output)
    return output


def _rebind(conv: Converting, old: relax.Expr, new: relax.Expr) -> None:
    """An in-place op: every node that held `old` now holds `new`."""
    for key, value in list(conv.env.items()):
        if value is old:
            conv.env[key] = new


@converts("where.self")
def where(conv: Converting, node: fx.Node) -> relax.Var:
    cond, x, y = (conv.env[a] for a in node.args[:3])
    return conv.emit_call("where", cond, x, y)


def _masked_fill(conv: Converting, node: fx.Node) -> relax.Var:
    x, mask, value = conv.args(node)[:3]
    x_dtype = conv.dtype(x)
    fill_dtype = None
    if isinstance(value, (int, float)) and (math.isinf(value) or math.isnan(value)):
        if "float" not in x_dtype:
            fill_dtype = "float32"
    filled = fill_value(conv, value, fill_dtype or x_dtype)
    values = conv.emit_call("full_like", x, filled, dtype=fill_dtype)
    if fill_dtype is not None:
        x = conv.emit_call("astype", x, fill_dtype)
    return conv.emit_call("where", mask, values, x)


@converts("masked_fill.Scalar")
def masked_fill(conv: Converting, node: fx.Node) -> relax.Var:
    return _masked_fill(conv, node)


@converts("masked_fill_.Scalar")
def masked_fill_(conv: Converting, node: fx.Node) -> relax.Var:
    output = _masked_fill(conv, node)
    conv.env[node.args[0]] = output
    return output


@converts("masked_select.default")
def masked_select(conv: Converting, node: fx.Node) -> relax.Var:
    data = conv.env[node.args[0]]
    mask = conv.env[node.args[1]]
    data_shape = conv.shape(data)
    mask_shape = conv.shape(mask)
    if not sa.same(tuple(data_shape), tuple(mask_shape)):
        mask = conv.emit_call("broadcast_to", mask, data_shape)
    flat = conv.emit_call("reshape", data, [-1])
    flat_mask = conv.emit_call("reshape", mask, [-1])
    where_true = conv.emit_call("nonzero", flat_mask)
    meta = node.meta.get("tensor_meta")
    if meta is not None and len(meta.shape) == 1:
        count = meta.shape[0]
        count = (
            tir.IntImm("int64", count) if isinstance(count, int) else tir.Var(str(count), "int64")
        )
    else:
        count = tir.Var(f"{node.name}_num_selected", "int64")
    sinfo = relax.TensorStructInfo((tir.IntImm("int64", 1), count), "int64", 2)
    cast = conv.bb.match_cast(where_true, sinfo)
    positions = conv.emit_call("squeeze", cast, axis=[0])
    return conv.emit_call("take", flat, positions, axis=0)


@converts("slice_scatter.default")
def slice_scatter(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    tensor, src = args[0], args[1]
    dim = args[2] if len(args) > 2 else node.kwargs.get("dim", 0)
    shape = conv.shape(tensor)
    axis = dim if dim >= 0 else dim + len(shape)
    start = args[3] if len(args) > 3 else node.kwargs.get("start", 0)
    end = args[4] if len(args) > 4 else node.kwargs.get("end", shape[axis])
    step = args[5] if len(args) > 5 else node.kwargs.get("step", 1)

    def bound(value: Any, default: Any) -> relax.Expr:
        # PyTorch writes "to the end" as 2**63 - 1 and counts negatives from the end
        if value is None:
            value = default
        known = value.value if isinstance(value, tir.IntImm) else value
        if isinstance(known, int):
            if known >= 9223372036854775807:
                return relax.PrimValue(shape[axis])
            if known < 0:
                return relax.PrimValue(
                    tir.BinaryOp("add", shape[axis], tir.IntImm("int64", known), "int64")
                    if not isinstance(shape[axis], tir.IntImm)
                    else tir.IntImm("int64", shape[axis].value + known)
                )
            if isinstance(shape[axis], tir.IntImm) and known > shape[axis].value:
                return relax.PrimValue(shape[axis])
        if isinstance(value, tir.PrimExpr):
            return relax.PrimValue(value)
        return relax.PrimValue(tir.IntImm("int64", value))

    step_value = step if isinstance(step, tir.PrimExpr) else tir.IntImm("int64", step)
    return conv.emit_call(
        "slice_scatter",
        tensor,
        src,
        bound(start, 0),
        bound(end, shape[axis]),
        relax.PrimValue(step_value),
        axis=dim,
    )


@converts("one_hot.default")
def one_hot(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    classes = conv.arg(node, 1, "num_classes")
    if classes is None:
        raise conv.error(node, "one_hot needs num_classes")
    if isinstance(classes, int) and classes <= 0:
        raise conv.error(
            node,
            f"one_hot num_classes must be positive, got {classes} (inferring it from the "
            "data, num_classes=-1, is not supported: the size would depend on the values)",
        )
    on = conv.arg(node, 2, "on_value", 1)
    off = conv.arg(node, 3, "off_value", 0)
    axis = conv.arg(node, 4, "axis", -1)
    # int64 values (the result is int64, as PyTorch's). TVM prints them as bare
    # numbers, which read back as int32: its text of this call is lossy
    return conv.emit_call("one_hot", x, _prim(on), _prim(off), classes, axis)


def _prim(value: Any) -> relax.PrimValue:
    """`relax.prim_value(v)`: ints int64, floats float64, bools bool."""
    if isinstance(value, bool):
        return relax.PrimValue(tir.IntImm("bool", int(value)))
    if isinstance(value, int):
        return relax.PrimValue(tir.IntImm("int64", value))
    return relax.PrimValue(tir.FloatImm("float64", float(value)))
