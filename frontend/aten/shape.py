"""Shape and view operators: reshape/view/flatten, permute/transpose, squeeze/unsqueeze,
expand, concatenation and splitting, repeat/tile, flip/roll, slicing and selection."""

from __future__ import annotations

import sys
from typing import Any

import torch
from torch import fx

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.frontend.context import Converting
from tvmlite.frontend.registry import converts

# ---------------------------------------------------------------- reshape


def _static(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, tir.IntImm) and value.dtype != "bool":
        return value.value
    return None


def reshape_steps(conv: Converting, x: relax.Expr, dims: list[Any]) -> list[list[Any]]:
    """The reshapes giving `dims` PyTorch's meaning. Relax reads a literal 0 in a target
    shape as "copy this input dim"; PyTorch as a real zero. A 0 over an input dim that
    is not 0 is written -1 (which infers 0 for an empty input), one per reshape, so
    several such zeros take several steps. Most targets are one step, unchanged."""
    target = [_static(d) for d in dims]
    if 0 not in target or -1 in target:
        return [dims]
    shape = conv.shape(x)
    if shape is None:
        return [dims]
    shape = list(shape)
    current = [_static(d) for d in shape]
    if 0 not in current:
        return [dims]
    steps: list[list[Any]] = []
    while True:
        unusable = [
            i for i, t in enumerate(target) if t == 0 and not (i < len(current) and current[i] == 0)
        ]
        if not unusable:
            return steps or [dims]
        rewritten = unusable[0]
        step: list[Any] = []
        resulting: list[Any] = []
        for i, t in enumerate(target):
            if i == rewritten:
                step.append(-1)
                resulting.append(0)
            elif t != 0:
                step.append(dims[i])
                resulting.append(t)
            elif i < len(current) and current[i] == 0:
                step.append(0)
                resulting.append(0)
            else:
                step.append(shape[i] if i < len(shape) else 1)
                resulting.append(current[i] if i < len(current) else 1)
        steps.append(step)
        shape = [0 if i == rewritten else step[i] for i in range(len(step))]
        current = resulting


def torch_reshape(conv: Converting, x: relax.Expr, dims: Any) -> relax.Expr:
    for step in reshape_steps(conv, x, list(dims)):
        x = conv.emit_call("reshape", x, step)
    return x


def _dims(args: Any) -> Any:
    return args[1] if isinstance(args[1], (torch.Size, tuple, list)) else args[1:]


@converts("view.default", "reshape.default")
def reshape(conv: Converting, node: fx.Node) -> relax.Expr:
    args = conv.args(node)
    x = args[0]
    dims = _dims(args)
    shape = conv.shape(x)
    if shape is not None and _same_dims(list(shape), list(dims)):
        return x
    return torch_reshape(conv, x, dims)


def _same_dims(a: list[Any], b: list[Any]) -> bool:
    """TVM compares the shape with the target by `==` of TIR dims with Python values:
    equal constants, and symbolic dims only when they are the very same object."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        xs, ys = _static(x), _static(y)
        if xs is not None or ys is not None:
            if xs != ys:
                return False
        elif x is not y:
            return False
    return True


@converts("reshape_as.default")
def reshape_as(conv: Converting, node: fx.Node) -> relax.Expr:
    x, other = conv.args(node)[:2]
    return torch_reshape(conv, x, conv.shape(other))


@converts("as_strided.default")
def as_strided(conv: Converting, node: fx.Node) -> relax.Expr:
    args = conv.args(node)
    x, size, stride = args[0], args[1], args[2]
    offset = args[3] if len(args) > 3 else node.kwargs.get("storage_offset", 0)
    if offset:
        raise conv.error(node, "as_strided with a storage offset is not supported")
    sizes = [_static(d) for d in size]
    strides = [_static(s) for s in stride]
    if None not in sizes and None not in strides:
        expected, running = [], 1
        for dim in reversed(sizes):
            expected.insert(0, running)
            running *= dim
        for dim, got, want in zip(sizes, strides, expected, strict=True):
            if dim != 1 and got != want:
                raise conv.error(
                    node, f"as_strided with non-contiguous strides {stride} for size {size}"
                )
    return torch_reshape(conv, x, size)


@converts("flatten.using_ints")
def flatten(conv: Converting, node: fx.Node) -> relax.Expr:
    x = conv.env[node.args[0]]
    start = node.args[1] if len(node.args) >= 2 else node.kwargs.get("start_dim", 0)
    end = node.args[2] if len(node.args) == 3 else node.kwargs.get("end_dim", -1)
    shape = conv.shape(x)
    rank = len(shape)
    bound = max(rank, 1)
    start_n = start + bound if start < 0 else start
    end_n = end + bound if end < 0 else end
    for name, dim, norm in (("start_dim", start, start_n), ("end_dim", end, end_n)):
        if not 0 <= norm < bound:
            raise conv.error(node, f"flatten {name} {dim} is out of range [-{bound}, {bound - 1}]")
    if start_n > end_n:
        raise conv.error(node, "flatten start_dim comes after end_dim")
    if rank == 0:
        return conv.emit_call("reshape", x, [1])
    merged = shape[start_n]
    for i in range(start_n + 1, end_n + 1):
        merged = _tir_mul(merged, shape[i])
    new_shape = [*shape[:start_n], merged, *shape[end_n + 1 :]]
    return torch_reshape(conv, x, new_shape)


def _tir_mul(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """TVM's `a * b` on dims: folded when both are constants."""
    if isinstance(a, tir.IntImm) and isinstance(b, tir.IntImm):
        return tir.IntImm(a.dtype, a.value * b.value)
    return tir.BinaryOp("mul", a, b, "int64")


