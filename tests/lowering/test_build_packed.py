"""Packed calls from compiled graph code to functions registered with
`tvmlite.register_func`: call_packed, call_dps_packed, call_pure_packed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.runtime.registry import remove_global_func

DATA = Path(__file__).parent / "data" / "build"
NAMES = ("test.times_ten", "test.plus_one", "test.negate")
SEEN: dict[str, object] = {}


def _times_ten(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    SEEN["x"] = x
    SEEN["k"] = int(k)
    return (x * 10 + k).astype("float32")


def _plus_one(a: np.ndarray, out: np.ndarray) -> None:
    out[:] = a + 1


@pytest.fixture
def registered():  # noqa: ANN201 - a fixture generator
    tvmlite.register_func("test.times_ten", _times_ten, override=True)
    tvmlite.register_func("test.plus_one", _plus_one, override=True)

    @tvmlite.register_func("test.negate", override=True)
    def negate(b: np.ndarray) -> np.ndarray:
        return -b

    yield
    for name in NAMES:
        remove_global_func(name)


def _build() -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse((DATA / "packed.tvms").read_text()))


def test_packed_calls_to_python(registered: None) -> None:
    ex = _build()
    x = np.arange(5, dtype="float32")
    got = ex["main"](x)
    np.testing.assert_allclose(got, -(x * 10 + 2 + 1) + x)
    assert SEEN["k"] == 2  # a prim value arrives as a 0-d array
    assert np.shares_memory(SEEN["x"], x)  # the input was passed without a copy


def test_exceptions_become_errors(registered: None) -> None:
    ex = _build()

    def broken(b: np.ndarray) -> np.ndarray:
        raise ValueError("no luck")

    tvmlite.register_func("test.negate", broken, override=True)
    ex = _build()
    with pytest.raises(tvmlite.TVMLiteError, match="'test.negate' raised ValueError: no luck"):
        ex["main"](np.ones(3, "float32"))


def test_wrong_result_is_checked(registered: None) -> None:
    tvmlite.register_func("test.negate", lambda b: np.zeros(2, "float32"), override=True)
    with pytest.raises(
        tvmlite.TVMLiteError, match=r"returned by 'test.negate': expected shape \(n,\)"
    ):
        _build()["main"](np.ones(3, "float32"))
    tvmlite.register_func("test.negate", lambda b: (b, b), override=True)
    with pytest.raises(tvmlite.TVMLiteError, match="returned 2 values, the call expects 1"):
        _build()["main"](np.ones(3, "float32"))


def test_missing_then_late_registration() -> None:
    for name in NAMES:
        remove_global_func(name)
    ex = _build()
    with pytest.raises(tvmlite.TVMLiteError, match="'test.times_ten' is not registered"):
        ex["main"](np.ones(3, "float32"))
    tvmlite.register_func("test.times_ten", _times_ten)
    tvmlite.register_func("test.plus_one", _plus_one)
    tvmlite.register_func("test.negate", np.negative)
    try:
        np.testing.assert_allclose(ex["main"](np.ones(3, "float32")), np.full(3, -12.0))
    finally:
        for name in NAMES:
            remove_global_func(name)


def test_register_twice_needs_override() -> None:
    tvmlite.register_func("test.once", print)
    try:
        with pytest.raises(tvmlite.TVMLiteError, match="already registered"):
            tvmlite.register_func("test.once", print)
    finally:
        remove_global_func("test.once")
