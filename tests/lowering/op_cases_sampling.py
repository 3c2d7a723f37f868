"""Numerics cases: sampling (`R.multinomial_from_uniform`)."""

from __future__ import annotations

import numpy as np
from op_cases_common import Case, Inputs, case

G = Inputs(7)


def _multinomial(dtype: str):
    """The first index whose cumulative probability exceeds the sample (the last
    index when none does), in the row `sample_indices` names."""

    def ref(prob: np.ndarray, u: np.ndarray, rows: np.ndarray) -> np.ndarray:
        cdf = np.cumsum(prob, axis=1, dtype=prob.dtype)
        out = [
            min(int(np.sum(cdf[r] <= s)), prob.shape[1] - 1)
            for r, s in zip(rows[:, 0], u[:, 0], strict=True)
        ]
        return np.array(out, dtype).reshape(-1, 1)

    return ref


def _sampling_cases() -> list[Case]:
    raw = G.uniform(3, 6, lo=0.0, hi=1.0)
    prob = (raw / raw.sum(axis=1, keepdims=True)).astype("float32")
    prob[2] = [0, 0, 0.5, 0, 0.5, 0]  # zero-probability entries are never picked
    u = np.concatenate([G.uniform(6, 1, lo=0.0, hi=1.0), [[0.0], [0.9999]]]).astype("float32")
    rows = np.array([[0], [1], [2], [2], [0], [1], [2], [0]], "int64")
    zeros = np.zeros((4, 1), "int64")
    return [
        case(
            "multinomial_from_uniform-int64",
            'R.multinomial_from_uniform(x, y, z, dtype="int64")',
            (prob, u, rows),
            _multinomial("int64"),
        ),
        case(
            "multinomial_from_uniform-int32-rows-int32",
            'R.multinomial_from_uniform(x, y, z, dtype="int32")',
            (prob, u, rows.astype("int32")),
            _multinomial("int32"),
        ),
        case(
            # Samples exactly on a cumulative boundary pick the next index.
            "multinomial_from_uniform-float64-boundaries",
            "R.multinomial_from_uniform(x, y, z)",
            (np.array([[0.25, 0.25, 0.5]]), np.array([[0.0], [0.25], [0.5], [0.75]]), zeros),
            _multinomial("int64"),
        ),
        case(
            "multinomial_from_uniform-one-choice",
            "R.multinomial_from_uniform(x, y, z)",
            (np.ones((2, 1), "float32"), np.array([[0.3], [0.99]], "float32"), rows[:2] % 2),
            _multinomial("int64"),
        ),
    ]


CASES: list[Case] = _sampling_cases()
