"""Data-dependent store indices are range-checked: an out-of-range index in
scatter_elements, scatter_nd or index_put raises tvmlite.TVMLiteError naming the
op and the axis (TVM writes out of bounds), while in-range and negative-wrapped
indices still work."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
X = np.arange(12, dtype="float32").reshape(3, 4)


def t(shape: tuple[int, ...], dtype: str = "float32") -> str:
    return f'R.Tensor({shape}, dtype="{dtype}")'


def build(params: str, call: str) -> tvmlite.Executable:
    src = (
        HEADER
        + "@I.ir_module\nclass Module:\n    @R.function\n"
        + f"    def main({params}) -> {t(X.shape)}:\n        gv = {call}\n        return gv\n"
    )
    return tvmlite.build(tvmlite.parse(src))


def i64(values: list) -> np.ndarray:
    return np.array(values, "int64")


SCATTER_ELEMENTS = (f"x: {t((3, 4))}, i: {t((3, 2), 'int64')}, u: {t((3, 2))}", 1)


def test_scatter_elements_in_range_and_negative() -> None:
    ex = build(SCATTER_ELEMENTS[0], "R.scatter_elements(x, i, u, axis=1)")
    idx, upd = i64([[0, 1], [2, 3], [-1, -4]]), np.full((3, 2), -1.0, "float32")
    want = X.copy()
    np.put_along_axis(want, idx % 4, upd, axis=1)
    np.testing.assert_array_equal(ex["main"](X, idx, upd), want)


@pytest.mark.parametrize("bad", [4, -5, 1 << 40])
def test_scatter_elements_out_of_range(bad: int) -> None:
    ex = build(SCATTER_ELEMENTS[0], "R.scatter_elements(x, i, u, axis=-1)")
    idx = i64([[0, 1], [2, bad], [0, 0]])
    with pytest.raises(
        tvmlite.TVMLiteError, match="R.scatter_elements: index out of range for axis 1"
    ):
        ex["main"](X, idx, np.ones((3, 2), "float32"))


def test_scatter_elements_axis0_out_of_range() -> None:
    ex = build(SCATTER_ELEMENTS[0], "R.scatter_elements(x, i, u, axis=0)")
    with pytest.raises(
        tvmlite.TVMLiteError, match="scatter_elements: index out of range for axis 0"
    ):
        ex["main"](X, i64([[0, 1], [3, 0], [0, 0]]), np.ones((3, 2), "float32"))


SCATTER_ND = f"x: {t((3, 4))}, i: {t((2, 2), 'int64')}, u: {t((2,))}"


def test_scatter_nd_in_range() -> None:
    ex = build(SCATTER_ND, 'R.scatter_nd(x, i, u, reduction="add")')
    idx, upd = i64([[0, 1], [2, 3]]), np.array([10.0, 20.0], "float32")
    want = X.copy()
    np.add.at(want, (idx[:, 0], idx[:, 1]), upd)
    np.testing.assert_array_equal(ex["main"](X, idx, upd), want)


@pytest.mark.parametrize(
    ("idx", "axis"), [([[0, 4], [0, 0]], 1), ([[3, 0], [0, 0]], 0), ([[0, 0], [-1, 0]], 0)]
)
def test_scatter_nd_out_of_range(idx: list, axis: int) -> None:
    ex = build(SCATTER_ND, "R.scatter_nd(x, i, u)")
    with pytest.raises(
        tvmlite.TVMLiteError, match=f"R.scatter_nd: index out of range for axis {axis}"
    ):
        ex["main"](X, i64(idx), np.ones((2,), "float32"))


INDEX_PUT = f"x: {t((3, 4))}, r: {t((2,), 'int64')}, c: {t((2,), 'int64')}, v: {t((2,))}"


def test_index_put_in_range_and_negative() -> None:
    ex = build(INDEX_PUT, "R.index_put(x, (r, c), v, accumulate=True)")
    rows, cols, vals = i64([0, -1]), i64([-4, 3]), np.array([5.0, 7.0], "float32")
    want = X.copy()
    np.add.at(want, (rows, cols), vals)
    np.testing.assert_array_equal(ex["main"](X, rows, cols, vals), want)


@pytest.mark.parametrize(("rows", "cols", "axis"), [([0, 3], [0, 0], 0), ([0, 0], [0, -5], 1)])
def test_index_put_out_of_range(rows: list, cols: list, axis: int) -> None:
    ex = build(INDEX_PUT, "R.index_put(x, (r, c), v)")
    with pytest.raises(
        tvmlite.TVMLiteError, match=f"R.index_put: index out of range for axis {axis}"
    ):
        ex["main"](X, i64(rows), i64(cols), np.ones((2,), "float32"))
