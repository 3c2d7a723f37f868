"""`T.exp` of float32 as inline arithmetic, which LLVM's loop vectorizer widens.

LLVM has no vector exp of its own: in a `T.vectorized` loop, `llvm.exp.f32`
becomes a call of libm's `expf` per lane, which made a vectorized softmax slower
than NumPy's (its exp is SIMD code). So float32 exp (scalar or vector) is
emitted as plain floating-point and integer operations:

    n = rint(x / ln 2),  r = x - n ln 2           (two FMAs, ln 2 split in two)
    exp(x) = 2^n * p(r),  |r| <= ln 2 / 2          (p: Taylor series to r^7)

The truncation error of p is below 7e-9 relative (r^8 / 8! at |r| = ln 2 / 2),
under half an ulp of float32; the result is within about 1 ulp of libm's (the
conformance tolerance is 1e-5). 2^n is built from its exponent bits, as two
factors 2^(n//2) * 2^(n - n//2) so that results in the subnormal range and
overflow to infinity come out as libm's do. Inputs are clamped to [-104, 89]
first (outside it exp is 0 or infinity in float32; the clamp keeps the integer
n small), and a NaN input gives NaN back.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from llvmlite import ir

F32 = ir.FloatType()
Intrinsic = Callable[[str, list[ir.Value]], ir.Value]

LOW, HIGH = -104.0, 89.0  # exp(-104) < half the smallest subnormal, exp(89) > max float
LN2_HI = float(np.float32(math.log(2)))  # ln 2 rounded to float32, and what it left out
LN2_LO = float(np.float32(math.log(2) - LN2_HI))
TAYLOR = [1 / math.factorial(k) for k in range(8)]  # 1, 1, 1/2, ..., 1/7!


def exp_f32(b: ir.IRBuilder, intrinsic: Intrinsic, x: ir.Value) -> ir.Value:
    """exp of the float32 scalar or of every lane of the float32 vector `x`;
    `intrinsic(name, args)` calls an overloaded LLVM intrinsic
    (`llvm_math.intrinsic`)."""
    lanes = x.type.count if isinstance(x.type, ir.VectorType) else None
    i32 = ir.IntType(32)
    ints = i32 if lanes is None else ir.VectorType(i32, lanes)

    def splat(value: float, t: ir.Type = F32) -> ir.Constant:
        scalar = ir.Constant(t, value)
        return scalar if lanes is None else ir.Constant(ir.VectorType(t, lanes), [scalar] * lanes)

    def fma(a: ir.Value, m: ir.Value, c: ir.Value) -> ir.Value:
        return intrinsic("llvm.fma", [a, m, c])

    # minnum/maxnum return the number when one side is NaN: NaN lanes compute
    # exp(89) here and are put back at the end.
    clamped = intrinsic("llvm.maxnum", [intrinsic("llvm.minnum", [x, splat(HIGH)]), splat(LOW)])
    n = intrinsic("llvm.rint", [b.fmul(clamped, splat(1 / math.log(2)))])
    r = fma(n, splat(-LN2_HI), clamped)
    r = fma(n, splat(-LN2_LO), r)
    p = splat(TAYLOR[-1])
    for c in reversed(TAYLOR[:-1]):
        p = fma(p, r, splat(c))
    k = b.fptosi(n, ints)  # in [-150, 129]
    half = b.ashr(k, splat(1, i32))
    for part in (half, b.sub(k, half)):  # each in [-75, 65]: a normal power of two
        bits = b.shl(b.add(part, splat(127, i32)), splat(23, i32))
        p = b.fmul(p, b.bitcast(bits, x.type))
    return b.select(b.fcmp_unordered("uno", x, x), x, p)
