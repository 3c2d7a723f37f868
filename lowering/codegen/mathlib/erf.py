"""float32 erf as inline arithmetic, which LLVM's loop vectorizer widens (libm's
erff per lane otherwise; erf is what an exact gelu computes).

    |x| < 0.875:         erf x = x + x P(x^2)
    0.875 <= |x| < 3.92: erf x = sign(x) (1 - e^(-x^2) Q(|x| - 1.5))
    beyond:              erf x = sign(x)   (1 - erf x < 2^-25: rounds to 1)

P (degree 6, in x^2) and Q (degree 9, fitting e^(x^2) erfc x) are minimax fits
relative to erf, float32 coefficients (benchmarks/mathlib_fit.py), within
0.014 and 0.022 * 2^-24 of it. In the second piece erfc x is at most 0.22 of
erf x, so the errors of e^(-x^2) (x^2 rounded, exp's ulp) and of the product
shrink by that factor in the subtraction. Q's variable is centred so that its
terms shrink from the first where erfc x is largest beside erf x (in |x| they
would cancel there, and Horner's roundings would cost most of an ulp). A NaN
input is given back at the end.
"""

from __future__ import annotations

from tvmlite.lowering.codegen.mathlib.exp import exp_normal
from tvmlite.lowering.codegen.mathlib.lanes import Lanes, Value

SMALL = 0.875
ONE = 3.92
Q_CENTER = 1.5  # Q is a polynomial in |x| - 1.5: its terms then shrink where erfc matters
P = [
    0.12837917,
    -0.3761263,
    0.11283622,
    -0.026855282,
    0.0051906356,
    -0.00080217235,
    7.842242e-05,
]
Q = [
    0.32158542,
    -0.16362283,
    0.07615093,
    -0.032933928,
    0.01337637,
    -0.0051267296,
    0.0018908863,
    -0.0007057423,
    0.0002306021,
    -3.9140752e-05,
]


def erf(v: Lanes, x: Value) -> Value:
    a = v.fabs(x)
    z = v.mul(x, x)
    small = v.fma(x, v.poly(z, P), x)
    # -x^2 capped at -20 (beyond ONE, erf is 1 anyway): a normal e^(-x^2)
    e = exp_normal(v, v.maximum(v.neg(z), v.const(-20.0)))
    tail = v.mul(e, v.poly(v.sub(a, v.const(Q_CENTER)), Q))
    large = v.select(v.less(a, v.const(ONE)), v.sub(v.const(1.0), tail), v.const(1.0))
    result = v.select(v.less(a, v.const(SMALL)), small, v.copysign(large, x))
    return v.select(v.is_nan(x), x, result)
