# ruff: noqa: E501  (TVMScript texts)
"""The float32 math library (lowering/codegen/mathlib/): each function, in a
vectorized loop and in scalar code, within its ulp bound of the float64 result
on sampled inputs (every binade, both signs, the edges of each piece), and
C99's result exactly at infinities, zeros, subnormals, NaN and the overflow and
underflow boundaries. benchmarks/mathlib_accuracy.py measures the same over
every float32 (docs/mathlib.md)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

import tvmlite
from tvmlite.transform import PassContext

KERNEL = """
@T.prim_func
def main(A: T.Buffer(({n},), "float32"), C: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32")):
    for i in T.{kind}({n}):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = {expr}
"""
KINDS = ["vectorized", "serial"]


def run(expr: str, kind: str, a: np.ndarray, c: np.ndarray | None = None) -> np.ndarray:
    """`expr` of A[vi] (and C[vi]) over a loop of `kind`; the default schedule is off
    so that a serial loop stays scalar code."""
    text = KERNEL.format(n=a.size, kind=kind, expr=expr)
    with PassContext(config={"tir.default_cpu_schedule": False}):
        main = tvmlite.build(tvmlite.parse(text), cache=False)["main"]
    out = np.empty_like(a)
    main(a, np.zeros_like(a) if c is None else c, out)
    return out


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in float32 ulps at `want` (float64), where `want` is a finite
    nonzero float32 number (elsewhere 0: `special` checks those). An infinity
    counts as 2^128, the float32 after the largest: one ulp beyond it."""
    with np.errstate(over="ignore", under="ignore"):
        ordinary = np.isfinite(want.astype(np.float32)) & (want.astype(np.float32) != 0)
    wide = got.astype(np.float64)
    wide = np.where(np.isinf(wide), np.copysign(2.0**128, wide), wide)
    exponent = np.maximum(np.frexp(np.abs(want))[1] - 1, -126)
    with np.errstate(invalid="ignore"):
        err = np.abs(wide - want) / np.ldexp(1.0, exponent - 23)
    return np.where(ordinary, err, 0.0)


def assert_special(got: np.ndarray, want: np.ndarray, *inputs: np.ndarray) -> None:
    """Where the float64 result rounds to an infinity, a zero or NaN, exactly that
    (sign of zero included)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        w = want.astype(np.float32)
    special = ~np.isfinite(w) | (w == 0)
    same = (got == w) & (np.signbit(got) == np.signbit(w)) | np.isnan(got) & np.isnan(w)
    bad = special & ~same
    assert not bad.any(), [
        (*(float(x[i]) for x in inputs), got[i]) for i in np.flatnonzero(bad)[:5]
    ]
    assert not np.isnan(got[~special]).any()


def samples(edges: list[float], seed: int = 0) -> np.ndarray:
    """Special values, the given edges and their neighbours, random bit patterns
    (every binade and both signs) and random values of moderate size."""
    rng = np.random.default_rng(seed)
    special = [
        np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        1e-45,
        -1e-45,
        1.1754942e-38,
        3.4028235e38,
        -3.4028235e38,
    ]
    near = np.array(edges + [-e for e in edges], np.float32)
    neighbours = np.concatenate(
        [np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))]
    )
    bits = rng.integers(0, 1 << 32, 6000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    moderate = rng.uniform(-12, 12, 4000)
    with np.errstate(invalid="ignore"):  # NaN patterns among the bits
        return np.concatenate([special, near, neighbours, bits, moderate]).astype(np.float32)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


# name: (TIR expression, float64 reference, largest ulp error allowed, edges worth sampling)
UNARY: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray], float, list[float]]] = {
    "exp": (
        "T.exp(A[vi])",
        np.exp,
        1.0,
        [88.72, 88.7228, 89.0, 89.5, 87.33, 103.97, 104.0, 104.7, 110.0],
    ),
    "exp2": (
        "T.exp2(A[vi])",
        np.exp2,
        1.0,
        [127.9, 128.0, 128.5, 126.0, 149.0, 149.5, 150.0, 151.0, 0.5],
    ),
    "log": ("T.log(A[vi])", np.log, 1.0, [1.0, 0.70710677, 1.4142135, 2.0, 0.5, 1e-40]),
    "log2": ("T.log2(A[vi])", np.log2, 1.1, [1.0, 0.70710677, 1.4142135, 2.0, 0.5, 1e-40]),
    "log10": ("T.log10(A[vi])", np.log10, 1.0, [1.0, 10.0, 100.0, 0.70710677, 1e-40]),
    "log1p": ("T.log1p(A[vi])", np.log1p, 1.0, [1.0, 0.41421357, 0.29289323, 1e-8, 1e-30, 2.0]),
    "tanh": ("T.tanh(A[vi])", np.tanh, 1.1, [0.875, 9.0, 9.1, 1e-5, 44.0, 45.0]),
    "erf": ("T.erf(A[vi])", _erf, 1.0, [0.875, 1.5, 3.92, 3.9, 4.0, 1e-5]),
    "sigmoid": ("T.sigmoid(A[vi])", _sigmoid, 3.0, [87.3, 88.7, 89.0, 103.0, 104.0, 110.0]),
    "rsqrt": ("T.rsqrt(A[vi])", lambda x: 1 / np.sqrt(x), 1.5, [1.0, 4.0, 1e-40]),
    "pow(x, 2)": ("T.pow(A[vi], T.float32(2))", np.square, 0.5, [1.8446743e19, 1.0842022e-19]),
    "pow(x, 3)": ("T.pow(A[vi], T.float32(3))", lambda x: x**3, 1.5, [6.981463e12, 2.2737368e-13]),
    # an array of exponents: NumPy computes a scalar 0.5 as sqrt, not as C99's pow
    "pow(x, 0.5)": (
        "T.pow(A[vi], T.float32(0.5))",
        lambda x: np.power(x, np.full_like(x, 0.5)),
        0.5,
        [4.0],
    ),
    "pow(x, -1)": ("T.pow(A[vi], T.float32(-1))", lambda x: 1 / x, 0.5, [2.9387359e-39]),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_accuracy_and_special_values(name: str, kind: str) -> None:
    expr, reference, bound, edges = UNARY[name]
    a = samples(edges)
    got = run(expr, kind, a)
    with np.errstate(all="ignore"):
        want = reference(a.astype(np.float64))
    assert_special(got, want, a)
    err = ulps(got, want)
    assert err.max() <= bound, (float(a[np.argmax(err)]), float(err.max()))


def pow_pairs(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """C99's special pairs (every one of a grid of special x and y), then random
    pairs: y moderate, integer, or chosen so that x^y spans float32's range."""
    grid = np.array(
        [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            2.0,
            -2.0,
            3.0,
            -3.0,
            2.5,
            -2.5,
            np.inf,
            -np.inf,
            np.nan,
            1e-45,
            -1e-45,
        ],
        np.float32,
    )
    gx, gy = (g.ravel() for g in np.meshgrid(grid, grid))
    rng = np.random.default_rng(seed)
    n = 6000
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.where(rng.random(n) < 0.5, x, rng.uniform(-4, 4, n)).astype(np.float32)
    with np.errstate(all="ignore"):
        spanning = rng.uniform(-160, 140, n) / np.log2(np.abs(x.astype(np.float64)))
    kind = rng.integers(0, 3, n)
    y = np.where(kind == 0, rng.uniform(-8, 8, n), spanning)
    y = np.where(kind == 1, rng.integers(-40, 41, n), y).astype(np.float32)
    return np.concatenate([gx, x]).astype(np.float32), np.concatenate([gy, y]).astype(np.float32)


@pytest.mark.parametrize("kind", KINDS)
def test_pow_accuracy_and_special_values(kind: str) -> None:
    x, y = pow_pairs()
    got = run("T.pow(A[vi], C[vi])", kind, x, y)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64))  # C99's pow
    assert_special(got, want, x, y)
    err = ulps(got, want)
    assert err.max() <= 0.51, (float(x[np.argmax(err)]), float(y[np.argmax(err)]), float(err.max()))


