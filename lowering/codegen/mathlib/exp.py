"""exp and exp2 as inline arithmetic, which LLVM's loop vectorizer widens.

LLVM has no vector exp of its own: in a vectorized loop `llvm.exp.f32` becomes a
call of libm's `expf` per lane. Here both are range reduction, a polynomial and a
power of two built from exponent bits:

    exp:   n = rint(x / ln 2),  r = x - n ln 2      (two FMAs, ln 2 split in two)
    exp2:  n = rint(x),         r = (x - n) ln 2    (x - n exact, ln 2 split in two)
    result = 2^n * p(r),  |r| <= ln 2 / 2,  p the Taylor series of e^r

For float32, p stops at r^7: its truncation error is below 7e-9 relative (r^8/8!
at |r| = ln 2 / 2), under half an ulp. float64 (pow's internal precision, not a
float64 exp) goes to r^10: 2^-42. 2^n is applied as two factors (`Lanes.scale`),
so that subnormal results and overflow to infinity round once, as libm's do.
Inputs are clamped first to where the result is surely 0 or infinity (which also
keeps n small), and a NaN input gives NaN back.
"""

from __future__ import annotations

import math

from tvmlite.lowering.codegen.mathlib.lanes import Format, Lanes, Value

DEGREE = {23: 7, 52: 10}  # by the format's fraction bits


def _log2_limits(fmt: Format) -> tuple[float, float]:
    """exp2 is 0 below the first (under half the smallest subnormal) and infinity
    above the second."""
    return -float(fmt.bias + fmt.fraction_bits + 1), float(fmt.bias + 2)


def _taylor(v: Lanes, r: Value) -> Value:
    return v.poly(r, [1 / math.factorial(k) for k in range(DEGREE[v.fmt.fraction_bits] + 1)])


def _finish(v: Lanes, x: Value, n: Value, r: Value) -> Value:
    """2^n * e^r, or x itself where x is NaN."""
    p = v.scale(_taylor(v, r), v.to_int(n))
    return v.select(v.is_nan(x), x, p)


def _ln2(v: Lanes) -> tuple[float, float]:
    """ln 2 as the format's nearest number and what that left out."""
    hi = v.fmt.round(math.log(2))
    return hi, v.fmt.round(math.log(2) - hi)


def exp(v: Lanes, x: Value) -> Value:
    low, high = _log2_limits(v.fmt)
    clamped = v.clamp(x, low * math.log(2), high * math.log(2))
    ln2_hi, ln2_lo = _ln2(v)
    n = v.rint(v.mul(clamped, v.const(1 / math.log(2))))
    r = v.fma(n, v.const(-ln2_hi), clamped)
    r = v.fma(n, v.const(-ln2_lo), r)
    return _finish(v, x, n, r)


def exp2(v: Lanes, x: Value) -> Value:
    clamped = v.clamp(x, *_log2_limits(v.fmt))
    n = v.rint(clamped)
    d = v.sub(clamped, n)
    ln2_hi, ln2_lo = _ln2(v)
    return _finish(v, x, n, v.fma(d, v.const(ln2_hi), v.mul(d, v.const(ln2_lo))))
