"""Numerics of the legalized scatter, indexing, search, image and creation
kernels against NumPy references (each op legalized, compiled and run)."""

from __future__ import annotations

import numpy as np
import pytest
from test_legalize_families import close, f32, module, run, t

RNG = np.random.default_rng(11)


@pytest.mark.parametrize(("axis", "mode"), [(0, "update"), (1, "add"), (-1, "mul"), (0, "max")])
def test_scatter_elements(axis: int, mode: str) -> None:
    x, upd = f32(4, 5), f32(2, 5) if axis == 0 else f32(4, 3)
    if axis == 0:  # distinct rows per column so "update" is order-independent
        idx = np.stack([RNG.permutation(4)[:2] for _ in range(5)], 1).astype("int64")
    else:
        idx = RNG.integers(-5, 5, (4, 3)).astype("int64")
    params = f"x: {t(x.shape)}, i: {t(idx.shape, 'int64')}, u: {t(upd.shape)}"
    got = run(
        module(params, f'R.scatter_elements(x, i, u, axis={axis}, reduction="{mode}")'), x, idx, upd
    )
    ref = x.copy()
    ax = axis % 2
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[ax] = idx[pos] % x.shape[ax]
        old, new = ref[tuple(target)], upd[pos]
        ref[tuple(target)] = {
            "update": new,
            "add": old + new,
            "mul": old * new,
            "max": max(old, new),
        }[mode]
    close(got, ref)


def test_scatter_nd_add() -> None:
    x, idx, upd = f32(4, 3, 2), np.array([[0, 1], [3, 2], [0, 1]], "int64"), f32(3, 2)
    params = f"x: {t(x.shape)}, i: {t(idx.shape, 'int64')}, u: {t(upd.shape)}"
    got = run(module(params, 'R.scatter_nd(x, i, u, reduction="add")'), x, idx, upd)
    ref = x.copy()
    np.add.at(ref, (idx[:, 0], idx[:, 1]), upd)
    close(got, ref)


def test_index_put_and_index_tensor() -> None:
    x, rows, vals = f32(5, 3), np.array([4, 0, 4], "int64"), f32(3)
    cols = np.array([2, -1, 2], "int64")
    ints = f"r: {t(rows.shape, 'int64')}, c: {t(cols.shape, 'int64')}"
    params = f"x: {t(x.shape)}, {ints}, v: {t(vals.shape)}"
    got = run(module(params, "R.index_put(x, (r, c), v, accumulate=True)"), x, rows, cols, vals)
    ref = x.copy()
    np.add.at(ref, (rows, cols), vals)
    close(got, ref)
    cols = np.array([[2], [0]], "int64")
    params = f"x: {t(x.shape)}, r: {t(rows.shape, 'int64')}, c: {t(cols.shape, 'int64')}"
    got = run(module(params, "R.index_tensor(x, (r, c))"), x, rows, cols)
    close(got, x[rows, cols])


def test_slice_scatter() -> None:
    x, src = f32(4, 7), f32(4, 3)
    params = f"x: {t(x.shape)}, s: {t(src.shape)}"
    got = run(module(params, "R.slice_scatter(x, s, 1, 7, 2, axis=1)"), x, src)
    ref = x.copy()
    ref[:, 1:7:2] = src
    close(got, ref)


@pytest.mark.parametrize("right", [False, True])
def test_bucketize(right: bool) -> None:
    bounds = np.array([-1.0, 0.0, 0.0, 1.5], "float32")
    x = np.array([[-2.0, 0.0, 0.7], [1.5, 3.0, -1.0]], "float32")
    params = f"x: {t(x.shape)}, b: {t(bounds.shape)}"
    got = run(module(params, f"R.bucketize(x, b, out_int32=True, right={right})"), x, bounds)
    np.testing.assert_array_equal(
        got, np.searchsorted(bounds, x, side="right" if right else "left")
    )


def test_resize2d_nearest_and_linear() -> None:
    x = f32(1, 2, 3, 4)
    nearest = (
        'R.image.resize2d(x, R.shape([6, 8]), method="nearest_neighbor", '
        'rounding_method="floor", coordinate_transformation_mode="asymmetric")'
    )
    close(run(module(f"x: {t(x.shape)}", nearest), x), x.repeat(2, 2).repeat(2, 3))
    linear = (
        'R.image.resize2d(x, R.shape([5, 7]), method="linear", '
        'coordinate_transformation_mode="align_corners")'
    )
    got = run(module(f"x: {t(x.shape)}", linear), x)
    ys, xs = np.linspace(0, 2, 5), np.linspace(0, 3, 7)
    y0, x0 = np.minimum(ys.astype(int), 1), np.minimum(xs.astype(int), 2)
    dy, dx = (ys - y0)[:, None], (xs - x0)[None, :]
    a, b = x[..., y0, :][..., x0], x[..., y0, :][..., x0 + 1]
    c, d = x[..., y0 + 1, :][..., x0], x[..., y0 + 1, :][..., x0 + 1]
    close(got, (a * (1 - dx) + b * dx) * (1 - dy) + (c * (1 - dx) + d * dx) * dy)


def test_creation_and_binary_extras() -> None:
    a, b = f32(3), f32(4)
    close(run(module(f"a: {t(a.shape)}, b: {t(b.shape)}", "R.outer(a, b)"), a, b), np.outer(a, b))
    p, q = f32(2, 3), f32(2, 3)
    params = f"p: {t(p.shape)}, q: {t(q.shape)}"
    close(run(module(params, "R.atan2(p, q)"), p, q), np.arctan2(p, q))
    close(run(module(params, "R.log_add_exp(p, q)"), p, q), np.logaddexp(p, q))
    close(run(module(params, "R.stack((p, q), axis=1)"), p, q), np.stack([p, q], 1))
    got = run(module("", 'R.eye(3, 4, 1, dtype="float32")'))
    np.testing.assert_array_equal(got, np.eye(3, 4, 1, dtype="float32"))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction: str) -> None:
    pred, target, w = f32(4, 5), np.array([1, 4, -100, 0], "int64"), np.abs(f32(5))
    params = f"p: {t(pred.shape)}, y: {t(target.shape, 'int64')}, w: {t(w.shape)}"
    got = run(module(params, f'R.nn.nll_loss(p, y, w, reduction="{reduction}")'), pred, target, w)
    keep = target != -100
    safe = np.where(keep, target, 0)
    losses = np.where(keep, -pred[np.arange(4), safe] * w[safe], 0.0)
    ref = {"none": losses, "sum": losses.sum(), "mean": losses.sum() / w[safe][keep].sum()}
    close(got, ref[reduction])
