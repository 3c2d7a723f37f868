"""TVM's semantics in the LLVM backend: integer division and modulo flavours,
casts, every dtype, control flow, vectors, intrinsics, allocations, asserts."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.lowering import compile_prim_funcs
from tvmlite.runtime import PrimFuncKernel

RNG = np.random.default_rng(2)
DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
]


def kernel(text: str) -> PrimFuncKernel:
    func = tvmlite.parse(text)
    assert isinstance(func, tir.PrimFunc)
    return compile_prim_funcs({"main": func})["main"]


def _ints(dtype: str, n: int) -> np.ndarray:
    info = np.iinfo(dtype)
    low, high = max(int(info.min), -1000), min(int(info.max), 1000)
    return RNG.integers(low, high, n).astype(dtype)


INT_DIV = """
@T.prim_func
def main(A: T.Buffer((64,), "{d}"), B: T.Buffer((64,), "{d}"), C: T.Buffer((4, 64), "{d}")):
    for i in range(64):
        C[0, i] = T.floordiv(A[i], B[i])
        C[1, i] = T.floormod(A[i], B[i])
        C[2, i] = T.truncdiv(A[i], B[i])
        C[3, i] = T.truncmod(A[i], B[i])
"""


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32"])
def test_integer_division_flavours(dtype: str) -> None:
    a, b = _ints(dtype, 64), _ints(dtype, 64)
    b[b == 0] = 3
    c = np.zeros((4, 64), dtype)
    kernel(INT_DIV.format(d=dtype))(a, b, c)
    wide_a, wide_b = a.astype("int64"), b.astype("int64")
    trunc = np.fix(wide_a / wide_b).astype("int64")
    ref = [wide_a // wide_b, wide_a % wide_b, trunc, wide_a - trunc * wide_b]
    np.testing.assert_array_equal(c, np.array(ref).astype(dtype))


def test_division_by_zero_gives_zero_instead_of_a_crash() -> None:
    a = np.array([7, -7, -(2**31), 5] * 16, "int32")
    b = np.array([0, 0, -1, 0] * 16, "int32")
    c = np.zeros((4, 64), "int32")
    kernel(INT_DIV.format(d="int32"))(a, b, c)
    assert (c[:, 0] == 0).all() and (c[:, 1] == 0).all()
    assert c[0, 2] == c[2, 2] == -(2**31)  # INT_MIN // -1 wraps, as in NumPy


CAST = """
@T.prim_func
def main(A: T.Buffer((32,), "{s}"), B: T.Buffer((32,), "{d}")):
    for i in range(32):
        B[i] = T.Cast("{d}", A[i])
"""


def _values(dtype: str) -> np.ndarray:
    if dtype == "bool":
        return RNG.random(32) < 0.5
    if dtype.startswith("float"):
        return (RNG.standard_normal(32) * 50).astype(dtype)
    return _ints(dtype, 32)


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_casts_between_every_dtype(src: str, dst: str) -> None:
    a = _values(src)
    if dst.startswith("uint") and src.startswith("float"):
        a = np.abs(a)  # float -> unsigned of a negative value is undefined in TVM
    if dst.startswith(("int", "uint")) and src.startswith("float"):
        a = np.clip(a, -100, 100).astype(src)
    b = np.zeros(32, dst)
    kernel(CAST.format(s=src, d=dst))(a, b)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(b, a.astype(dst))


@pytest.mark.parametrize("dtype", DTYPES)
def test_copy_every_dtype(dtype: str) -> None:
    a, b = _values(dtype), np.zeros(32, dtype)
    kernel(CAST.format(s=dtype, d=dtype))(a, b)
    np.testing.assert_array_equal(b, a)


FLOAT_MATH = """
@T.prim_func
def main(A: T.Buffer((16,), "float64"), B: T.Buffer((16,), "float64"),
         C: T.Buffer((17, 16), "float64")):
    for i in range(16):
        x: T.float64 = A[i]
        C[0, i] = T.sinh(x) + T.cosh(x)
        C[1, i] = T.asin(x) + T.acos(x) * T.atan(x)
        C[2, i] = T.atan2(x, B[i])
        C[3, i] = T.log1p(T.fabs(x)) + T.exp2(x) + T.log2(T.fabs(x) + 1.0) + T.log10(x + 2.0)
        C[4, i] = T.fmod(x * 7.0, B[i])
        C[5, i] = T.sin(x) + T.cos(x) + T.tan(x)
        C[6, i] = T.asinh(x) + T.atanh(x * 0.5) + T.acosh(T.fabs(x) + 1.0)
        C[7, i] = T.round(x * 4.0)
        C[8, i] = T.hypot(x, B[i])
        C[9, i] = T.sigmoid(x) + T.rsqrt(T.fabs(x) + 1.0)
        C[10, i] = T.Cast("float64", T.isinf(B[i] / x)) + T.Cast("float64", T.isfinite(B[i] / x))
        C[11, i] = T.max_value("float64") * 0.0 + T.Cast("float64", T.min_value("int32"))
        C[12, i] = T.Select(x > 0.0, x, -x) + T.if_then_else(x < 0.0, 1.0, 2.0)
        C[13, i] = T.pow(T.fabs(x), B[i])
        C[14, i] = T.trunc(x * 3.0) + T.floor(x) + T.ceil(x)
        C[15, i] = T.Cast("float64", T.floordiv(x, B[i]))
        C[16, i] = T.floormod(x, B[i])
