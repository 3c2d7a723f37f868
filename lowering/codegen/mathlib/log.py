"""float32 log, log2, log10 and log1p as inline arithmetic, which LLVM's loop
vectorizer widens (LLVM has no vector logarithm: `llvm.log` is libm per lane).

    x = 2^k m,  m in [sqrt(1/2), sqrt(2)),  f = m - 1         (bits; f exact)
    ln x = k ln 2 + f + f^2 R(f)
    log_b x = ln x / ln b

R is a degree-8 polynomial fitted (minimax, relative to ln(1 + f), float32
coefficients: benchmarks/mathlib_fit.py) on f in [sqrt(1/2) - 1, sqrt(2) - 1],
within 0.07 * 2^-24 of ln(1 + f). The sum is formed small terms first, with
ln 2 / ln b and 1 / ln b each split in two (the float32 constant and what it
left out), so the constants add no error of their own. Subnormal inputs are
scaled by 2^23 first.

log1p(x): u = 1 + x rounded and c = (1 + x) - u exactly (Knuth's TwoSum), then
log1p x = ln u + c / u, which keeps tiny x exact (u = 1, c = x).

Special values as C99 says: log of a negative number (or -inf) is NaN, of +-0
-inf, of +inf +inf; log1p of x < -1 is NaN, of -1 -inf, of +-0 x itself.
"""

from __future__ import annotations

import math

from tvmlite.lowering.codegen.mathlib.lanes import Lanes, Value

SQRT_HALF_BITS = 0x3F3504F3  # float32 sqrt(1/2): where the window of m starts
FRACTION_MASK = (1 << 23) - 1
R = [
    -0.49999988,
    0.33333325,
    -0.250016,
    0.20002,
    -0.16608763,
    0.14181219,
    -0.13244689,
    0.12908499,
    -0.07622862,
]


def reduce(v: Lanes, x: Value) -> tuple[Value, Value]:
    """k (as a float) and f of float32 x = 2^k (1 + f), for positive finite x
    (garbage for others)."""
    subnormal = v.less(x, v.const(2.0**-126))
    x = v.select(subnormal, v.mul(x, v.const(2.0**23)), x)
    ix = v.b.sub(v.bits(x), v.int(SQRT_HALF_BITS))
    k = v.b.add(v.b.ashr(ix, v.int(23)), v.select(subnormal, v.int(-23), v.int(0)))
    m = v.from_bits(v.b.add(v.b.and_(ix, v.int(FRACTION_MASK)), v.int(SQRT_HALF_BITS)))
    return v.to_float(k), v.sub(m, v.const(1.0))


def _split(v: Lanes, value: float) -> tuple[float, float]:
    hi = v.fmt.round(value)
    return hi, v.fmt.round(value - hi)


def _in_base(v: Lanes, k: Value, f: Value, t: Value, base: float) -> Value:
    """(k ln 2 + f + t) / ln base, for t small beside f (f^2 R(f) and corrections)."""
    s_hi, s_lo = _split(v, 1 / math.log(base))
    ks_hi, ks_lo = _split(v, math.log(2) / math.log(base))
    low = v.mul(t, v.const(s_hi))  # the constants' low parts are 0 for some bases
    if s_lo:
        low = v.fma(f, v.const(s_lo), low)
    if ks_lo:
        low = v.fma(k, v.const(ks_lo), low)
    return v.fma(k, v.const(ks_hi), v.fma(f, v.const(s_hi), low))


def _correction(v: Lanes, f: Value) -> Value:
    """f^2 R(f): ln(1 + f) - f."""
    return v.mul(v.mul(f, f), v.poly(f, R))


def _log(v: Lanes, x: Value, base: float) -> Value:
    k, f = reduce(v, x)
    result = _in_base(v, k, f, _correction(v, f), base)
    result = v.select(v.equal(x, v.const(math.inf)), x, result)
    result = v.select(v.equal(x, v.const(0.0)), v.const(-math.inf), result)
    result = v.select(v.less(x, v.const(0.0)), v.const(math.nan), result)
    return v.select(v.is_nan(x), x, result)


def log(v: Lanes, x: Value) -> Value:
    return _log(v, x, math.e)


def log2(v: Lanes, x: Value) -> Value:
    return _log(v, x, 2.0)


def log10(v: Lanes, x: Value) -> Value:
    return _log(v, x, 10.0)


def log1p(v: Lanes, x: Value) -> Value:
    one = v.const(1.0)
    u = v.add(one, x)
    x_part = v.sub(u, one)  # TwoSum of 1 and x: c is what rounding u left out
    one_part = v.sub(u, x_part)
    c = v.add(v.sub(one, one_part), v.sub(x, x_part))
    k, f = reduce(v, u)
    t = v.fma(v.mul(f, f), v.poly(f, R), v.div(c, u))
    result = _in_base(v, k, f, t, math.e)
    result = v.select(v.equal(x, v.const(math.inf)), x, result)
    result = v.select(v.equal(x, v.const(0.0)), x, result)
    result = v.select(v.equal(x, v.const(-1.0)), v.const(-math.inf), result)
    result = v.select(v.less(x, v.const(-1.0)), v.const(math.nan), result)
    return v.select(v.is_nan(x), x, result)
