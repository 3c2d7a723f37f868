# ruff: noqa: E501  (TVMScript texts)
"""float32 exp (lowering/codegen/llvm_exp.py): inline code that LLVM vectorizes,
within 1 ulp of the correctly rounded result over the whole float32 range, in
vectorized loops and scalar code alike, with libm's special values."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.transform import PassContext

EXP = """
@T.prim_func
def main(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i in T.{kind}(1000):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.exp(A[vi])
"""


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(0)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-30, 1.0, -1.0]
    edges = [
        88.72,
        88.7228,
        88.73,
        89.0,
        89.5,
        100.0,
        -87.33,
        -87.34,
        -95.0,
        -103.2,
        -103.97,
        -104.0,
        -110.0,
    ]
    spread = rng.uniform(-110.0, 95.0, 1000 - len(special) - len(edges) - 200)
    near_zero = rng.uniform(-0.5, 0.5, 200)
    return np.concatenate([special, edges, spread, near_zero]).astype("float32")


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in float32 steps (both finite, same sign or zero)."""
    return np.abs(got.view("int32").astype(np.int64) - want.view("int32").astype(np.int64))


@pytest.mark.parametrize("kind", ["vectorized", "serial"])
def test_exp_within_one_ulp_and_special_values(kind: str) -> None:
    a = _inputs()
    b = np.empty_like(a)
    with PassContext(config={"tir.default_cpu_schedule": False}):  # serial stays scalar code
        tvmlite.build(tvmlite.parse(EXP.format(kind=kind)), cache=False)["main"](a, b)
    with np.errstate(over="ignore"):  # exp(89) and up: infinity in float32
        want = np.exp(a.astype(np.float64)).astype(np.float32)  # correctly rounded
    assert np.array_equal(np.isnan(b), np.isnan(a))
    finite = ~np.isnan(a)
    assert np.array_equal(np.isinf(b[finite]), np.isinf(want[finite]))
    assert np.array_equal(b[finite] == 0, want[finite] == 0)
    both = finite & np.isfinite(want) & (want != 0)
    assert _ulps(b[both], want[both]).max() <= 1
    assert b[a == -np.inf][0] == 0 and b[a == np.inf][0] == np.inf
    assert b[a == 0].tolist() == [1.0, 1.0]


def test_vectorized_exp_calls_no_libm() -> None:
    """The point of the inline code: a vectorized loop of exp makes no call."""
    ex = tvmlite.build(tvmlite.parse(EXP.format(kind="vectorized")), cache=False)
    assert "expf" not in ex.assembly()
