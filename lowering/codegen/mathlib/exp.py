"""exp and exp2 as inline arithmetic, which LLVM's loop vectorizer widens.

LLVM has no vector exp of its own: in a vectorized loop `llvm.exp.f32` becomes a
call of libm's `expf` per lane. Here both are range reduction, a polynomial and a
power of two built from exponent bits:

    exp:   n = rint(x / ln 2),  r = x - n ln 2      (two FMAs, ln 2 split in two)
    exp2:  n = rint(x),         r = (x - n) ln 2    (x - n exact, ln 2 split in two)
    result = 2^n e^r,  |r| <= ln 2 / 2,  e^r = 1 + r Q(r)

For float32, Q is a degree-5 fit (minimax relative to e^r, float32 coefficients:
benchmarks/mathlib_fit.py), within 0.05 * 2^-24 of it; float64 (pow's internal
precision, not a float64 exp) takes Taylor's coefficients to r^10: 2^-42.
`exp` and `exp2` take any input: it is clamped first to where the result is
surely 0 or infinity (which also keeps n small), 2^n is applied as two factors
(`Lanes.scale`) so that subnormal results and overflow to infinity round once,
as libm's do, and a NaN input gives NaN back. `exp_normal` leaves all three out,
for callers whose argument is a number of [-87, 88] (a normal result).
"""

from __future__ import annotations

import math

from tvmlite.lowering.codegen.mathlib.lanes import Format, Lanes, Value

# Q by the format's fraction bits
Q = {
    23: [1.0, 0.49999994, 0.16666521, 0.04166826, 0.008368669, 0.0013821361],
    52: [1 / math.factorial(k + 1) for k in range(10)],
}


def _log2_limits(fmt: Format) -> tuple[float, float]:
    """exp2 is 0 below the first (under half the smallest subnormal) and infinity
    above the second."""
    return -float(fmt.bias + fmt.fraction_bits + 1), float(fmt.bias + 2)


def _ln2(v: Lanes) -> tuple[float, float]:
    """ln 2 as the format's nearest number and what that left out."""
    hi = v.fmt.round(math.log(2))
    return hi, v.fmt.round(math.log(2) - hi)


def _reduce(v: Lanes, x: Value) -> tuple[Value, Value]:
    """n (an integer, as a float) and r of x = n ln 2 + r."""
    ln2_hi, ln2_lo = _ln2(v)
    n = v.rint(v.mul(x, v.const(1 / math.log(2))))
    r = v.fma(n, v.const(-ln2_hi), x)
    return n, v.fma(n, v.const(-ln2_lo), r)


def _exp_reduced(v: Lanes, r: Value) -> Value:
    """e^r for |r| <= ln 2 / 2."""
    return v.fma(r, v.poly(r, Q[v.fmt.fraction_bits]), v.const(1.0))


def _finish(v: Lanes, x: Value, n: Value, r: Value) -> Value:
    """2^n e^r, or x itself where x is NaN."""
    p = v.scale(_exp_reduced(v, r), v.to_int(n))
    return v.select(v.is_nan(x), x, p)


def exp(v: Lanes, x: Value) -> Value:
    low, high = _log2_limits(v.fmt)
    n, r = _reduce(v, v.clamp(x, low * math.log(2), high * math.log(2)))
    return _finish(v, x, n, r)


def exp2(v: Lanes, x: Value) -> Value:
    clamped = v.clamp(x, *_log2_limits(v.fmt))
    n = v.rint(clamped)
    d = v.sub(clamped, n)
    ln2_hi, ln2_lo = _ln2(v)
    return _finish(v, x, n, v.fma(d, v.const(ln2_hi), v.mul(d, v.const(ln2_lo))))


def exp_normal(v: Lanes, x: Value) -> Value:
    """e^x for x a number within [-87, 88], where e^x is a normal number: no
    clamp, one power of two, no NaN check (a third fewer operations)."""
    n, r = _reduce(v, x)
    return v.mul(_exp_reduced(v, r), v.power_of_two(v.to_int(n)))
