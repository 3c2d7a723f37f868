"""Legalization over symbolic shapes, as dynamic-batch and dynamic-sequence
exports of real models use them: a slice ending at a symbolic size (BERT's
position ids `[:, :s]`), a broadcast of two dims that cannot be proved equal
(`s` against `T.min(s, 512)`), and a kernel whose input's shape is an
expression of a dim only its output names (`(n * 12, 197, 64)` reshaped to
`(n, 12, 197, 64)`). Numerics against NumPy at several sizes."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import TVMLiteError

SLICES = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 512), "int64"), y: R.Tensor(("m", 8), "int64"), z: R.Tensor((1, "s"), "int64")):
        s = T.int64()
        m = T.int64()
        with R.dataflow():
            a = R.strided_slice(x, (1,), (0,), (s,), (1,))
            b = R.strided_slice(x, (1,), (1,), (s,), (1,))
            c = R.strided_slice(y, (0,), (0,), (s,), (1,))
            d = R.strided_slice(x, (1,), (0,), (s,), (2,))
            e = R.strided_slice(y, (0,), (-3,), (7,), (1,))
            R.output(a, b, c, d, e)
        return (a, b, c, d, e)
"""

# What TVM 0.27 infers for the slices above.
SLICE_SHAPES = [
    'R.Tensor((1, T.min(s, 512)), dtype="int64")',
    'R.Tensor((1, T.min(s, 512) - 1), dtype="int64")',
    'R.Tensor((T.min(s, m), 8), dtype="int64")',
    'R.Tensor((1, (T.min(s, 512) + 1) // 2), dtype="int64")',
]


def test_a_slice_ending_at_a_symbolic_size_is_sized_as_tvm_sizes_it() -> None:
    printed = tvmlite.parse(SLICES).script()
    for shape in SLICE_SHAPES:
        assert shape in printed, shape


@pytest.mark.parametrize(("s", "m"), [(5, 9), (600, 3), (1, 1), (2, 2)])
def test_slices_with_symbolic_bounds(s: int, m: int) -> None:
    ex = tvmlite.build(tvmlite.parse(SLICES))
    x = np.arange(512).reshape(1, 512)
    y = np.arange(m * 8).reshape(m, 8)
    out = ex["main"](x, y, np.zeros((1, s), "int64"))
    for got, want in zip(out, (x[:, :s], x[:, 1:s], y[:s], x[:, :s:2], y[-3:7]), strict=True):
        np.testing.assert_array_equal(got, want)


POSITIONS = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, "s", 4), "float32"), table: R.Tensor((1, 8, 4), "float32")):
        s = T.int64()
        with R.dataflow():
            rows = R.strided_slice(table, (1,), (0,), (s,), (1,))
            gv = R.add(x, rows)
            R.output(gv)
        return gv
"""


def test_a_broadcast_of_dims_not_proved_equal_checks_them_at_run_time() -> None:
    """`s` against `T.min(s, 8)`: equal when s <= 8, which the call checks."""
    mod = tvmlite.parse(POSITIONS)
    assert 'gv: R.Tensor(dtype="float32", ndim=3)' in mod.script()
    ex = tvmlite.build(mod)
    table = np.random.default_rng(0).standard_normal((1, 8, 4)).astype("float32")
    for s in (1, 5, 8):
        x = np.random.default_rng(s).standard_normal((1, s, 4)).astype("float32")
        np.testing.assert_allclose(ex["main"](x, table), x + table[:, :s], rtol=1e-6)
    with pytest.raises(TVMLiteError, match="shape"):
        ex["main"](np.zeros((1, 9, 4), "float32"), table)


HEADS = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 12, 6, 4), "float32")):
        n = T.int64()
        with R.dataflow():
            flat = R.reshape(x, R.shape([n * 12, 6, 4]))
            doubled = R.add(flat, flat)
            gv = R.reshape(doubled, R.shape([n, 12, 6, 4]))
            R.output(gv)
        return gv
"""


def test_a_kernel_whose_input_dims_are_expressions_of_its_output_dims() -> None:
    ex = tvmlite.build(tvmlite.parse(HEADS))
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, 12, 6, 4)).astype("float32")
        np.testing.assert_allclose(ex["main"](x), 2 * x, rtol=1e-6)


def spatial(body: str, extra: str = "") -> str:
    """A module over an NCHW input of symbolic batch and size."""
    return f"""
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3, "h", "w"), "float32"){extra}):
        with R.dataflow():
            gv = {body}
            R.output(gv)
        return gv
"""