@converts("unflatten.int")
def unflatten(conv: Converting, node: fx.Node) -> relax.Expr:
    x = conv.args(node)[0]
    dim, sizes = node.args[1], node.args[2]
    shape = list(conv.shape(x))
    if dim < 0:
        dim += len(shape)
    return torch_reshape(conv, x, [*shape[:dim], *sizes, *shape[dim + 1 :]])


# ---------------------------------------------------------------- axes


@converts("permute.default")
def permute(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    return conv.emit_call("permute_dims", args[0], _dims(args))


@converts("transpose.int")
def transpose(conv: Converting, node: fx.Node) -> relax.Var:
    x, a, b = conv.args(node)[:3]
    axes = list(range(conv.ndim(x)))
    axes[a], axes[b] = axes[b], axes[a]
    return conv.emit_call("permute_dims", x, axes)


@converts("squeeze.default", "squeeze.dim", "squeeze.dims")
def squeeze(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim = conv.arg(node, 1, "dim")
    if dim is None:
        dim = node.kwargs.get("dims")
    if isinstance(dim, (list, tuple)) and dim:
        rank = conv.ndim(x)
        kept = [d for d in dim if (d if d >= 0 else rank + d) < rank]
        dim = kept or None
    return conv.emit_call("squeeze", x, dim)


@converts("unsqueeze.default")
def unsqueeze(conv: Converting, node: fx.Node) -> relax.Var:
    return conv.emit_call("expand_dims", conv.env[node.args[0]], node.args[1])


@converts("expand.default")
def expand(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    x = args[0]
    sizes = args[1:] if len(args) > 2 else args[1]
    in_shape = conv.shape(x)
    offset = len(sizes) - len(in_shape)
    target = []
    for i, size in enumerate(sizes):
        if isinstance(size, int) and size == -1:
            if i - offset < 0:
                raise conv.error(node, f"expand cannot take -1 for the new leading dim {i}")
            target.append(in_shape[i - offset])
        else:
            target.append(size)
    return conv.emit_call("broadcast_to", x, target)


@converts("expand_as.default")
def expand_as(conv: Converting, node: fx.Node) -> relax.Var:
    x, other = conv.args(node)[:2]
    return conv.emit_call("broadcast_to", x, conv.shape(other))


@converts("broadcast_to.default")
def broadcast_to(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    return conv.emit_call("broadcast_to", args[0], args[1] if len(args) > 1 else args[0])


# ---------------------------------------------------------------- join and split


@converts("cat.default", "concat.default")
def cat(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    axis = args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    return conv.emit_call("concat", tuple(args[0]), axis=axis)


@converts("stack.default")
def stack(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    axis = args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    return conv.emit_call("stack", tuple(args[0]), axis=axis)


@converts("split.Tensor", "split_with_sizes.default")
def split(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    size = node.args[1]
    dim = conv.arg(node, 2, "dim", 0)
    if isinstance(size, (list, tuple)):
        cuts: list[int] = []
        for s in size[:-1]:
            cuts.append(s + (cuts[-1] if cuts else 0))
    else:
        extent = conv.static_dim(x, dim)
        chunks = (extent + size - 1) // size
        cuts = [size * i for i in range(1, chunks)]
    return conv.emit_call("split", x, cuts, dim)


@converts("chunk.default")
def chunk(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    chunks = node.args[1]
    dim = conv.arg(node, 2, "dim", 0)
    sections = min(chunks, conv.static_dim(x, dim))
    return conv.emit_call("split", x, sections, dim)


@converts("unbind.int")
def unbind(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim = conv.arg(node, 1, "dim", 0)
    count = conv.static_dim(x, dim)
    parts = []
    if count == 1:
        parts.append(conv.emit_call("squeeze", x, axis=dim))
    else:
        pieces = conv.emit_call("split", x, count, dim)
        for i in range(count):
            parts.append(conv.emit_call("squeeze", relax.TupleGetItem(pieces, i), axis=dim))
    return conv.emit(relax.Tuple(tuple(parts)))


@converts("meshgrid.indexing", "meshgrid.default")
def meshgrid(conv: Converting, node: fx.Node) -> Any:
    args = conv.args(node)
    indexing = args[1] if len(node.args) > 1 else node.kwargs.get("indexing", "ij")
    tensors = args[0]
    if len(tensors) == 1:
        return tensors
    inputs = []
    for i, t in enumerate(tensors):
        if conv.ndim(t) == 1:
            inputs.append(t)
        elif conv.ndim(t) == 0:
            inputs.append(conv.call("reshape", t, (1,)))
        else:
            raise conv.error(node, f"meshgrid input {i} must be 0-d or 1-d")
    return conv.emit_call("meshgrid", tuple(inputs), indexing=indexing)


# ---------------------------------------------------------------- repeat, flip, roll


@converts("repeat.default", "tile.default")
def tile(conv: Converting, node: fx.Node) -> relax.Var:
    args = conv.args(node)
    return conv.emit_call("tile", args[0], _dims(args))


@converts("flip.default")
def flip(conv: Converting, node: fx.Node) -> relax.Expr:
    x = conv.env[node.args[0]]
    dims = conv.arg(node, 1, "dims")
    if isinstance(dims, int):
        dims = [dims]
    elif not isinstance(dims, (list, tuple)):
        raise conv.error(node, f"flip takes an int or a list of ints, got {dims!r}")
    for d in dims:
        x = conv.emit_call("flip", x, d)
    return x


@converts("roll.default")
def roll(conv: Converting, node: fx.Node) -> relax.Expr:
    args = conv.args(node)
    x = args[0]
    shifts = args[1] if len(node.args) > 1 else node.kwargs.get("shifts")
    dims = args[2] if len(node.args) > 2 else node.kwargs.get("dims")
    shape = conv.shape(x)

    def roll_one(t: relax.Expr, shift: int, dim: int) -> relax.Expr:
        size = conv.static_dim(t, dim)
        amount = shift % size
        if amount == 0:
            return t
        cut = size - amount
        head = conv.emit_call("strided_slice", t, [dim], [0], [cut], [1])
        tail = conv.emit_call("strided_slice", t, [dim], [cut], [size], [1])
        return conv.emit_call("concat", (tail, head), axis=dim)

    if dims is None:
        flat = conv.emit_call("reshape", x, (-1,))
        shift = shifts[0] if isinstance(shifts, (list, tuple)) else shifts
        rolled = roll_one(flat, int(shift), 0)
        return conv.emit_call("reshape", rolled, shape)
    shifts = [int(s) for s in shifts] if isinstance(shifts, (list, tuple)) else [int(shifts)]
    dims = [int(d) for d in dims] if isinstance(dims, (list, tuple)) else [int(dims)]
    if len(shifts) != len(dims):
        raise conv.error(node, "roll: shifts and dims must have the same length")
    for shift, dim in zip(shifts, dims, strict=True):
        x = roll_one(x, shift, dim + len(shape) if dim < 0 else dim)
    return x


# ---------------------------------------------------------------- slicing


@converts("narrow.default")
def narrow(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim, start, length = node.args[1], node.args[2], node.args[3]
    # TVM slices [start, length), not [start, start + length); PyTorch's is kept
    end = length if start == 0 else _add_size(start, length)
    return conv.emit_call("strided_slice", x, [dim], [start], [end])


def _add_size(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return tir.BinaryOp("add", sa.to_index(a), sa.to_index(b), "int64")


@converts("select.int")
def select(conv: Converting, node: fx.Node) -> relax.Var:
    x = conv.env[node.args[0]]
    dim, index = node.args[1], node.args[2]
    if isinstance(index, int) and index < 0:
        # counted from the end, as in PyTorch (TVM 0.27 takes the negative index)
        index += conv.static_dim(x, dim)
    return conv.emit_call("take", x, conv.const(index, "int64"), dim)


@converts("slice.Tensor")
def slice_(conv: Converting, node: fx.Node) -> relax.Expr:
    x = conv.env[node.args[0]]
    dim = node.args[1] if len(node.args) > 1 else 0
    start = conv.retrieve(node.args[2]) if len(node.args) > 2 else None
    end = conv.retrieve(node.args[3]) if len(node.args) > 3 else None
    step = conv.retrieve(node.args[4]) if len(node.args) > 4 else 1
    start = 0 if start is None else start
    end = sys.maxsize if end is None else end
    if start == 0 and step == 1:
        if isinstance(end, int) and end >= sys.maxsize:
            return x  # the whole dim: torch.export writes these for dynamic shapes
        shape = conv.shape(x)
        if isinstance(end, tir.PrimExpr) and shape is not None:
            if sa.same(end, shape[dim if dim >= 0 else len(shape) + dim]):
                return x
    return conv.emit_call("strided_slice", x, [dim], [start], [end], [step])
