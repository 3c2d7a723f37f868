"""Graph plumbing: tuple indexing (`getitem`), scalars read from tensors (`item`),
symbolic sizes (`sym_size`), runtime assertions, and `torch.cond` as a Relax `If`
over branch functions."""

from __future__ import annotations

from typing import Any

from torch import fx

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.frontend.context import Converting
from tvmlite.frontend.registry import converts


@converts("getitem")
def getitem(conv: Converting, node: fx.Node) -> Any:
    x = conv.env[node.args[0]]
    index = node.args[1]
    if isinstance(x, (list, tuple)):
        return x[index]
    if isinstance(x, relax.Tuple):
        return x.fields[index]
    if isinstance(x, relax.ShapeExpr):
        return x.values[index]
    if isinstance(x, relax.Var):
        sinfo = x.struct_info
        if isinstance(sinfo, relax.TupleStructInfo):
            return conv.emit(relax.TupleGetItem(x, index))
        if isinstance(sinfo, relax.TensorStructInfo):
            if isinstance(index, int):
                return x  # TVM's convention: a tensor stands for its own first result
            return _tensor_index(conv, node, x, index)
    if isinstance(x, relax.Constant):
        return conv.const(x.data[index], str(x.data.dtype))
    raise conv.error(node, f"cannot index a {type(x).__name__}")


def _tensor_index(conv: Converting, node: fx.Node, x: relax.Var, index: Any) -> relax.Var:
    """`x[...]` with slices, ints, None and one index tensor."""
    indices = index if isinstance(index, (list, tuple)) else [index]
    shape = conv.shape(x)
    take: list[tuple[relax.Expr, int]] = []
    axes, begins, ends, strides, new_axes = [], [], [], [], []
    counted = sum(1 for i in indices if isinstance(i, (int, slice, fx.Node)))
    i = 0
    for item in indices:
        if isinstance(item, int):
            axes.append(i), begins.append(item), ends.append(item + 1), strides.append(1)
            i += 1
        elif isinstance(item, slice):
            axes.append(i)
            begins.append(0 if item.start is None else item.start)
            ends.append(shape[i] if item.stop is None else item.stop)
            strides.append(1 if item.step is None else item.step)
            i += 1
        elif item is None:
            new_axes.append(len(axes) + len(new_axes))
        elif item is Ellipsis:
            for _ in range(len(shape) - counted):
                axes.append(i), begins.append(0), ends.append(shape[i]), strides.append(1)
                i += 1
        elif isinstance(item, fx.Node):
            take.append((conv.env[item], i))
            i += 1
        else:
            raise conv.error(node, f"unsupported index {item!r}")
    while i < len(shape):
        axes.append(i), begins.append(0), ends.append(shape[i]), strides.append(1)
        i += 1
    if len(take) > 1:
        raise conv.error(node, "indexing with more than one index tensor is not supported")
    taken: relax.Expr = x
    for idx, axis in take:
        taken = conv.emit_call("take", taken, idx, axis)
    sliced = conv.emit_call("strided_slice", taken, axes, begins, ends, strides)
    out_shape = list(conv.shape(sliced))
    for axis in new_axes:
        out_shape.insert(axis, 1)
    return conv.emit_call("reshape", sliced, out_shape)


@converts("item.default", "_local_scalar_dense.default")
def item(conv: Converting, node: fx.Node) -> Any:
    x = conv.env[node.args[0]]
    shape = conv.shape(x)
    dtype = conv.dtype(x)
    single = shape is not None and all(sa.as_int(d) == 1 for d in shape)
    if single and (dtype.startswith("int") or dtype.startswith("uint")):
        # an integer read from data: a new symbolic size, bound through a shape
        scalar = x if dtype == "int64" else conv.emit_call("astype", x, "int64")
        scalar = conv.emit_call("reshape", scalar, [1])
        as_shape = conv.emit_call("tensor_to_shape", scalar)
        dim = tir.Var(f"{node.name}_dim", "int64")
        conv.bb.match_cast(as_shape, relax.ShapeStructInfo((dim,), 1))
        return dim
    if shape is not None and len(shape) == 0:
        return x
    return conv.emit_call("take", x, conv.const(0, "int64"), axis=0)


@converts("sym_size.int")
def sym_size(conv: Converting, node: fx.Node) -> Any:
    x = conv.env[node.args[0]]
    shape = conv.shape(x)
    dim = conv.arg(node, 1, "dim", 0)
    if shape is None:
        return conv.emit(conv.const(0, "int64"))
    size = shape[dim]
    if isinstance(size, tir.IntImm):
        return conv.emit(conv.const(size.value, "int32"))
    return size


@converts("sym_constrain_range_for_size.default", "_assert_scalar.default")
def passthrough(conv: Converting, node: fx.Node) -> Any:
    """Range facts and checks on sizes torch.export already recorded."""
    return conv.env.get(node.args[0], node.args[0])


@converts("_assert_async.default", "_assert_async.msg")
def assert_async(conv: Converting, node: fx.Node) -> relax.Var:
    cond = conv.env[node.args[0]]
    if conv.dtype(cond) != "bool":
        cond = conv.emit_call("astype", cond, "bool")
    if conv.ndim(cond) != 0:
        cond = conv.emit_call("reshape", cond, [])
    message = conv.arg(node, 1, "assert_msg", "Assertion Failed")
    return conv.emit_call("assert_op", cond, [relax.StringImm(message)], format="{}")


@converts("cond")
def cond(conv: Converting, node: fx.Node) -> relax.Var:
    from tvmlite.frontend.branches import import_cond

    return import_cond(conv, node)