def max_pool_ceil(x: np.ndarray) -> np.ndarray:
    """3x3 windows, stride 2, no padding, ceil mode (a last window may hang out)."""
    n, c, h, w = x.shape
    oh, ow = -(-(h - 3) // 2) + 1, -(-(w - 3) // 2) + 1
    p = np.full((n, c, 2 * oh + 1, 2 * ow + 1), -np.inf, "float32")
    p[:, :, :h, :w] = x
    out = np.full((n, c, oh, ow), -np.inf, "float32")
    for i in range(3):
        for j in range(3):
            out = np.maximum(out, p[:, :, i : i + 2 * oh : 2, j : j + 2 * ow : 2])
    return out


def adaptive_avg(x: np.ndarray, size: int) -> np.ndarray:
    n, c, h, w = x.shape
    out = np.zeros((n, c, size, size), "float32")
    for i in range(size):
        for j in range(size):
            rows = slice(i * h // size, -(-(i + 1) * h // size))
            cols = slice(j * w // size, -(-(j + 1) * w // size))
            out[:, :, i, j] = x[:, :, rows, cols].mean((2, 3))
    return out


def nearest(x: np.ndarray, size: int) -> np.ndarray:
    """Asymmetric coordinates, floor rounding: output i reads input i * in // out."""
    h, w = x.shape[2:]
    rows = np.floor(np.arange(size) * (h / size)).astype(int)
    cols = np.floor(np.arange(size) * (w / size)).astype(int)
    return x[:, :, rows][:, :, :, cols]


def bilinear(x: np.ndarray, size: int) -> np.ndarray:
    """Half-pixel coordinates, clamped at the borders."""

    def axis(n_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        c = np.maximum((np.arange(size) + 0.5) * (n_in / size) - 0.5, 0)
        lo = np.minimum(np.floor(c).astype(int), n_in - 1)
        return lo, np.minimum(lo + 1, n_in - 1), (c - np.floor(c)).astype("float32")

    r0, r1, fr = axis(x.shape[2])
    c0, c1, fc = axis(x.shape[3])
    top = x[:, :, r0] * (1 - fr)[:, None] + x[:, :, r1] * fr[:, None]
    return top[:, :, :, c0] * (1 - fc) + top[:, :, :, c1] * fc


SPATIAL = [
    (
        "max_pool_ceil",
        "R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], ceil_mode=True)",
        max_pool_ceil,
    ),
    (
        "global_avg_pool",
        "R.nn.adaptive_avg_pool2d(x, output_size=[1, 1])",
        lambda x: x.mean((2, 3), keepdims=True),
    ),
    (
        "adaptive_avg_pool_3",
        "R.nn.adaptive_avg_pool2d(x, output_size=[3, 3])",
        lambda x: adaptive_avg(x, 3),
    ),
    (
        "resize_nearest",
        'R.image.resize2d(x, R.shape([8, 8]), method="nearest_neighbor", '
        'coordinate_transformation_mode="asymmetric", rounding_method="floor")',
        lambda x: nearest(x, 8),
    ),
    (
        "resize_linear",
        'R.image.resize2d(x, R.shape([8, 8]), method="linear", '
        'coordinate_transformation_mode="half_pixel")',
        lambda x: bilinear(x, 8),
    ),
]


@pytest.mark.parametrize(("name", "body", "ref"), SPATIAL, ids=[c[0] for c in SPATIAL])
def test_pooling_and_resizing_over_symbolic_sizes(name: str, body: str, ref) -> None:  # noqa: ANN001
    ex = tvmlite.build(tvmlite.parse(spatial(body)))
    for n, h, w in ((1, 5, 7), (2, 12, 12), (1, 9, 4)):
        x = np.random.default_rng(h).standard_normal((n, 3, h, w)).astype("float32")
        np.testing.assert_allclose(ex["main"](x), ref(x), rtol=1e-5, atol=1e-5)


SCATTERS = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), i: R.Tensor(("m", 4), "int64"), u: R.Tensor(("m", 4), "float32"), rows: R.Tensor(("k",), "int64"), cols: R.Tensor(("k",), "int64"), v: R.Tensor(("k",), "float32")):
        with R.dataflow():
            a = R.scatter_elements(x, i, u, axis=0, reduction="add")
            b = R.index_put(x, (rows, cols), v, accumulate=True)
            R.output(a, b)
        return (a, b)
"""


@pytest.mark.parametrize(("n", "m", "k"), [(1, 1, 1), (5, 3, 7), (9, 9, 2)])
def test_scatters_over_symbolic_shapes(n: int, m: int, k: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 4)).astype("float32")
    i = rng.integers(-n, n, (m, 4)).astype("int64")
    u = rng.standard_normal((m, 4)).astype("float32")
    rows = rng.integers(0, n, (k,)).astype("int64")
    cols = rng.integers(0, 4, (k,)).astype("int64")
    v = rng.standard_normal((k,)).astype("float32")
    a, b = tvmlite.build(tvmlite.parse(SCATTERS))["main"](x, i, u, rows, cols, v)
    want_a = x.copy()
    for r in range(m):
        for c in range(4):
            want_a[i[r, c] % n, c] += u[r, c]
    want_b = x.copy()
    np.add.at(want_b, (rows, cols), v)
    np.testing.assert_allclose(a, want_a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, want_b, rtol=1e-5, atol=1e-6)


SEARCHES = """
@I.ir_module
class Module:
    @R.function
    def main(edges: R.Tensor(("e",), "float32"), x: R.Tensor(("n", 3), "float32")):
        with R.dataflow():
            buckets = R.bucketize(x, edges, right=True)
            where = R.nonzero(x)
            R.output(buckets, where)
        return (buckets, where)
"""


@pytest.mark.parametrize(("e", "n"), [(1, 1), (5, 4), (9, 7)])
def test_bucketize_and_nonzero_over_symbolic_shapes(e: int, n: int) -> None:
    rng = np.random.default_rng(e)
    edges = np.sort(rng.standard_normal(e)).astype("float32")
    x = np.where(rng.random((n, 3)) < 0.5, 0, rng.standard_normal((n, 3))).astype("float32")
    buckets, where = tvmlite.build(tvmlite.parse(SEARCHES))["main"](edges, x)
    np.testing.assert_array_equal(buckets, np.searchsorted(edges, x, side="right"))
    np.testing.assert_array_equal(where, np.stack(np.nonzero(x)))
