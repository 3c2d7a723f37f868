"""Data-dependent indices are range-checked: an out-of-range index in
scatter_elements, scatter_nd or index_put (stores), or in take (mode "fast"),
gather_elements, gather_nd or index_tensor (loads), raises tvmlite.TVMLiteError
naming the op and the axis (TVM writes or reads out of bounds), while in-range and
negative-wrapped indices still work."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.transform import LegalizeOps

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


# Read side: take ("fast"), gather_elements, gather_nd and index_tensor read through
# data-dependent indices in a TE stage; a separate `<op>_index_check` kernel checks
# the index tensor first. None of them wraps negative indices, so those raise too.


def build_read(params: str, call: str, out: tuple[int, ...]) -> tvmlite.Executable:
    src = (
        HEADER
        + "@I.ir_module\nclass Module:\n    @R.function\n"
        + f"    def main({params}) -> {t(out)}:\n        gv = {call}\n        return gv\n"
    )
    return tvmlite.build(tvmlite.parse(src))


TAKE = f"x: {t((3, 4))}, i: {t((2,), 'int64')}"


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_in_range(axis: int) -> None:
    out = (2, 4) if axis == 0 else (3, 2)
    ex = build_read(TAKE, f"R.take(x, i, axis={axis})", out)
    idx = i64([2, 0])
    np.testing.assert_array_equal(ex["main"](X, idx), np.take(X, idx, axis=axis))


@pytest.mark.parametrize(("axis", "bad", "named"), [(0, 3, 0), (1, 4, 1), (-1, -1, 1)])
def test_take_out_of_range(axis: int, bad: int, named: int) -> None:
    out = (2, 4) if axis == 0 else (3, 2)
    ex = build_read(TAKE, f"R.take(x, i, axis={axis})", out)
    with pytest.raises(tvmlite.TVMLiteError, match=f"R.take: index out of range for axis {named}"):
        ex["main"](X, i64([0, bad]))


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_clip_and_wrap_stay_unchecked_and_in_range(mode: str) -> None:
    src = f'R.take(x, i, axis=1, mode="{mode}")'
    ex = build_read(TAKE, src, (3, 2))
    idx = i64([-1, 9])
    np.testing.assert_array_equal(ex["main"](X, idx), np.take(X, idx, axis=1, mode=mode))
    mod = LegalizeOps()(
        tvmlite.parse(
            HEADER
            + "@I.ir_module\nclass Module:\n    @R.function\n"
            + f"    def main({TAKE}) -> {t((3, 2))}:\n        gv = {src}\n        return gv\n"
        )
    )
    assert not any(name.endswith("_index_check") for name in mod.functions)


GATHER_ELEMENTS = f"x: {t((3, 4))}, i: {t((3, 2), 'int64')}"


def test_gather_elements_in_range() -> None:
    ex = build_read(GATHER_ELEMENTS, "R.gather_elements(x, i, axis=1)", (3, 2))
    idx = i64([[0, 3], [1, 2], [3, 3]])
    np.testing.assert_array_equal(ex["main"](X, idx), np.take_along_axis(X, idx, axis=1))


@pytest.mark.parametrize(("axis", "bad", "named"), [(1, 4, 1), (-1, -1, 1), (0, 3, 0)])
def test_gather_elements_out_of_range(axis: int, bad: int, named: int) -> None:
    ex = build_read(GATHER_ELEMENTS, f"R.gather_elements(x, i, axis={axis})", (3, 2))
    with pytest.raises(
        tvmlite.TVMLiteError, match=f"R.gather_elements: index out of range for axis {named}"
    ):
        ex["main"](X, i64([[0, 0], [0, bad], [0, 0]]))


GATHER_ND = f"x: {t((3, 4))}, i: {t((2, 2), 'int64')}"


def test_gather_nd_in_range() -> None:
    ex = build_read(GATHER_ND, "R.gather_nd(x, i)", (2,))
    idx = i64([[0, 3], [2, 1]])
    np.testing.assert_array_equal(ex["main"](X, idx), X[idx[:, 0], idx[:, 1]])


@pytest.mark.parametrize(
    ("idx", "axis"), [([[0, 4], [0, 0]], 1), ([[0, 0], [3, 0]], 0), ([[0, 0], [0, -1]], 1)]
)
def test_gather_nd_out_of_range(idx: list, axis: int) -> None:
    ex = build_read(GATHER_ND, "R.gather_nd(x, i)", (2,))
    with pytest.raises(
        tvmlite.TVMLiteError, match=f"R.gather_nd: index out of range for axis {axis}"
    ):
        ex["main"](X, i64(idx))


INDEX_TENSOR = f"x: {t((3, 4))}, r: {t((2,), 'int64')}, c: {t((2,), 'int64')}"


def test_index_tensor_in_range() -> None:
    ex = build_read(INDEX_TENSOR, "R.index_tensor(x, (r, c))", (2,))
    rows, cols = i64([2, 0]), i64([3, 1])
    np.testing.assert_array_equal(ex["main"](X, rows, cols), X[rows, cols])


@pytest.mark.parametrize(("rows", "cols", "axis"), [([0, 3], [0, 0], 0), ([0, 0], [4, 0], 1)])
def test_index_tensor_out_of_range(rows: list, cols: list, axis: int) -> None:
    ex = build_read(INDEX_TENSOR, "R.index_tensor(x, (r, c))", (2,))
    with pytest.raises(
        tvmlite.TVMLiteError, match=f"R.index_tensor: index out of range for axis {axis}"
    ):
        ex["main"](X, i64(rows), i64(cols))


@pytest.mark.parametrize("bad", [3, -1])
def test_multinomial_sample_row_out_of_range(bad: int) -> None:
    """The row each sample reads (sample_indices) is checked before the cumulative
    probabilities are read through it."""
    src = (
        HEADER
        + "@I.ir_module\nclass Module:\n    @R.function\n"
        + f"    def main(p: {t((3, 4))}, u: {t((2, 1))}, s: {t((2, 1), 'int64')}):\n"
        + '        gv = R.multinomial_from_uniform(p, u, s, dtype="int64")\n        return gv\n'
    )
    ex = tvmlite.build(tvmlite.parse(src))
    p = np.full((3, 4), 0.25, "float32")
    u = np.array([[0.3], [0.8]], "float32")
    np.testing.assert_array_equal(ex["main"](p, u, i64([[0], [2]])), [[1], [3]])
    with pytest.raises(tvmlite.TVMLiteError, match="multinomial_from_uniform.*axis 0"):
        ex["main"](p, u, i64([[0], [bad]]))