"""


def test_float64_math_intrinsics() -> None:
    a = RNG.uniform(-0.9, 0.9, 16)
    a[0] = 0.0
    b = RNG.uniform(0.5, 2, 16) * RNG.choice([-1, 1], 16)
    c = np.zeros((17, 16))
    kernel(FLOAT_MATH)(a, b, c)
    with np.errstate(divide="ignore"):
        ratio = b / a
    ref = [
        np.sinh(a) + np.cosh(a),
        np.arcsin(a) + np.arccos(a) * np.arctan(a),
        np.arctan2(a, b),
        np.log1p(abs(a)) + np.exp2(a) + np.log2(abs(a) + 1) + np.log10(a + 2),
        np.fmod(a * 7, b),
        np.sin(a) + np.cos(a) + np.tan(a),
        np.arcsinh(a) + np.arctanh(a * 0.5) + np.arccosh(abs(a) + 1),
        np.round(a * 4),
        np.hypot(a, b),
        1 / (1 + np.exp(-a)) + 1 / np.sqrt(abs(a) + 1),
        np.isinf(ratio) + 1.0 * np.isfinite(ratio),
        np.full(16, -(2.0**31)),
        abs(a) + np.where(a < 0, 1, 2),
        abs(a) ** b,
        np.trunc(a * 3) + np.floor(a) + np.ceil(a),
        np.floor(a / b),
        a - np.floor(a / b) * b,
    ]
    np.testing.assert_allclose(c, np.array(ref), rtol=1e-12, atol=1e-12)


BITS = """
@T.prim_func
def main(A: T.Buffer((32,), "{d}"), C: T.Buffer((5, 32), "{d}")):
    for i in range(32):
        C[0, i] = T.popcount(A[i])
        C[1, i] = T.clz(A[i])
        C[2, i] = T.bitwise_not(A[i])
        C[3, i] = T.shift_right(A[i], T.{d}(2))
        C[4, i] = T.reinterpret("{d}", A[i])
"""


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_bit_intrinsics(dtype: str) -> None:
    a = _ints(dtype, 32)
    a[0] = 0
    c = np.zeros((5, 32), dtype)
    kernel(BITS.format(d=dtype))(a, c)
    bits = np.dtype(dtype).itemsize * 8
    unsigned = a.astype(f"uint{bits}")
    ones = np.array([bin(int(x)).count("1") for x in unsigned])
    lead = np.array([bits - int(x).bit_length() for x in unsigned])
    ref = [ones, lead, ~a, a >> 2, a]
    np.testing.assert_array_equal(c, np.array(ref).astype(dtype))


CONTROL = """
@T.prim_func
def main(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        n = T.alloc_local((1,), "int32")
        n[0] = 0
        while n[0] < 100:
            n[0] = n[0] + 1
            if n[0] == A[i]:
                break
        B[i] = n[0]
    for i in range(16):
        if A[i] % 2 == 0:
            continue
        B[i] = B[i] + 1000
"""


def test_while_break_continue_alloc_local() -> None:
    a, b = RNG.integers(-5, 50, 16).astype("int32"), np.zeros(16, "int32")
    kernel(CONTROL)(a, b)
    ref = np.where((a >= 1) & (a <= 100), a, 100) + np.where(a % 2 == 0, 0, 1000)
    np.testing.assert_array_equal(b, ref)


VECTOR = """
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"),
         C: T.Buffer((8,), "float32")):
    for i in range(8):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4)
    for i in range(2):
        C[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i, 8, 4)]
"""


def test_ramp_and_broadcast_vectors() -> None:
    a, b, c = (
        RNG.standard_normal(32).astype("float32"),
        np.zeros(32, "float32"),
        np.zeros(8, "float32"),
    )
    kernel(VECTOR)(a, b, c)
    np.testing.assert_array_equal(b, a * 2)
    np.testing.assert_array_equal(c, np.concatenate([a[0::8], a[1::8]]))


HEAP = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    big = T.alloc_buffer((70000,), "float32")
    dyn = T.alloc_buffer((n,), "float32")
    for i in range(n):
        dyn[i] = A[i] + T.float32(1)
        big[i % 70000] = dyn[i]
    for i in range(n):
        B[i] = big[i % 70000] * T.float32(2)
"""


def test_heap_and_dynamic_allocations() -> None:
    k = kernel(HEAP)
    for n in (0, 10, 1000):
        a, b = RNG.standard_normal(n).astype("float32"), np.zeros(n, "float32")
        k(a, b)
        np.testing.assert_array_equal(b, (a + 1) * 2)


ASSERT = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), k: T.int32):
    assert k > 0, "k must be positive"
    assert k < 10, "k must be small"
    for i in range(4):
        A[i] = T.Cast("float32", k)
"""


def test_assert_raises_with_its_message() -> None:
    k, a = kernel(ASSERT), np.zeros(4, "float32")
    with pytest.raises(tvmlite.TVMLiteError, match="k must be positive"):
        k(a, 0)
    with pytest.raises(tvmlite.TVMLiteError, match="k must be small"):
        k(a, 10)
    k(a, 3)
    np.testing.assert_array_equal(a, [3, 3, 3, 3])
