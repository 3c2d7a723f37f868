"""Where the polynomial coefficients of lowering/codegen/mathlib/ come from: fits
them again and prints them with the error each leaves.

  python benchmarks/mathlib_fit.py          (needs mpmath, for the reference values)

Each polynomial is a weighted minimax fit found by Lawson's algorithm (least
squares, re-weighted by each point's error until the largest error stops
falling) on Chebyshev points of its interval, the weight making the error
relative to the function the routine computes. The coefficients are rounded to
float32 one at a time, lowest degree first, the higher ones fitted again after
each rounding, so the rounding costs little accuracy. Errors are printed in
units of 2^-24 relative (half a float32 ulp at most).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import mpmath as mp
import numpy as np

mp.mp.dps = 40
POINTS = 4000
ROUNDS = 60


@dataclass(frozen=True)
class Fit:
    """A polynomial in `variable(x)` of degree `degree` that approximates
    `target(x)` on [low, high], its error scaled by `weight(x)`."""

    name: str
    low: float
    high: float
    degree: int
    variable: Callable[[mp.mpf], mp.mpf]
    target: Callable[[mp.mpf], mp.mpf]
    weight: Callable[[mp.mpf], mp.mpf]


def _lawson(v: np.ndarray, target: np.ndarray, weight: np.ndarray, degrees: range) -> np.ndarray:
    basis = np.stack([v**d for d in degrees], axis=1)
    u = np.full(len(v), 1 / len(v))
    coefficients = np.zeros(len(degrees))
    for _ in range(ROUNDS):
        root = np.sqrt(u) * weight
        coefficients = np.linalg.lstsq(basis * root[:, None], target * root, rcond=None)[0]
        err = np.abs((basis @ coefficients - target) * weight)
        u = u * err / np.sum(u * err)
    return coefficients


def fit(f: Fit) -> tuple[list[float], float]:
    """float32 coefficients (lowest degree first) and the largest weighted error."""
    mid, half = (f.low + f.high) / 2, (f.high - f.low) / 2
    xs = [mp.mpf(mid + half * np.cos(t)) for t in np.linspace(0, np.pi, POINTS)]
    xs = [x for x in xs if x != 0]
    v = np.array([float(f.variable(x)) for x in xs])
    target = np.array([float(f.target(x)) for x in xs])
    weight = np.array([float(f.weight(x)) for x in xs])
    rounded: list[float] = []
    for d in range(f.degree + 1):
        done = sum(c * v**k for k, c in enumerate(rounded))
        free = _lawson(v, target - done, weight, range(d, f.degree + 1))
        rounded.append(float(np.float32(free[0])))
    err = np.abs((sum(c * v**k for k, c in enumerate(rounded)) - target) * weight)
    return rounded, float(err.max())


def _log_r(f: mp.mpf) -> mp.mpf:
    return (mp.log1p(f) - f) / f**2


def _tanh_p(x: mp.mpf) -> mp.mpf:
    return (mp.tanh(x) - x) / x**3


def _erfc_scaled(x: mp.mpf) -> mp.mpf:
    return mp.erfc(x) * mp.exp(x * x)


FITS = [
    # e^r = 1 + r Q(r) on |r| <= ln 2 / 2; relative to e^r
    Fit(
        "exp Q",
        -float(mp.log(2) / 2),
        float(mp.log(2) / 2),
        5,
        lambda r: r,
        lambda r: mp.expm1(r) / r,
        lambda r: r / mp.exp(r),
    ),
    # ln(1 + f) = f + f^2 R(f); error relative to ln(1 + f)
    Fit(
        "log R",
        float(mp.sqrt(0.5) - 1),
        float(mp.sqrt(2) - 1),
        8,
        lambda f: f,
        _log_r,
        lambda f: f**2 / abs(mp.log1p(f)),
    ),
    # tanh x = x + x^3 P(x^2) on |x| < 0.875; relative to tanh x
    Fit("tanh P", 0.0, 0.875, 7, lambda x: x * x, _tanh_p, lambda x: x**3 / mp.tanh(x)),
    # erf x = x + x P(x^2) on |x| < 0.875; relative to erf x
    Fit(
        "erf P",
        0.0,
        0.875,
        6,
        lambda x: x * x,
        lambda x: mp.erf(x) / x - 1,
        lambda x: x / mp.erf(x),
    ),
    # erf x = 1 - e^(-x^2) Q(x - 1.5) on [0.875, 3.92]; relative to erf x
    Fit(
        "erf Q",
        0.875,
        3.92,
        9,
        lambda x: x - 1.5,
        _erfc_scaled,
        lambda x: mp.exp(-x * x) / mp.erf(x),
    ),
]


def main() -> None:
    for f in FITS:
        coefficients, err = fit(f)
        print(f"{f.name}: degree {f.degree} on [{f.low:.6g}, {f.high:.6g}]")
        print(f"  error {err / 2**-24:.3f} x 2^-24")
        print("  " + ", ".join(str(np.float32(c)) for c in coefficients))


if __name__ == "__main__":
    main()
