"""Kernels that TVM's LegalizeOps produced (copied into data/ops/), called directly
as prim functions on random inputs and checked against NumPy references."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.lowering import compile_prim_funcs

DATA = Path(__file__).parent / "data" / "ops"
RNG = np.random.default_rng(1)
Kernel = Callable[..., None]


def _kernel(name: str) -> Kernel:
    mod = tvmlite.parse_file(DATA / f"{name}.tvms")
    prims = {k: f for k, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}
    (key,) = prims
    return compile_prim_funcs(prims)[key]


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype("float32")


def _i32(low: int, high: int, *shape: int) -> np.ndarray:
    return RNG.integers(low, high, shape).astype("int32")


def check_nn_conv2d() -> None:
    x, w, out = _f32(1, 3, 8, 8), _f32(4, 3, 3, 3), np.zeros((1, 4, 6, 6), "float32")
    _kernel("nn_conv2d")(x, w, out)
    ref = np.zeros_like(out)
    for i in range(6):
        for j in range(6):
            patch = x[0, :, i : i + 3, j : j + 3]
            ref[0, :, i, j] = (w * patch).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def check_argmax_axis1() -> None:
    x, out = _f32(3, 4, 5), np.zeros((3, 5), "int64")
    _kernel("argmax_axis1")(x, out)
    np.testing.assert_array_equal(out, x.argmax(1))


def check_nn_layer_norm() -> None:
    x, gamma, beta = _f32(2, 5, 16), _f32(16), _f32(16)
    out = np.zeros_like(x)
    _kernel("nn_layer_norm")(x, gamma, beta, out)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    ref = (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def check_scatter_elements() -> None:
    x, z = _f32(4, 5), _f32(2, 5)
    idx = np.array([[0, 1, 2, 3, -1], [2, -4, 0, 1, 3]], "int64")
    out = np.zeros_like(x)
    _kernel("scatter_elements")(x, idx, z, out)
    ref = x.copy()
    for i in range(2):
        for j in range(5):
            ref[idx[i, j] % 4, j] = z[i, j]
    np.testing.assert_array_equal(out, ref)


def check_bucketize() -> None:
    edges = np.sort(_f32(4))
    x = np.concatenate([_f32(6), edges[:2]])
    out = np.zeros(8, "int64")
    _kernel("bucketize")(edges, x, out)  # the kernel takes the boundaries first
    np.testing.assert_array_equal(out, np.searchsorted(edges, x, side="left"))


def check_binary_floor_divide_int32() -> None:
    x = _i32(-100, 100, 4, 8)
    y = _i32(1, 9, 4, 8) * np.where(RNG.random((4, 8)) < 0.5, -1, 1).astype("int32")
    out = np.zeros_like(x)
    _kernel("binary_floor_divide_int32")(x, y, out)
    np.testing.assert_array_equal(out, np.floor_divide(x, y))


def check_binary_mod_int32() -> None:
    x = _i32(-100, 100, 4, 8)
    y = _i32(1, 9, 4, 8) * np.where(RNG.random((4, 8)) < 0.5, -1, 1).astype("int32")
    out = np.zeros_like(x)
    _kernel("binary_mod_int32")(x, y, out)
    np.testing.assert_array_equal(out, np.fmod(x, y))  # R.mod legalizes to T.truncmod


def check_astype_f32_to_f16() -> None:
    x, out = _f32(4, 8) * 1000, np.zeros((4, 8), "float16")
    _kernel("astype_f32_to_f16")(x, out)
    np.testing.assert_array_equal(out, x.astype("float16"))


def check_astype_f32_to_bool() -> None:
    x = _f32(4, 8)
    x[0, :4] = [0.0, -0.0, np.nan, 1e-30]
    out = np.zeros((4, 8), "bool")
    _kernel("astype_f32_to_bool")(x, out)
    np.testing.assert_array_equal(out, x.astype("bool"))


def check_unary_isnan() -> None:
    x = _f32(4, 8)
    x[1, :3] = [np.nan, np.inf, -np.inf]
    out = np.zeros((4, 8), "bool")
    _kernel("unary_isnan")(x, out)
    np.testing.assert_array_equal(out, np.isnan(x))


def check_dyn_add_bcast() -> None:
    add = _kernel("dyn_add_bcast")
    for n in (1, 7, 100):
        x, y, out = _f32(n, 16), _f32(16), np.zeros((n, 16), "float32")
        add(x, y, out)
        np.testing.assert_array_equal(out, x + y)


def check_dyn_take() -> None:
    take = _kernel("dyn_take")
    x = _f32(6, 4)
    idx = np.array([5, 0, 3, 3, 1], "int64")
    out = np.zeros((5, 4), "float32")
    take(x, idx, out)
    np.testing.assert_array_equal(out, x[idx])


def check_dyn_split_tuple() -> None:
    x = _f32(3, 16)
    a, b = np.zeros((3, 8), "float32"), np.zeros((3, 8), "float32")
    _kernel("dyn_split_tuple")(x, a, b)
    np.testing.assert_array_equal(a, x[:, :8])
    np.testing.assert_array_equal(b, x[:, 8:])


def check_nn_max_pool2d() -> None:
    x, out = _f32(1, 3, 8, 8), np.zeros((1, 3, 4, 4), "float32")
    _kernel("nn_max_pool2d")(x, out)
    np.testing.assert_array_equal(out, x.reshape(1, 3, 4, 2, 4, 2).max(axis=(3, 5)))


def check_nn_gelu() -> None:
    x, out = _f32(2, 3, 8), np.zeros((2, 3, 8), "float32")
    _kernel("nn_gelu")(x, out)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(out, 0.5 * x * (1 + erf(x / np.sqrt(2))), rtol=1e-5, atol=1e-6)


def check_unary_tanh() -> None:
    x, out = _f32(4, 16) * 4, np.zeros((4, 16), "float32")
    _kernel("unary_tanh")(x, out)
    np.testing.assert_allclose(out, np.tanh(x), rtol=1e-5, atol=1e-6)


def check_matmul_2d() -> None:
    x, y, out = _f32(4, 8), _f32(8, 6), np.zeros((4, 6), "float32")
    _kernel("matmul_2d")(x, y, out)
    np.testing.assert_allclose(out, x @ y, rtol=1e-5, atol=1e-5)


def check_sum_axis1() -> None:
    x, out = _f32(3, 4, 5), np.zeros((3, 5), "float32")
    _kernel("sum_axis1")(x, out)
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5, atol=1e-6)


def check_gather_nd() -> None:
    x = _f32(3, 4, 2)
    idx = np.array([[0, 1], [2, 3], [1, 0], [0, 0], [2, 2]], "int64")
    out = np.zeros((5, 2), "float32")
    _kernel("gather_nd")(x, idx, out)
    np.testing.assert_array_equal(out, x[idx[:, 0], idx[:, 1]])


def check_right_shift_int32() -> None:
    x, y = _i32(-1000, 1000, 4, 8), _i32(0, 8, 4, 8)
    out = np.zeros_like(x)
    _kernel("right_shift_int32")(x, y, out)
    np.testing.assert_array_equal(out, x >> y)


def check_nn_pad_reflect() -> None:
    x, out = _f32(2, 5), np.zeros((2, 9), "float32")
    _kernel("nn_pad_reflect")(x, out)
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (2, 2)), mode="reflect"))


def check_triu_k1() -> None:
    x, out = _f32(2, 4, 4), np.zeros((2, 4, 4), "float32")
    _kernel("triu_k1")(x, out)
    np.testing.assert_array_equal(out, np.triu(x, 1))


def check_binary_power() -> None:
    x, y = np.abs(_f32(4, 8)) + 0.1, _f32(8)
    out = np.zeros((4, 8), "float32")
    _kernel("binary_power")(x, y, out)
    np.testing.assert_allclose(out, x**y, rtol=1e-5)


def check_binary_floor_mod_f32() -> None:
    x, y = _f32(4, 8) * 10, _f32(4, 8) + 0.05
    out = np.zeros((4, 8), "float32")
    _kernel("binary_floor_mod_f32")(x, y, out)
    np.testing.assert_allclose(out, x - np.floor(x / y) * y, rtol=1e-5, atol=1e-5)


def check_binary_multiply_float16() -> None:
    x, y = _f32(4, 8).astype("float16"), _f32(4, 8).astype("float16")
    out = np.zeros((4, 8), "float16")
    _kernel("binary_multiply_float16")(x, y, out)
    np.testing.assert_array_equal(out, x * y)


CASES: dict[str, Callable[[], None]] = {
    name[len("check_") :]: fn for name, fn in dict(globals()).items() if name.startswith("check_")
}


def test_every_copied_kernel_has_a_check() -> None:
    assert sorted(CASES) == sorted(p.stem for p in DATA.glob("*.tvms"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_legalized_kernel(name: str) -> None:
    CASES[name]()
