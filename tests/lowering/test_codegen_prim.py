"""The corpus's hand-written prim functions, compiled and run on random inputs,
checked against NumPy formulas (sources copied into data/prim/)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering import compile_prim_funcs

DATA = Path(__file__).parent / "data" / "prim"
RNG = np.random.default_rng(0)
erf = np.vectorize(math.erf)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype("float32")


def _run(name: str, *args: object) -> None:
    mod = tvmlite.parse_file(DATA / f"{name}.tvms")
    compile_prim_funcs({"main": mod["main"]})["main"](*args)


def check_vector_add() -> None:
    a, b, c = _f32(64), _f32(64), np.zeros(64, "float32")
    _run("vector_add", a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def check_axis_spatial_reduce_fused() -> None:
    a, rows, cols = _f32(8, 6), np.zeros(8, "float32"), np.zeros(6, "float32")
    _run("axis_spatial_reduce_fused", a, rows, cols)
    np.testing.assert_allclose(rows, a.sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cols, a.sum(0), rtol=1e-5, atol=1e-6)


def check_float16_cast_compute() -> None:
    a = _f32(16).astype("float16")
    b, c = np.zeros(16, "float16"), np.zeros(16, "float32")
    _run("float16_cast_compute", a, b, c)
    np.testing.assert_array_equal(b, a * np.float16(2) + np.float16(0.5))
    np.testing.assert_allclose(c, a.astype("float32") * 0.25)


def check_float_intrinsics() -> None:
    x = (_f32(32) * 3).astype("float32")
    b, c = np.zeros(32, "float32"), np.zeros(32, "int32")
    _run("float_intrinsics", x, b, c)
    ref = (
        np.sqrt(np.abs(x))
        + np.exp(np.minimum(x, 2))
        - np.log(np.maximum(x * x, 0.5))
        + np.tanh(x) / (1 + np.exp(-x))
        + np.abs(x) ** 1.5
        + np.floor(x) * np.ceil(x)
        + 1 / np.sqrt(x * x + 1)
        + erf(x)
    )
    np.testing.assert_allclose(b, ref, rtol=1e-4, atol=1e-4)
    ints = np.floor(x * np.float32(4)).astype("int32") + np.trunc(x * np.float32(3)).astype("int32")
    np.testing.assert_array_equal(c, ints)


def check_if_elif_else_stmt() -> None:
    a = RNG.integers(-30, 30, 32).astype("int32")
    b = np.zeros(32, "int32")
    _run("if_elif_else_stmt", a, b)
    i = np.arange(32)
    ref = np.where(a > 10, a * 2, np.where(a < -10, -a, np.where(i % 2 == 0, a + 100, a)))
    np.testing.assert_array_equal(b, ref)


def check_if_then_else_conv1d_pad() -> None:
    a, w, b = _f32(16), _f32(3), np.zeros(16, "float32")
    _run("if_then_else_conv1d_pad", a, w, b)
    padded = np.pad(a, 1)
    ref = np.array([sum(padded[i + k] * w[k] for k in range(3)) for i in range(16)])
    np.testing.assert_allclose(b, ref, rtol=1e-5, atol=1e-6)


def check_int_arith() -> None:
    a = RNG.integers(-1000, 1000, 32).astype("int32")
    b = RNG.integers(1, 50, 32).astype("int32") * RNG.choice([-1, 1], 32).astype("int32")
    c = np.zeros((7, 32), "int32")
    _run("int_arith", a, b, c)
    masked = a & 255
    ref = [
        np.floor_divide(a, b),
        np.mod(a, b),
        np.fix(a / b).astype("int32"),
        np.fmod(a, b),
        (masked << 2) | (masked >> 1),
        np.maximum(a, b) * np.minimum(a, b) + np.abs(a),
        (a ^ b) + ~b,
    ]
    np.testing.assert_array_equal(c, np.array(ref))


def check_let_bindings() -> None:
    a, b = _f32(16), np.zeros(16, "float32")
    _run("let_bindings", a, b)
    v = np.arange(1, 17)
    np.testing.assert_allclose(b, a * a + 1 + (v * v).astype("float32"), rtol=1e-6)


def check_loop_kinds() -> None:
    a, b = _f32(8, 16), np.zeros((8, 16), "float32")
    _run("loop_kinds", a, b)
    ref = a * 2 + 1
    ref[2:6, 0] -= 100  # T.serial(2, 6): start and stop
    np.testing.assert_allclose(b, ref, rtol=1e-6)


def check_match_buffer_subregion() -> None:
    a, b = _f32(4, 16), np.zeros(4, "float32")
    _run("match_buffer_subregion", a, b)
    np.testing.assert_allclose(b, (a * 0.5).sum(1), rtol=1e-5, atol=1e-6)


def check_matmul_blocks() -> None:
    a, b, c = _f32(16, 8), _f32(8, 12), np.zeros((16, 12), "float32")
    _run("matmul_blocks", a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def check_matmul_match_buffer_int64() -> None:
    a, b, c = _f32(8, 4), _f32(4, 6), np.zeros((8, 6), "float32")
    _run("matmul_match_buffer_int64", a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def check_multi_output_minmax() -> None:
    a, lo, hi = _f32(5, 7), np.zeros(5, "float32"), np.zeros(5, "float32")
    _run("multi_output_minmax", a, lo, hi)
    np.testing.assert_array_equal(lo, a.min(1))
    np.testing.assert_array_equal(hi, a.max(1))


def check_sblock_attr_argmax_select() -> None:
    a, idx, val = _f32(4, 9), np.zeros(4, "int32"), np.zeros(4, "float32")
    _run("sblock_attr_argmax_select", a, idx, val)
    np.testing.assert_array_equal(idx, a.argmax(1))
    np.testing.assert_array_equal(val, a.max(1))


def check_scalar_params_assert() -> None:
    a, b = _f32(16), np.zeros(16, "float32")
    _run("scalar_params_assert", a, b, 5, 3.0)
    np.testing.assert_allclose(b, np.where(np.arange(16) < 5, 3 * a, a), rtol=1e-6)
    with pytest.raises(tvmlite.TVMLiteError, match="n out of range"):
        _run("scalar_params_assert", a, b, 17, 3.0)


def check_softmax_alloc_buffer() -> None:
    a, b = _f32(4, 16), np.zeros((4, 16), "float32")
    _run("softmax_alloc_buffer", a, b)
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def check_symbolic_shape() -> None:
    for n in (1, 5, 33):
        a, b = _f32(n, 8), np.zeros(n, "float32")
        _run("symbolic_shape", a, b)
        np.testing.assert_array_equal(b, a.max(1))


def check_transpose_int64_autoregion() -> None:
    a, b = _f32(4, 6), np.zeros((6, 4), "float32")
    _run("transpose_int64_autoregion", a, b)
    np.testing.assert_array_equal(b, a.T)


CASES: dict[str, Callable[[], None]] = {
    name[len("check_") :]: fn for name, fn in dict(globals()).items() if name.startswith("check_")
}


def test_every_corpus_case_has_a_check() -> None:
    assert sorted(CASES) == sorted(p.stem for p in DATA.glob("*.tvms"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_prim_case(name: str) -> None:
    CASES[name]()
