"""Numerics cases: operators whose output size depends on the data (nonzero,
dynamic_strided_slice)."""

from __future__ import annotations

import numpy as np
from op_cases_common import Case, Inputs, case

G = Inputs(8)


def _nonzero(v: np.ndarray) -> np.ndarray:
    """TVM's `relax.run.nonzero`: NumPy's, a 0-d input read as one element."""
    return np.stack(np.atleast_1d(v).nonzero()).astype("int64")


def _nonzero_cases() -> list[Case]:
    sparse = G.ints(-2, 3, 3, 4, 5).astype("float32") * (G.ints(0, 3, 3, 4, 5) == 0)
    return [
        case("nonzero-float32-3d", "R.nonzero(x)", sparse, _nonzero),
        case("nonzero-int32-1d", "R.nonzero(x)", G.ints(-1, 2, 9), _nonzero),
        case("nonzero-bool-2d", "R.nonzero(x)", G.bools(4, 3), _nonzero),
        case("nonzero-uint8-4d", "R.nonzero(x)", G.ints(0, 2, 2, 1, 3, 2, dtype="uint8"), _nonzero),
        case("nonzero-float64-neg-zero", "R.nonzero(x)", np.array([-0.0, 0.5, 0.0]), _nonzero),
        case("nonzero-nan-is-nonzero", "R.nonzero(x)", np.array([0, np.nan], "float32"), _nonzero),
        case("nonzero-all-zero", "R.nonzero(x)", np.zeros((2, 3), "float32"), _nonzero),
        case("nonzero-all-nonzero", "R.nonzero(x)", np.ones((2, 2), "int64"), _nonzero),
        case("nonzero-empty", "R.nonzero(x)", np.zeros((0, 3), "float32"), _nonzero),
        case("nonzero-0d-zero", "R.nonzero(x)", np.array(0, "int32"), _nonzero),
        case("nonzero-0d-one", "R.nonzero(x)", np.array(7, "int32"), _nonzero),
    ]


def _slice(x: np.ndarray, b: np.ndarray, e: np.ndarray, s: np.ndarray) -> np.ndarray:
    """NumPy's basic slicing, which TVM's canonicalization reproduces."""
    return x[tuple(slice(*bes) for bes in zip(b.tolist(), e.tolist(), s.tolist(), strict=True))]


def _bounds(*rows: list[int], dtype: str = "int64") -> tuple[np.ndarray, ...]:
    return tuple(np.array(r, dtype) for r in rows)


def _dynamic_slice_cases() -> list[Case]:
    call = "R.dynamic_strided_slice(x, y, z, w)"
    x = G.normal(8, 9)
    cube = G.ints(-50, 50, 4, 5, 6)
    table = [
        ("forward", x, _bounds([1, 2], [7, 8], [2, 3])),
        ("backward", x, _bounds([-1, 8], [-9, -100], [-2, -3])),
        ("clamped", x, _bounds([-100, 3], [100, 200], [3, 1])),
        ("whole", x, _bounds([0, 0], [8, 9], [1, 1])),
        ("empty-begin-past-end", x, _bounds([5, 0], [2, 9], [1, 1])),
        ("empty-out-of-range", x, _bounds([100, 0], [200, 9], [1, 1])),
        ("int32-bounds-3d", cube, _bounds([0, -1, 1], [4, -6, 6], [3, -1, 2], dtype="int32")),
        ("1d", np.arange(10, dtype="float64"), _bounds([7], [1], [-2])),
        ("empty-input", np.zeros((0, 3), "float32"), _bounds([0, 1], [5, 3], [1, 1])),
    ]
    return [
        case(f"dynamic-strided-slice-{name}", call, (data, *bounds), _slice)
        for name, data, bounds in table
    ]


CASES: list[Case] = _nonzero_cases() + _dynamic_slice_cases()
