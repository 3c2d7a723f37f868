"""Numerics cases: operators whose output size depends on the data (nonzero)."""

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


CASES: list[Case] = _nonzero_cases()
