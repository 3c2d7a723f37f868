"""float32 pow as inline arithmetic, which LLVM's loop vectorizer widens.

The constant exponents models use (x^2 in RMS norms, x^3 in the tanh gelu) are
products, as PyTorch computes them: x^2 = x x (correctly rounded), x^3 = (x x) x
(two roundings), x^1 = x, x^0 = 1, x^-1 = 1 / x, x^0.5 = sqrt(x) (with pow's
+0 for -0 and +inf for -inf). Float64 takes these too (`constant`).

Any other exponent: |x|^y = 2^(y log2 |x|), in float64 and rounded once to
float32 at the end (a float32 log2 would not do: exp2 turns the absolute error
of y log2 |x|, up to 150 * 2^-24, into a relative one):

    |x| = 2^k (1 + f)                   (log.reduce: f in [sqrt(1/2) - 1, sqrt(2) - 1))
    s = f / (2 + f),   log2(1 + f) = (2 / ln 2) atanh s = (2 / ln 2) (s + s^3/3 + ... + s^13/13)
    t = y (k + log2(1 + f)),   |x|^y = exp2(t)     (exp.exp2 in float64)

|s| < 0.172, so the first term left out is below 2^-40 of the sum. Sign and
special values are C99's: x^0 = 1 and 1^y = 1 even for NaN, (-1)^+-inf = 1,
a negative finite x to a non-integer finite y is NaN, a negative x (-0 and -inf
included) to an odd integer y is negative, zeros and infinities give zeros and
infinities by the sign of y.
"""

from __future__ import annotations

import math

from tvmlite.lowering.codegen.mathlib.exp import exp2
from tvmlite.lowering.codegen.mathlib.lanes import F64, Lanes, Value
from tvmlite.lowering.codegen.mathlib.log import reduce

ATANH_TERMS = 7  # s, s^3, ..., s^13
CONSTANT_EXPONENTS = frozenset([0.0, 0.5, 1.0, 2.0, 3.0, -1.0])


def constant(v: Lanes, x: Value, exponent: float) -> Value:
    """x^exponent for an exponent of CONSTANT_EXPONENTS (any float format)."""
    if exponent == 0.0:
        return v.const(1.0)
    if exponent == 0.5:  # sqrt(-0) is -0 and sqrt(-inf) NaN; pow says +0 and +inf
        root = v.add(v.sqrt(x), v.const(0.0))
        return v.select(v.equal(x, v.const(-math.inf)), v.const(math.inf), root)
    if exponent == -1.0:
        return v.div(v.const(1.0), x)
    result = x
    for _ in range(int(exponent) - 1):
        result = v.mul(result, x)
    return result


def _log2(v: Lanes, wide: Lanes, a: Value) -> Value:
    """log2 of float32 a >= 0 (or NaN) in float64 (wide)."""
    k, f = reduce(v, a)
    f = v.convert(f, wide)
    s = wide.div(f, wide.add(f, wide.const(2.0)))
    terms = [2 / ((2 * j + 1) * math.log(2)) for j in range(ATANH_TERMS)]
    log2 = wide.fma(s, wide.poly(wide.mul(s, s), terms), v.convert(k, wide))
    log2 = wide.select(v.equal(a, v.const(math.inf)), wide.const(math.inf), log2)
    log2 = wide.select(v.equal(a, v.const(0.0)), wide.const(-math.inf), log2)
    return wide.select(v.is_nan(a), wide.const(math.nan), log2)


def pow(v: Lanes, x: Value, y: Value) -> Value:  # noqa: A001 - the function's name
    """float32 x^y."""
    wide = v.widened(F64)
    t = wide.mul(v.convert(y, wide), _log2(v, wide, v.fabs(x)))
    magnitude = wide.convert(exp2(wide, t), v)
    integer = v.equal(v.rint(y), y)  # true for +-inf, false for NaN
    half = v.mul(y, v.const(0.5))
    odd = v.both(integer, v.b.fcmp_ordered("!=", v.rint(half), half))
    negative = v.b.icmp_signed("<", v.bits(x), v.int(0))  # -0 and -inf included
    result = v.select(v.both(odd, negative), v.neg(magnitude), magnitude)
    finite_negative = v.both(v.less(x, v.const(0.0)), v.less(v.const(-math.inf), x))
    not_integer = v.b.not_(integer)
    result = v.select(v.both(finite_negative, not_integer), v.const(math.nan), result)
    unit = v.equal(v.fabs(x), v.const(1.0))
    infinite_y = v.equal(v.fabs(y), v.const(math.inf))
    result = v.select(v.both(unit, infinite_y), v.const(1.0), result)
    result = v.select(v.equal(x, v.const(1.0)), v.const(1.0), result)
    return v.select(v.equal(y, v.const(0.0)), v.const(1.0), result)
