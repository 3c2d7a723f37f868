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
