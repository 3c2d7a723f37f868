"""Numerics cases: reductions and statistics, layout manipulation, indexing and
scatters, creation, sorting and scans, matmul/einsum/outer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from op_cases_common import Case, Inputs, as_, case, like

G = Inputs(2)

# ----------------------------------------------------------------- reductions


def _axes(spec: list[int] | None) -> tuple[int, ...] | None:
    return None if spec is None else tuple(spec)


def _red(fn: Callable[..., Any], axis: list[int] | None, keep: bool) -> Callable[..., Any]:
    return lambda v: fn(v, axis=_axes(axis), keepdims=keep)


def _median(axis: int | None, keep: bool):
    """TVM's median: the lower middle value; with an axis also its int64 index."""

    def ref(v: np.ndarray) -> Any:
        if axis is None:
            flat = np.sort(v.ravel())
            val = flat[(flat.size - 1) // 2]
            return np.full([1] * v.ndim if keep else [], val, v.dtype)
        order = np.argsort(v, axis=axis, kind="stable")
        mid = (v.shape[axis] - 1) // 2
        idx = np.take(order, [mid], axis=axis)
        val = np.take_along_axis(v, idx, axis=axis)
        if not keep:
            idx, val = idx.squeeze(axis), val.squeeze(axis)
        return val, idx.astype("int64")

    return ref


def _arg(fn: Callable[..., Any], axis: int | None, keep: bool):
    def ref(v: np.ndarray) -> np.ndarray:
        out = fn(v, axis=axis, keepdims=keep) if axis is not None else fn(v)
        if axis is None and keep:
            out = np.reshape(out, [1] * v.ndim)
        return np.asarray(out).astype("int64")

    return ref


def _collapse_to(shape: tuple[int, ...]):
    def ref(v: np.ndarray, *_: np.ndarray) -> np.ndarray:
        lead = v.ndim - len(shape)
        out = v.astype("float64").sum(axis=tuple(range(lead)))
        axes = tuple(i for i, d in enumerate(shape) if d == 1 and out.shape[i] != 1)
        return out.sum(axis=axes, keepdims=True).astype(v.dtype)

    return ref


def _reduce_cases() -> list[Case]:
    x, xd = G.uniform(2, 3, 4), G.uniform(3, 5, dtype="float64")
    pos = G.uniform(2, 3, 4, lo=0.5, hi=1.5)
    out = []
    for op, fn in (
        ("sum", np.sum),
        ("mean", np.mean),
        ("max", np.max),
        ("min", np.min),
        ("variance", np.var),
        ("std", np.std),
        ("prod", np.prod),
    ):
        data = pos if op == "prod" else x
        for axis, keep in ((None, False), ([1], False), ([0, 2], True), ([-1], False)):
            name = "all" if axis is None else "_".join(map(str, axis))
            expr = f"R.{op}(x, axis={axis}, keepdims={keep})"
            out.append(
                case(f"{op}-axis{name}{'-keep' * keep}", expr, data, like(_red(fn, axis, keep)))
            )
        out.append(case(f"{op}-float64", f"R.{op}(x, axis=[1])", xd, like(_red(fn, [1], False))))
        out.append(
            case(f"{op}-all-keep", f"R.{op}(x, keepdims=True)", data, like(_red(fn, None, True)))
        )
    for op, fn in (("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod)):
        small = G.ints(-3, 4, 2, 3, 4)
        out.append(
            case(f"{op}-int32", f"R.{op}(x, axis=[1])", small, as_("int32", _red(fn, [1], False)))
        )
        out.append(
            case(
                f"{op}-int64-all",
                f"R.{op}(x)",
                small.astype("int64"),
                as_("int64", _red(fn, None, False)),
            )
        )
    for axis, keep in ((None, False), (None, True), (1, False), (-1, True), (0, False)):
        expr = f"axis=[{axis}], " if axis is not None else ""
        out.append(
            case(
                f"median-axis{axis}{'-keep' * keep}",
                f"R.median(x, {expr}keepdims={keep})",
                x,
                _median(axis, keep),
            )
        )
    ties = G.ints(0, 3, 3, 5)
    for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        for axis, keep in ((None, False), (None, True), (1, False), (-1, True), (0, False)):
            out.append(
                case(
                    f"{op}-axis{axis}{'-keep' * keep}",
                    f"R.{op}(x, axis={axis}, keepdims={keep})",
                    x,
                    _arg(fn, axis, keep),
                )
            )
        out.append(case(f"{op}-int32-ties", f"R.{op}(x, axis=1)", ties, _arg(fn, 1, False)))
        out.append(
            case(f"{op}-int64-ties-all", f"R.{op}(x)", ties.astype("int64"), _arg(fn, None, False))
        )
    y = G.uniform(3, 4, 5)
    out += [
        case(
            "collapse_sum_to-lead-and-ones",
            "R.collapse_sum_to(x, R.shape([1, 5]))",
            y,
            _collapse_to((1, 5)),
        ),
        case(
            "collapse_sum_to-middle",
            "R.collapse_sum_to(x, R.shape([3, 1, 5]))",
            y,
            _collapse_to((3, 1, 5)),
        ),
        case(
            "collapse_sum_like",
            "R.collapse_sum_like(x, y)",
            (y, G.uniform(4, 1)),
            _collapse_to((4, 1)),
        ),
        case(
            "collapse_sum_like-int32",
            "R.collapse_sum_like(x, y)",
            (G.ints(-5, 5, 2, 3, 4), G.ints(0, 1, 3, 1)),
            _collapse_to((3, 1)),
        ),
    ]
    return out


# --------------------------------------------------------------- manipulation


def _split(spec: Any, axis: int):
    return lambda v: tuple(np.split(v, spec, axis=axis))


def _strided(axes: tuple, begin: tuple, end: tuple, strides: tuple | None):
    def ref(v: np.ndarray) -> np.ndarray:
        index = [slice(None)] * v.ndim
        for i, a in enumerate(axes):
            index[a] = slice(begin[i], end[i], strides[i] if strides else 1)
        return v[tuple(index)]

    return ref


def _reverse_sequence(seq_axis: int, batch_axis: int):
    def ref(v: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        out = v.copy()
        for b, n in enumerate(lengths):
            src = [slice(None)] * v.ndim
            src[batch_axis], src[seq_axis] = b, slice(0, int(n))
            out[tuple(src)] = np.flip(v[tuple(src)], axis=seq_axis - (seq_axis > batch_axis))
        return out

    return ref


def _pixel_shuffle(r: int):
    def ref(v: np.ndarray) -> np.ndarray:
        n, c, h, w = v.shape
        t = v.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3)
        return t.reshape(n, c // (r * r), h * r, w * r)

    return ref


def _manip_cases() -> list[Case]:
    x, xi = G.uniform(2, 3, 4), G.ints(-9, 9, 2, 3, 4)
    m, n = G.uniform(4, 9), G.uniform(4, 5)
    out = [
        case("reshape-2d", "R.reshape(x, R.shape([4, 6]))", x, lambda v: v.reshape(4, 6)),
        case("reshape-infer", "R.reshape(x, R.shape([-1, 2]))", x, lambda v: v.reshape(-1, 2)),
        case(
            "reshape-int32-4d",
            "R.reshape(x, R.shape([1, 6, 2, 2]))",
            xi,
            lambda v: v.reshape(1, 6, 2, 2),
        ),
        case(
            "permute_dims-201",
            "R.permute_dims(x, axes=[2, 0, 1])",
            x,
            lambda v: v.transpose(2, 0, 1),
        ),
        case("permute_dims-reverse", "R.permute_dims(x)", xi, lambda v: v.transpose()),
        case("expand_dims-0", "R.expand_dims(x, axis=[0])", x, lambda v: v[None]),
        case(
            "expand_dims-1-neg",
            "R.expand_dims(x, axis=[1, -1])",
            x,
            lambda v: np.expand_dims(v, (1, -1)),
        ),
        case(
            "squeeze-axis", "R.squeeze(x, axis=[1])", G.uniform(2, 1, 3, 1), lambda v: v.squeeze(1)
        ),
        case("squeeze-all", "R.squeeze(x)", G.ints(0, 9, 1, 3, 1), lambda v: v.squeeze()),
        case("flatten", "R.flatten(x)", x, lambda v: v.ravel()),
        # a dim of 0 was a division by zero in the index arithmetic
        case("flatten-empty", "R.flatten(x)", G.uniform(3, 0), lambda v: v.ravel()),
        case(
            "reshape-empty",
            "R.reshape(x, R.shape([0, 3]))",
            G.uniform(2, 0, 3),
            lambda v: v.reshape(0, 3),
        ),
        case("batch_flatten", "R.nn.batch_flatten(x)", xi, lambda v: v.reshape(2, -1)),
        case(
            "concat-axis1",
            "R.concat((x, y, z), axis=1)",
            (m, n, G.uniform(4, 2)),
            lambda *a: np.concatenate(a, 1),
        ),
        case(
            "concat-axis0-int32",
            "R.concat((x, y), axis=0)",
            (xi, G.ints(0, 5, 1, 3, 4)),
            lambda *a: np.concatenate(a, 0),
        ),
        case(
            "concat-neg-axis",
            "R.concat((x, y), axis=-1)",
            (x, G.uniform(2, 3, 1)),
            lambda *a: np.concatenate(a, -1),
        ),
        case("split-sections", "R.split(x, indices_or_sections=3, axis=1)", m, _split(3, 1)),
        case(
            "split-indices", "R.split(x, indices_or_sections=[2, 7], axis=1)", m, _split([2, 7], 1)
        ),
        case(
            "split-indices-axis0", "R.split(x, indices_or_sections=[1], axis=0)", xi, _split([1], 0)
        ),
        case(
            "stack-axis0",
            "R.stack((x, y), axis=0)",
            (n, G.uniform(4, 5)),
            lambda *a: np.stack(a, 0),
        ),
        case(
            "stack-last", "R.stack((x, y, z), axis=2)", (n, n + 1, n - 1), lambda *a: np.stack(a, 2)
        ),
        case("tile-same-rank", "R.tile(x, repeats=[2, 1, 3])", x, lambda v: np.tile(v, (2, 1, 3))),
        case("tile-longer", "R.tile(x, repeats=[2, 1, 2])", n, lambda v: np.tile(v, (2, 1, 2))),
        case("tile-shorter", "R.tile(x, repeats=[2])", xi, lambda v: np.tile(v, 2)),
        case("repeat-axis1", "R.repeat(x, repeats=2, axis=1)", x, lambda v: np.repeat(v, 2, 1)),
        case("repeat-flat", "R.repeat(x, repeats=3)", n, lambda v: np.repeat(v, 3)),
        case(
            "repeat-neg-axis", "R.repeat(x, repeats=2, axis=-1)", xi, lambda v: np.repeat(v, 2, -1)
        ),
        case("flip-0", "R.flip(x, axis=0)", x, lambda v: np.flip(v, 0)),
        case("flip-neg", "R.flip(x, axis=-1)", xi, lambda v: np.flip(v, -1)),
        case(
            "broadcast_to",
            "R.broadcast_to(x, R.shape([2, 3, 4]))",
            G.uniform(3, 1),
            lambda v: np.broadcast_to(v, (2, 3, 4)),
        ),
        case(
            "broadcast_to-int32",
            "R.broadcast_to(x, R.shape([2, 5]))",
            G.ints(0, 9, 5),
            lambda v: np.broadcast_to(v, (2, 5)),
        ),
        case(
            "strided_slice-2axes",
            "R.strided_slice(x, (0, 2), (1, 0), (3, 4), (1, 2))",
            G.uniform(4, 5, 6),
            _strided((0, 2), (1, 0), (3, 4), (1, 2)),
        ),
        case(
            "strided_slice-neg-stride",
            "R.strided_slice(x, (1,), (4,), (0,), (-1,))",
            G.uniform(6, 5),
            _strided((1,), (4,), (0,), (-1,)),
        ),
        case(
            "strided_slice-neg-begin-clamp",
            "R.strided_slice(x, (0,), (-3,), (100,))",
            m,
            _strided((0,), (-3,), (100,), None),
        ),
        case(
            "strided_slice-step3-int32",
            "R.strided_slice(x, (1,), (1,), (9,), (3,))",
            G.ints(0, 9, 2, 9),
            _strided((1,), (1,), (9,), (3,)),
        ),
        case(
            "reverse_sequence-seq1",
            "R.reverse_sequence(x, y, seq_axis=1, batch_axis=0)",
            (G.uniform(3, 5, 2), np.array([2, 5, 1], "int64")),
            _reverse_sequence(1, 0),
        ),
        case(
            "reverse_sequence-seq0",
            "R.reverse_sequence(x, y, seq_axis=0, batch_axis=1)",
            (G.ints(0, 9, 4, 3), np.array([3, 1, 4], "int32")),
            _reverse_sequence(0, 1),
        ),
        case(
            "pixel_shuffle",
            "R.nn.pixel_shuffle(x, upscale_factor=2)",
            G.uniform(1, 8, 2, 3),
            _pixel_shuffle(2),
        ),
        case("triu-k1", "R.triu(x, 1)", m, lambda v: np.triu(v, 1)),
        case("triu-batched", "R.triu(x, -1)", x, lambda v: np.triu(v, -1)),
        case("tril-k0", "R.tril(x, 0)", m, lambda v: np.tril(v)),
        case("tril-batched-int32", "R.tril(x, 2)", xi, lambda v: np.tril(v, 2)),
        case(
            "meshgrid-ij",
            'R.meshgrid((x, y), indexing="ij")',
            (G.uniform(3), G.uniform(4)),
            lambda a, b: tuple(np.meshgrid(a, b, indexing="ij")),
        ),
        case(
            "meshgrid-xy",
            'R.meshgrid((x, y), indexing="xy")',
            (G.uniform(3), G.uniform(4)),
            lambda a, b: tuple(np.meshgrid(a, b, indexing="xy")),
        ),
        case(
            "meshgrid-xy-3",
            'R.meshgrid((x, y, z), indexing="xy")',
            (G.uniform(3), G.uniform(4), G.uniform(2)),
            lambda *a: tuple(np.meshgrid(*a, indexing="xy")),
        ),
    ]
    return out


# ------------------------------------------------------------------- indexing


def _scatter_elements(axis: int, mode: str):
    def ref(data: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
        out = data.copy()
        ax = axis % data.ndim
        for pos in np.ndindex(*idx.shape):
            target = list(pos)
            target[ax] = idx[pos] % data.shape[ax]
            out[tuple(target)] = _combine(mode, out[tuple(target)], upd[pos])
        return out

    return ref


def _combine(mode: str, old: Any, new: Any) -> Any:
    ops = {
        "update": lambda: new,
        "add": lambda: old + new,
        "mul": lambda: old * new,
        "min": lambda: np.minimum(old, new),
        "max": lambda: np.maximum(old, new),
    }
    return ops[mode]()


def _scatter_nd(mode: str):
    def ref(data: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
        out = data.copy()
        k = idx.shape[-1]
        flat_idx = idx.reshape(-1, k)
        flat_upd = upd.reshape(flat_idx.shape[0], *data.shape[k:])
        for i, t in enumerate(flat_idx):
            out[tuple(t)] = _combine(mode, out[tuple(t)], flat_upd[i])
        return out

    return ref


def _gather_nd(batch_dims: int):
    def ref(data: np.ndarray, idx: np.ndarray) -> np.ndarray:
        if batch_dims == 0:
            return data[tuple(np.moveaxis(idx, -1, 0))]
        return np.stack([_gather_nd(0)(data[b], idx[b]) for b in range(data.shape[0])])

    return ref


def _index_put(accumulate: bool):
    def ref(data: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        *index, values = rest
        out = data.copy()
        if accumulate:
            np.add.at(out, tuple(index), values)
        else:
            out[tuple(index)] = values
        return out

    return ref


def _slice_scatter(start: int, end: int, step: int, axis: int):
    def ref(v: np.ndarray, src: np.ndarray) -> np.ndarray:
        out = v.copy()
        index = [slice(None)] * v.ndim
        index[axis] = slice(start, end, step)
        out[tuple(index)] = src
        return out

    return ref


def _one_hot(on: Any, off: Any, depth: int, axis: int, dtype: str):
    def ref(idx: np.ndarray) -> np.ndarray:
        hot = idx[..., None] == np.arange(depth)
        out = np.where(hot, on, off).astype(dtype)
        return np.moveaxis(out, -1, axis)

    return ref


def _index_cases() -> list[Case]:
    x, m = G.uniform(5, 4), G.uniform(3, 4, 2)
    idx2 = G.ints(0, 5, 2, 3)
    out_of_range = np.array([[-7, -1, 0], [4, 5, 12]], "int32")
    out = [
        case("take-axis0-2d-idx", "R.take(x, y, axis=0)", (x, idx2), lambda v, i: v[i]),
        case(
            "take-axis1-int64",
            "R.take(x, y, axis=1)",
            (x, G.ints(0, 4, 3, dtype="int64")),
            lambda v, i: np.take(v, i, 1),
        ),
        case(
            "take-no-axis-1d", "R.take(x, y)", (G.uniform(6), G.ints(0, 6, 2, 2)), lambda v, i: v[i]
        ),
        case(
            "take-clip",
            'R.take(x, y, axis=0, mode="clip")',
            (x, out_of_range),
            lambda v, i: np.take(v, i, 0, mode="clip"),
        ),
        case(
            "take-wrap",
            'R.take(x, y, axis=1, mode="wrap")',
            (x, out_of_range),
            lambda v, i: np.take(v, i, 1, mode="wrap"),
        ),
        case(
            "take-int32-data",
            "R.take(x, y, axis=2)",
            (G.ints(0, 9, 2, 3, 4), idx2 % 4),
            lambda v, i: np.take(v, i, 2),
        ),
        case(
            "gather_elements-axis0",
            "R.gather_elements(x, y, axis=0)",
            (x, G.ints(0, 5, 3, 4, dtype="int64")),
            lambda v, i: np.take_along_axis(v, i, 0),
        ),
        case(
            "gather_elements-axis1",
            "R.gather_elements(x, y, axis=1)",
            (x, G.ints(0, 4, 5, 2)),
            lambda v, i: np.take_along_axis(v, i, 1),
        ),
        case(
            "gather_elements-neg-axis-3d",
            "R.gather_elements(x, y, axis=-1)",
            (m, G.ints(0, 2, 3, 4, 3, dtype="int64")),
            lambda v, i: np.take_along_axis(v, i, -1),
        ),
        case(
            "gather_nd-depth2",
            "R.gather_nd(x, y)",
            (m, np.array([[0, 1], [2, 3], [1, 0], [2, 0], [0, 3]], "int64")),
            _gather_nd(0),
        ),
        case(
            "gather_nd-full-depth",
            "R.gather_nd(x, y)",
            (m, np.array([[[0, 1, 1]], [[2, 3, 0]]], "int32")),
            _gather_nd(0),
        ),
        case(
            "gather_nd-batch1",
            "R.gather_nd(x, y, batch_dims=1)",
            (G.uniform(2, 3, 4), np.array([[[2], [0]], [[1], [1]]], "int64")),
            _gather_nd(1),
        ),
        case(
            "index_tensor-1",
            "R.index_tensor(x, (y,))",
            (x, np.array([4, 0, 2], "int64")),
            lambda v, i: v[i],
        ),
        case(
            "index_tensor-2-bcast",
            "R.index_tensor(x, (y, z))",
            (x, np.array([[1], [3]], "int64"), np.array([0, 3, 2], "int64")),
            lambda v, i, j: v[i, j],
        ),
        case(
            "index_tensor-3d-int32",
            "R.index_tensor(x, (y,))",
            (G.ints(0, 9, 3, 2, 2), np.array([[2, 0], [1, 1]], "int32")),
            lambda v, i: v[i],
        ),
        case(
            "index_put-assign",
            "R.index_put(x, (y, z), w)",
            (x, np.array([4, 0, 2], "int64"), np.array([3, 1, 0], "int64"), G.uniform(3)),
            _index_put(False),
        ),
        case(
            "index_put-accumulate",
            "R.index_put(x, (y, z), w, accumulate=True)",
            (x, np.array([4, 0, 4], "int64"), np.array([2, 1, 2], "int64"), G.uniform(3)),
            _index_put(True),
        ),
        case(
            "slice_scatter-axis0-step2",
            "R.slice_scatter(x, y, 1, 5, 2, axis=0)",
            (G.uniform(6, 4), G.uniform(2, 4)),
            _slice_scatter(1, 5, 2, 0),
        ),
        case(
            "slice_scatter-axis1-int32",
            "R.slice_scatter(x, y, 0, 2, 1, axis=1)",
            (G.ints(0, 9, 3, 5), G.ints(10, 20, 3, 2)),
            _slice_scatter(0, 2, 1, 1),
        ),
        case(
            "one_hot-float",
            "R.one_hot(x, 1.0, 0.0, depth=4)",
            np.array([0, 3, 1, -1], "int32"),
            _one_hot(1.0, 0.0, 4, -1, "float32"),
        ),
        case(
            "one_hot-int-axis0",
            "R.one_hot(x, 7, -1, depth=5, axis=0)",
            np.array([[1, 4, 0], [2, 2, 9]], "int32"),
            _one_hot(7, -1, 5, 0, "int32"),
        ),
        case(
            "one_hot-int64-idx-axis1",
            "R.one_hot(x, 2.5, -0.5, depth=3, axis=1)",
            np.array([[1, 0], [2, 1]], "int64"),
            _one_hot(2.5, -0.5, 3, 1, "float32"),
        ),
        case(
            "bucketize-left",
            "R.bucketize(x, y)",
            (
                np.array([[-2.0, 0.0, 0.7], [1.5, 3.0, -1.0]], "float32"),
                np.array([-1.0, 0.0, 0.0, 1.5], "float32"),
            ),
            lambda v, b: np.searchsorted(b, v, side="left").astype("int64"),
        ),
        case(
            "bucketize-right-int32",
            "R.bucketize(x, y, out_int32=True, right=True)",
            (
                np.array([-2.0, 0.0, 0.7, 1.5, 3.0, -1.0], "float32"),
                np.array([-1.0, 0.0, 0.0, 1.5], "float32"),
            ),
            lambda v, b: np.searchsorted(b, v, side="right").astype("int32"),
        ),
        case(
            "bucketize-int64",
            "R.bucketize(x, y, right=False)",
            (np.array([0, 3, 5, 9, 10], "int64"), np.array([1, 3, 5, 7, 9], "int64")),
            lambda v, b: np.searchsorted(b, v, side="left").astype("int64"),
        ),
    ]
    data = G.uniform(4, 5)
    distinct = G.perm_rows(4, 2, 5)
    out.append(
        case(
            "scatter_elements-update-axis0",
            "R.scatter_elements(x, y, z, axis=0)",
            (data, distinct, G.uniform(2, 5)),
            _scatter_elements(0, "update"),
        )
    )
    for mode in ("add", "mul", "min", "max"):
        idx = G.ints(-5, 5, 4, 3, dtype="int64")
        out.append(
            case(
                f"scatter_elements-{mode}-axis1",
                f'R.scatter_elements(x, y, z, axis=1, reduction="{mode}")',
                (data, idx, G.uniform(4, 3)),
                _scatter_elements(1, mode),
            )
        )
    out.append(
        case(
            "scatter_elements-add-int32",
            'R.scatter_elements(x, y, z, reduction="add")',
            (G.ints(0, 9, 3, 2), G.ints(0, 3, 4, 2), G.ints(0, 9, 4, 2)),
            _scatter_elements(0, "add"),
        )
    )
    nd = G.uniform(4, 3, 2)
    out.append(
        case(
            "scatter_nd-update-rows",
            "R.scatter_nd(x, y, z)",
            (nd, np.array([[3], [0]], "int64"), G.uniform(2, 3, 2)),
            _scatter_nd("update"),
        )
    )
    for mode in ("add", "mul", "min", "max"):
        idx = np.array([[0, 1], [3, 2], [0, 1]], "int64")
        out.append(
            case(
                f"scatter_nd-{mode}",
                f'R.scatter_nd(x, y, z, reduction="{mode}")',
                (nd, idx, G.uniform(3, 2)),
                _scatter_nd(mode),
            )
        )
    out.append(
        case(
            "scatter_nd-full-index-2d",
            "R.scatter_nd(x, y, z)",
            (nd, np.array([[[0, 0, 1], [3, 2, 0]]], "int64"), G.uniform(1, 2)),
            _scatter_nd("update"),
        )
    )
    return out


# ------------------------------------------------------------------- creation


def _hamming(n: int, periodic: bool, alpha: float, beta: float, dtype: str):
    def ref() -> np.ndarray:
        if n == 1:
            return np.ones(1, dtype)
        denom = n if periodic else n - 1
        return (alpha - beta * np.cos(2 * np.pi * np.arange(n) / denom)).astype(dtype)

    return ref


def _const(shape: tuple, value: Any, dtype: str):
    return lambda *_: np.full(shape, value, dtype)


def _create_cases() -> list[Case]:
    x, xi = G.uniform(3, 4), G.ints(0, 9, 2, 3)
    return [
        case(
            "full-float32",
            'R.full(R.shape([2, 3]), R.const(1.5, "float32"), dtype="float32")',
            (),
            _const((2, 3), 1.5, "float32"),
        ),
        case(
            "full-int-to-int64",
            'R.full(R.shape([4]), R.const(7, "int32"), dtype="int64")',
            (),
            _const((4,), 7, "int64"),
        ),
        case(
            "full-dtype-from-value",
            'R.full(R.shape([2, 2]), R.const(-3, "int32"))',
            (),
            _const((2, 2), -3, "int32"),
        ),
        case(
            "full_like-float32",
            'R.full_like(x, R.const(2.5, "float32"))',
            x,
            lambda v: np.full_like(v, 2.5),
        ),
        case(
            "full_like-int-to-float64",
            'R.full_like(x, R.const(3, "int32"), dtype="float64")',
            xi,
            lambda v: np.full(v.shape, 3, "float64"),
        ),
        case(
            "zeros-float32",
            'R.zeros(R.shape([2, 3]), dtype="float32")',
            (),
            _const((2, 3), 0, "float32"),
        ),
        case("zeros-int64", 'R.zeros(R.shape([5]), dtype="int64")', (), _const((5,), 0, "int64")),
        case(
            "ones-float16",
            'R.ones(R.shape([3, 2]), dtype="float16")',
            (),
            _const((3, 2), 1, "float16"),
        ),
        case("ones-int32", 'R.ones(R.shape([4]), dtype="int32")', (), _const((4,), 1, "int32")),
        case("zeros_like", "R.zeros_like(x)", x, np.zeros_like),
        case(
            "zeros_like-dtype",
            'R.zeros_like(x, dtype="int32")',
            x,
            lambda v: np.zeros(v.shape, "int32"),
        ),
        case("ones_like-int32", "R.ones_like(x)", xi, np.ones_like),
        case(
            "ones_like-dtype",
            'R.ones_like(x, dtype="float64")',
            xi,
            lambda v: np.ones(v.shape, "float64"),
        ),
        case(
            "arange-int64-step",
            'R.arange(0, 10, 2, dtype="int64")',
            (),
            lambda: np.arange(0, 10, 2, dtype="int64"),
        ),
        case("arange-end-only", "R.arange(5)", (), lambda: np.arange(5, dtype="int64")),
        case(
            "shape_to_tensor",
            "R.shape_to_tensor(R.shape_of(x))",
            x,
            lambda v: np.array(v.shape, "int64"),
        ),
        case(
            "arange-float",
            "R.arange(1.0, 2.0, 0.25)",
            (),
            lambda: np.arange(1.0, 2.0, 0.25, dtype="float32"),
        ),
        case(
            "arange-float-inexact",
            'R.arange(0.0, 1.0, 0.3, dtype="float32")',
            (),
            lambda: np.arange(0.0, 1.0, 0.3).astype("float32"),
        ),
        case(
            "arange-negative-step-int32",
            'R.arange(5, -3, -2, dtype="int32")',
            (),
            lambda: np.arange(5, -3, -2, dtype="int32"),
        ),
        case("eye-square", 'R.eye(3, dtype="float32")', (), lambda: np.eye(3, dtype="float32")),
        case(
            "eye-rect-k1",
            'R.eye(3, 4, 1, dtype="float32")',
            (),
            lambda: np.eye(3, 4, 1, dtype="float32"),
        ),
        case(
            "eye-k-neg-int32",
            'R.eye(4, 3, -1, dtype="int32")',
            (),
            lambda: np.eye(4, 3, -1, dtype="int32"),
        ),
        case("eye_like-k1", "R.eye_like(x, 1)", x, lambda v: np.eye(3, 4, 1, dtype="float32")),
        case(
            "eye_like-dtype",
            'R.eye_like(x, -1, dtype="int64")',
            xi,
            lambda v: np.eye(2, 3, -1, dtype="int64"),
        ),
        case(
            "hamming_window-periodic",
            'R.hamming_window(5, 1, 0.54, 0.46, dtype="float32")',
            (),
            _hamming(5, True, 0.54, 0.46, "float32"),
        ),
        case(
            "hamming_window-symmetric",
            'R.hamming_window(6, 0, 0.5, 0.5, dtype="float64")',
            (),
            _hamming(6, False, 0.5, 0.5, "float64"),
        ),
        case(
            "hamming_window-size1",
            'R.hamming_window(1, 0, 0.54, 0.46, dtype="float32")',
            (),
            _hamming(1, False, 0.54, 0.46, "float32"),
        ),
    ]


# ---------------------------------------------------------- sorting and scans


def _sort(axis: int, desc: bool):
    return lambda v: np.flip(np.sort(v, axis), axis) if desc else np.sort(v, axis)


def _argsort(axis: int, desc: bool, dtype: str):
    return lambda v: np.argsort(-v if desc else v, axis, kind="stable").astype(dtype)


def _topk(k: int, axis: int, ret: str, largest: bool, dtype: str):
    def ref(v: np.ndarray) -> Any:
        order = np.argsort(-v if largest else v, axis, kind="stable")
        idx = np.take(order, np.arange(k), axis)
        val = np.take_along_axis(v, idx, axis)
        return {"both": (val, idx.astype(dtype)), "values": val, "indices": idx.astype(dtype)}[ret]

    return ref


def _scan(
    fn: Callable[..., Any], axis: int | None, exclusive: bool, dtype: str | None, identity: int
):
    def ref(v: np.ndarray) -> np.ndarray:
        out_dtype = dtype or v.dtype
        w = v.ravel() if axis is None else v
        ax = 0 if axis is None else axis
        acc = fn(w.astype("float64" if w.dtype.kind == "f" else "int64"), axis=ax)
        if exclusive:
            shifted = np.full_like(acc, identity)
            sl = [slice(None)] * acc.ndim
            sl_src = [slice(None)] * acc.ndim
            sl[ax], sl_src[ax] = slice(1, None), slice(0, -1)
            shifted[tuple(sl)] = acc[tuple(sl_src)]
            acc = shifted
        return acc.astype(out_dtype)

    return ref


def _sort_scan_cases() -> list[Case]:
    x, xi = G.uniform(3, 6), G.ints(-9, 9, 4, 3)
    perm = np.stack([G.rng.permutation(7) for _ in range(3)]).astype("int32")  # no ties
    return [
        case("sort-last", "R.sort(x)", x, _sort(-1, False)),
        case("sort-axis0-desc", "R.sort(x, axis=0, descending=True)", x, _sort(0, True)),
        case("sort-int32", "R.sort(x, axis=1)", xi, _sort(1, False)),
        case("argsort-default-int32", "R.argsort(x)", x, _argsort(-1, False, "int32")),
        case(
            "argsort-desc-int64",
            'R.argsort(x, axis=1, descending=True, dtype="int64")',
            x,
            _argsort(1, True, "int64"),
        ),
        case(
            "argsort-axis0-int-data",
            "R.argsort(x, axis=0)",
            perm.T.copy(),
            _argsort(0, False, "int32"),
        ),
        case(
            "topk-both",
            'R.topk(x, k=3, axis=-1, ret_type="both")',
            x,
            _topk(3, -1, "both", True, "int32"),
        ),
        case(
            "topk-values-smallest-axis0",
            'R.topk(x, k=2, axis=0, ret_type="values", largest=False)',
            x,
            _topk(2, 0, "values", False, "int32"),
        ),
        case(
            "topk-indices-int64",
            'R.topk(x, k=4, ret_type="indices", dtype="int64")',
            perm,
            _topk(4, -1, "indices", True, "int64"),
        ),
        case("topk-default-k1", "R.topk(x)", x, _topk(1, -1, "both", True, "int32")),
        case("cumsum-axis1", "R.cumsum(x, axis=1)", x, _scan(np.cumsum, 1, False, None, 0)),
        case("cumsum-flat", "R.cumsum(x)", x, _scan(np.cumsum, None, False, None, 0)),
        case(
            "cumsum-exclusive-int32",
            "R.cumsum(x, axis=1, exclusive=True)",
            xi,
            _scan(np.cumsum, 1, True, None, 0),
        ),
        case(
            "cumsum-int32-to-int64",
            'R.cumsum(x, axis=0, dtype="int64")',
            xi,
            _scan(np.cumsum, 0, False, "int64", 0),
        ),
        case(
            "cumsum-float64-neg-axis",
            "R.cumsum(x, axis=-1)",
            x.astype("float64"),
            _scan(np.cumsum, -1, False, None, 0),
        ),
        case("cumprod-axis0", "R.cumprod(x, axis=0)", x, _scan(np.cumprod, 0, False, None, 1)),
        case(
            "cumprod-exclusive",
            "R.cumprod(x, axis=1, exclusive=True)",
            x,
            _scan(np.cumprod, 1, True, None, 1),
        ),
        case(
            "cumprod-int32-flat",
            "R.cumprod(x)",
            G.ints(-3, 4, 2, 4),
            _scan(np.cumprod, None, False, None, 1),
        ),
    ]


# --------------------------------------------------------------------- linalg


def _matmul(dtype: str | None = None):
    def ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out_dtype = dtype or a.dtype
        wide = "int64" if a.dtype.kind == "i" else "float64"
        return np.matmul(a.astype(wide), b.astype(wide)).astype(out_dtype)

    return ref


def _einsum(subscripts: str):
    return like(lambda *a: np.einsum(subscripts, *a))


def _linalg_cases() -> list[Case]:
    u = G.uniform
    out = [
        case("matmul-2d", "R.matmul(x, y)", (u(3, 4), u(4, 5)), _matmul()),
        case("matmul-batched", "R.matmul(x, y)", (u(2, 3, 4), u(2, 4, 5)), _matmul()),
        case("matmul-bcast-batch", "R.matmul(x, y)", (u(2, 1, 3, 4), u(3, 4, 2)), _matmul()),
        case("matmul-2d-by-batched", "R.matmul(x, y)", (u(3, 4), u(2, 4, 5)), _matmul()),
        case("matmul-vec-mat", "R.matmul(x, y)", (u(4), u(4, 5)), _matmul()),
        case("matmul-mat-vec", "R.matmul(x, y)", (u(2, 3, 4), u(4)), _matmul()),
        case("matmul-vec-vec", "R.matmul(x, y)", (u(4), u(4)), _matmul()),
        case(
            "matmul-int32", "R.matmul(x, y)", (G.ints(-5, 5, 3, 4), G.ints(-5, 5, 4, 2)), _matmul()
        ),
        case(
            "matmul-int64-batched",
            "R.matmul(x, y)",
            (G.ints(-5, 5, 2, 3, 4, dtype="int64"), G.ints(-5, 5, 2, 4, 2, dtype="int64")),
            _matmul(),
        ),
        case(
            "matmul-float64",
            "R.matmul(x, y)",
            (u(3, 6, dtype="float64"), u(6, 2, dtype="float64")),
            _matmul(),
        ),
        case(
            "matmul-f16-out-f32",
            'R.matmul(x, y, out_dtype="float32")',
            (u(3, 4, dtype="float16"), u(4, 5, dtype="float16")),
            _matmul("float32"),
        ),
        case(
            "matmul-float16",
            "R.matmul(x, y)",
            (u(3, 4, dtype="float16"), u(4, 5, dtype="float16")),
            _matmul(),
            tol=1e-2,
        ),
        case("outer-float32", "R.outer(x, y)", (u(3), u(4)), like(np.outer)),
        case(
            "outer-int32",
            "R.outer(x, y)",
            (G.ints(-5, 5, 3), G.ints(-5, 5, 2)),
            as_("int32", np.outer),
        ),
    ]
    for subs, shapes in (
        ("ij,jk->ik", ((3, 4), (4, 2))),
        ("bii->b", ((2, 3, 3),)),
        ("ij->ji", ((3, 4),)),
        ("i,i->", ((5,), (5,))),
        ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2))),
        ("ii->i", ((4, 4),)),
        ("ij,ij->ij", ((2, 3), (2, 3))),
        ("i,j->ij", ((3,), (2,))),
        ("ijk->", ((2, 3, 2),)),
        ("abc,cd->abd", ((2, 2, 3), (3, 4))),
    ):
        operands = ", ".join("xyz"[: len(shapes)])
        out.append(
            case(
                f"einsum-{subs.replace('->', '-to-').replace(',', '_') or 'scalar'}",
                f'R.einsum(({operands},), subscripts="{subs}")',
                tuple(u(*s) for s in shapes),
                _einsum(subs),
            )
        )
    return out


CASES: list[Case] = (
    _reduce_cases()
    + _manip_cases()
    + _index_cases()
    + _create_cases()
    + _sort_scan_cases()
    + _linalg_cases()
)
