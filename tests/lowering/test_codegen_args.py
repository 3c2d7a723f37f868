"""Compiled prim functions check their arguments before touching memory and
name the parameter, the expectation and what they got."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.lowering import compile_prim_funcs
from tvmlite.runtime import PrimFuncKernel

STATIC = """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32"), s: T.float32):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(4, 16):
        B[i, j] = A[i, j] * s
"""
SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    m = T.int64()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (m,), "float32")
    C = T.match_buffer(c, (n, m), "float32")
    for i, j in T.grid(n, m):
        C[i, j] = A[i, j] + B[j]
"""
STRIDED = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    s0 = T.int64()
    s1 = T.int64()
    A = T.match_buffer(a, (n, 3), "float32", strides=(s0, s1))
    B = T.match_buffer(b, (n, 3), "float32")
    for i, j in T.grid(n, 3):
        B[i, j] = A[i, j]
"""


def kernel(text: str) -> PrimFuncKernel:
    func = tvmlite.parse(text)
    assert isinstance(func, tir.PrimFunc)
    return compile_prim_funcs({"main": func})["main"]


@pytest.fixture(scope="module")
def static() -> PrimFuncKernel:
    return kernel(STATIC)


@pytest.fixture(scope="module")
def symbolic() -> PrimFuncKernel:
    return kernel(SYMBOLIC)


def z(*shape: int, dtype: str = "float32") -> np.ndarray:
    return np.zeros(shape, dtype)


def test_good_call_writes_in_place(static: PrimFuncKernel) -> None:
    a, b = np.ones((4, 16), "float32"), z(4, 16)
    assert static(a, b, 2.5) is None
    assert (b == 2.5).all()
    static(a, b, np.float32(1.5))
    static(a, b, np.array(3.0, "float32"))
    assert (b == 3).all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((z(4, 16), z(4, 16)), r"takes 3 arguments \(A, B, s\), got 2"),
        ((z(4, 16), z(4, 16), 1.0, 2.0), "takes 3 arguments"),
        (([[0.0] * 16] * 4, z(4, 16), 1.0), r"parameter 'A': expected a tensor \(numpy.ndarray"),
        ((z(4, 16, dtype="float64"), z(4, 16), 1.0), "'A': expected dtype float32, got float64"),
        ((z(64), z(4, 16), 1.0), "'A': expected 2 dimensions, got 1"),
        ((z(4, 16), z(4, 8), 1.0), r"parameter 'B': expected shape \(4, 16\), got \(4, 8\)"),
        ((z(4, 16), z(4, 16), "x"), "parameter 's': expected a float32 scalar, got str"),
        ((z(4, 16), z(16, 4).T, 1.0), "parameter 'B': expected a C-contiguous array"),
        ((z(4, 32)[:, ::2], z(4, 16), 1.0), "parameter 'A': expected a C-contiguous array"),
    ],
)
def test_bad_arguments_raise_before_the_call(
    static: PrimFuncKernel, args: tuple[object, ...], message: str
) -> None:
    with pytest.raises(TVMLiteError, match=message):
        static(*args)


def test_outputs_must_be_writable_and_must_not_alias(static: PrimFuncKernel) -> None:
    a, b = z(4, 16), z(4, 16)
    b.flags.writeable = False
    with pytest.raises(TVMLiteError, match="'B': the array is read-only"):
        static(a, b, 1.0)
    with pytest.raises(TVMLiteError, match="'B': the array overlaps parameter 'A'"):
        static(a, a, 1.0)


def test_symbolic_dims_are_solved_then_checked(symbolic: PrimFuncKernel) -> None:
    a, b = np.arange(15, dtype="float32").reshape(3, 5), np.ones(5, "float32")
    c = z(3, 5)
    symbolic(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(TVMLiteError, match=r"parameter 'b': expected shape \(5,\), got \(4,\)"):
        symbolic(a, z(4), c)
    with pytest.raises(TVMLiteError, match=r"'c': expected shape \(3, 5\), got \(2, 5\).*n = 3"):
        symbolic(a, b, z(2, 5))


def test_scalar_range_and_type_checks() -> None:
    k = kernel(
        """
@T.prim_func
def main(A: T.Buffer((4,), "int8"), v: T.int8):
    for i in range(4):
        A[i] = v
"""
    )
    a = z(4, dtype="int8")
    k(a, -128)
    assert (a == -128).all()
    with pytest.raises(TVMLiteError, match="'v': value 300 does not fit in int8"):
        k(a, 300)
    with pytest.raises(TVMLiteError, match="'v': expected a int8 scalar, got float"):
        k(a, 1.5)


def test_declared_strides_accept_strided_views() -> None:
    k = kernel(STRIDED)
    base = np.arange(40, dtype="float32").reshape(5, 8)
    view = base[:, 1:7:2]  # strides (8, 2) in elements
    out = z(5, 3)
    k(view, out)
    np.testing.assert_array_equal(out, view)
