"""tvmlite's float32 math library: transcendental functions as inline LLVM
arithmetic (range reduction, polynomials, bit manipulation), which LLVM's loop
vectorizer widens to the target's full vector width like any other loop body.

LLVM has no vector code for exp, log, tanh, erf or pow: its intrinsics become
calls of libm's scalar functions, one per lane, which kept every vectorized
loop of transcendental math at scalar speed. Each routine here takes a float32
scalar or vector and computes every lane alike, correctly rounded or nearly
(docs/mathlib.md has each one's largest error in ulps, measured over every
float32 by benchmarks/mathlib_accuracy.py), with C99's results for infinities,
zeros, subnormals and NaN. No fast-math flags are involved.

sqrt and rsqrt need nothing here: `llvm.sqrt` is one vector instruction, and
LowerIntrinsics makes rsqrt 1 / sqrt x and sigmoid (1 or e) / (1 + e) with
e = exp(-|x|).
float16 math is computed in float32 (LowerIntrinsics); float64 keeps libm, but
for pow's constant exponents (`pow.constant`).
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.lowering.codegen.mathlib.erf import erf
from tvmlite.lowering.codegen.mathlib.exp import exp, exp2
from tvmlite.lowering.codegen.mathlib.lanes import Lanes, Value
from tvmlite.lowering.codegen.mathlib.log import log, log1p, log2, log10
from tvmlite.lowering.codegen.mathlib.pow import CONSTANT_EXPONENTS, constant, pow
from tvmlite.lowering.codegen.mathlib.tanh import tanh

# TIR call name -> its float32 routine
UNARY: dict[str, Callable[[Lanes, Value], Value]] = {
    "exp": exp,
    "exp2": exp2,
    "log": log,
    "log2": log2,
    "log10": log10,
    "log1p": log1p,
    "tanh": tanh,
    "erf": erf,
}

__all__ = ["CONSTANT_EXPONENTS", "UNARY", "Lanes", "constant", "pow"]