@pytest.mark.parametrize(
    ("expr", "inputs", "expected"),
    [
        (
            "T.log(A[vi])",
            [-0.0, 0.0, -1.0, -np.inf, np.inf, 1.0],
            [-np.inf, -np.inf, np.nan, np.nan, np.inf, 0.0],
        ),
        (
            "T.log1p(A[vi])",
            [-1.0, -2.0, -0.0, 1e-40, np.inf],
            [-np.inf, np.nan, -0.0, 1e-40, np.inf],
        ),
        ("T.tanh(A[vi])", [-0.0, np.inf, -np.inf, 20.0, -1e-30], [-0.0, 1.0, -1.0, 1.0, -1e-30]),
        ("T.erf(A[vi])", [-0.0, np.inf, -np.inf, 5.0], [-0.0, 1.0, -1.0, 1.0]),
        ("T.exp2(A[vi])", [-149.0, -150.0, 128.0, -np.inf, 0.0], [1e-45, 0.0, np.inf, 0.0, 1.0]),
        ("T.sigmoid(A[vi])", [-np.inf, np.inf, -0.0, -100.0], [0.0, 1.0, 0.5, math.exp(-100)]),
        ("T.pow(A[vi], T.float32(0.5))", [-0.0, -np.inf, -1.0], [0.0, np.inf, np.nan]),
        ("T.pow(A[vi], T.float32(3))", [-0.0, -np.inf], [-0.0, -np.inf]),
    ],
)
def test_exact_special_values(expr: str, inputs: list[float], expected: list[float]) -> None:
    a = np.array(inputs, np.float32)
    got = run(expr, "vectorized", a)
    want = np.array(expected, np.float32)
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)  # a NaN's sign is not specified
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


HALF_POW = """
@T.prim_func
def main(A: T.Buffer((64,), "float16"), B: T.Buffer((64,), "float16")):
    for i in T.vectorized(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.pow(A[vi], T.float16(3))
"""


def test_float16_constant_exponent_is_products() -> None:
    """float16 pow is computed in float32 (LowerIntrinsics casts the exponent): the
    constant 3 is still seen, and x^3 is (x x) x, no pow at all."""
    ex = tvmlite.build(tvmlite.parse(HALF_POW), cache=False)
    assert "pow" not in ex.llvm_ir()
    a = np.linspace(-4, 4, 64).astype(np.float16)
    b = np.empty_like(a)
    ex["main"](a, b)
    want = (a.astype(np.float32) ** 3).astype(np.float16)
    np.testing.assert_array_equal(b, want)
