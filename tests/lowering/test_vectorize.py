"""`T.vectorized` loops become vector code at the target's full width (zmm
registers with AVX-512), with a scalar tail; loops that cannot be vectorized
(a carried dependence, a stride, a call) still compute the right thing.
`T.unroll` loops are unrolled."""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering.codegen.cpu_traits import wide_vector_bits

ADD_RELU = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in T.vectorized(n):
        C[i] = T.max(A[i] + B[i], T.float32(0))
"""


def build(source: str):
    return tvmlite.build(tvmlite.parse(source), cache=False)


@pytest.mark.skipif(wide_vector_bits() != 512, reason="the host has no AVX-512 (no zmm)")
def test_vectorized_fp32_loop_uses_512_bit_registers() -> None:
    asm = build(ADD_RELU).assembly()
    assert re.search(r"vmaxps\s+.*zmm", asm), "no 512-bit vmaxps in the kernel"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86 features")
def test_avx512_in_the_target_features_means_512_bit_vectors() -> None:
    mod = tvmlite.parse(ADD_RELU)
    wide = tvmlite.build(mod, target="llvm -mcpu=x86-64 -mattr=+avx512f", cache=False)
    assert '"prefer-vector-width"="512"' in wide.llvm_ir()
    plain = tvmlite.build(mod, target="llvm -mcpu=x86-64 -mattr=+avx2", cache=False)
    assert "prefer-vector-width" not in plain.llvm_ir()  # LLVM's choice for the CPU


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 63, 64, 65, 1000, 4111])
def test_extents_that_do_not_divide_the_width(n: int) -> None:
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    c = np.full(n, np.nan, "float32")
    build(ADD_RELU)["main"](a, b, c)
    np.testing.assert_array_equal(c, np.maximum(a + b, 0))


PREFIX_SUM = """
@T.prim_func
def main(A: T.Buffer((100,), "float64"), B: T.Buffer((100,), "float64")):
    B[0] = A[0]
    for i in T.vectorized(1, 100):
        B[i] = B[i - 1] + A[i]
"""
STRIDED = """
@T.prim_func
def main(A: T.Buffer((300,), "float32"), B: T.Buffer((100,), "float32")):
    for i in T.vectorized(100):
        B[i] = A[i * 3] * T.float32(2)
"""
CALLS = """
@T.prim_func
def main(A: T.Buffer((77,), "float32"), B: T.Buffer((77,), "float32")):
    for i in T.vectorized(77):
        B[i] = T.exp(A[i]) + T.tanh(A[i])
"""


def test_carried_dependence_stays_correct() -> None:
    a = np.random.default_rng(0).standard_normal(100)
    b = np.zeros(100)
    build(PREFIX_SUM)["main"](a, b)
    np.testing.assert_allclose(b, np.cumsum(a), rtol=1e-12)


def test_strided_access_stays_correct() -> None:
    a = np.random.default_rng(1).standard_normal(300).astype("float32")
    b = np.zeros(100, "float32")
    build(STRIDED)["main"](a, b)
    np.testing.assert_array_equal(b, a[::3] * 2)


def test_calls_in_a_vectorized_loop() -> None:
    a = np.random.default_rng(2).standard_normal(77).astype("float32")
    b = np.zeros(77, "float32")
    build(CALLS)["main"](a, b)
    np.testing.assert_allclose(b, np.exp(a) + np.tanh(a), rtol=2e-6, atol=1e-6)


UNROLL = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(8):
        for j in KIND(8):
            B[i, j] = T.cos(A[i, j * 2])
"""


def _cos_calls(source: str) -> int:
    """Copies of the body: each calls llvm.cos once (float32 exp would not do:
    it is inline arithmetic, lowering/codegen/mathlib/)."""
    text = build(source).llvm_ir()
    return len(re.findall(r"call [^@]*@llvm\.cos\.", text))


def test_unroll_copies_the_body() -> None:
    assert _cos_calls(UNROLL.replace("KIND", "T.unroll")) == 8
    assert _cos_calls(UNROLL.replace("KIND", "range")) == 1  # a serial loop stays one loop


@pytest.mark.parametrize("kind", ["T.unroll", "range"])
def test_unrolled_loop_computes_the_same(kind: str) -> None:
    a = np.random.default_rng(3).standard_normal((8, 16)).astype("float32")
    b = np.zeros((8, 8), "float32")
    build(UNROLL.replace("KIND", kind))["main"](a, b)
    np.testing.assert_allclose(b, np.cos(a[:, ::2]), rtol=1e-6, atol=1e-7)


UNROLL_SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "int32")
    B = T.match_buffer(b, (n,), "int32")
    for i in T.unroll(n):
        B[i] = A[i] * 3 + i
"""


@pytest.mark.parametrize("n", [0, 1, 5, 130])
def test_unroll_with_an_extent_known_at_run_time(n: int) -> None:
    a = np.arange(n, dtype="int32") * 7
    b = np.zeros(n, "int32")
    build(UNROLL_SYMBOLIC)["main"](a, b)
    np.testing.assert_array_equal(b, a * 3 + np.arange(n))
