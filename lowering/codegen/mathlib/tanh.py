"""float32 tanh as inline arithmetic, which LLVM's loop vectorizer widens (libm's
tanhf, called per lane otherwise, made a tanh-form gelu several times slower
than NumPy's).

    |x| < 0.875:  tanh x = x + x^3 P(x^2)
    otherwise:    tanh x = sign(x) (1 - 2 / (e^(2|x|) + 1))

P is a degree-7 polynomial fitted (minimax, relative to tanh, float32
coefficients: benchmarks/mathlib_fit.py), within 0.003 * 2^-24 of tanh. Above
0.875 the quotient is at most 0.42 of the result, so exp's error and the two
roundings of the quotient shrink in the subtraction; the bound between the
pieces is where the errors of both are about equal. 2|x| is capped at 20
(tanh 10 rounds to 1), so e^(2|x|) is a normal number and `exp_normal` does;
a NaN input is given back at the end.
"""

from __future__ import annotations

from tvmlite.lowering.codegen.mathlib.exp import exp_normal
from tvmlite.lowering.codegen.mathlib.lanes import Lanes, Value

SMALL = 0.875
P = [
    -0.3333333,
    0.1333326,
    -0.053958807,
    0.021810437,
    -0.008655881,
    0.0031557556,
    -0.0008904127,
    0.0001336807,
]


def tanh(v: Lanes, x: Value) -> Value:
    a = v.fabs(x)
    z = v.mul(x, x)
    small = v.fma(v.mul(x, z), v.poly(z, P), x)
    # tanh 10 rounds to 1 already: exp's argument stays where its result is normal
    e = exp_normal(v, v.minimum(v.add(a, a), v.const(20.0)))
    large = v.sub(v.const(1.0), v.div(v.const(2.0), v.add(e, v.const(1.0))))
    # the sign of x, also for -0 (x + x^3 P(x^2) is +0 there)
    result = v.copysign(v.select(v.less(a, v.const(SMALL)), small, large), x)
    return v.select(v.is_nan(x), x, result)
