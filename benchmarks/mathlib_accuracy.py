"""The largest error, in float32 ulps, of tvmlite's float32 math (lowering/codegen/
mathlib/, and what LowerIntrinsics makes of sigmoid and rsqrt) over every float32
input, against NumPy's float64 result (SciPy's for erf); docs/mathlib.md has
the table this prints.

  python benchmarks/mathlib_accuracy.py [--only NAME]... [--step 1] [--pairs 67108864]
                                       [--against libm] [--against numpy]

Unary functions see every float32 bit pattern (--step K: every K-th, for a
quicker look); pow sees --pairs random (x, y) pairs: x of every magnitude and
sign, and y either uniform in [-8, 8], an integer, or chosen so that x^y spans
float32's whole range (y log2|x| uniform in [-160, 140]), plus its constant
exponents over every float32. The error of a result is its distance from the
float64 reference in units of the float32 ulp at the reference (2^(e-23) for
2^e <= |ref| < 2^(e+1), 2^-149 among subnormals): 0.5 is correct rounding. An
infinite result where the reference is finite counts as 2^128 (one ulp beyond
the largest float32).
Results whose reference rounds to infinity, zero or NaN must match it exactly
(the "special" column counts the mismatches, as does a wrong sign of zero);
they are left out of the ulp figure. `--against` measures the C library's
float32 functions (glibc's, called lane by lane, as tvmlite did before) and
NumPy's float32 loops the same way, for comparison.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

import tvmlite

CHUNK = 1 << 24
UNARY_KERNEL = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    T.func_attr({{"tir.noalias": True}})
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.vectorized(n):
        B[i] = {expr}
"""
BINARY_KERNEL = """
@T.prim_func
def main(a: T.handle, c: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.vectorized(n):
        B[i] = T.pow(A[i], C[i])
"""


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _pow_half(x: np.ndarray) -> np.ndarray:
    """C99's pow(x, 0.5) (+0 at -0, +inf at -inf): NumPy takes a scalar 0.5 for sqrt."""
    return np.power(x, np.full_like(x, 0.5))


@dataclass(frozen=True)
class Unary:
    name: str
    expr: str  # the TIR expression of A[i]
    reference: Callable[[np.ndarray], np.ndarray]  # float64 in, float64 out
    libm: str | None = None  # the C function of float32, for --against libm
    numpy: Callable[[np.ndarray], np.ndarray] | None = None  # of float32, for --against numpy


UNARY = [
    Unary("exp", "T.exp(A[i])", np.exp, "expf", np.exp),
    Unary("exp2", "T.exp2(A[i])", np.exp2, "exp2f", np.exp2),
    Unary("log", "T.log(A[i])", np.log, "logf", np.log),
    Unary("log2", "T.log2(A[i])", np.log2, "log2f", np.log2),
    Unary("log10", "T.log10(A[i])", np.log10, "log10f", np.log10),
    Unary("log1p", "T.log1p(A[i])", np.log1p, "log1pf", np.log1p),
    Unary("tanh", "T.tanh(A[i])", np.tanh, "tanhf", np.tanh),
    Unary("erf", "T.erf(A[i])", special.erf, "erff"),
    Unary("sigmoid", "T.sigmoid(A[i])", _sigmoid),
    Unary("sqrt", "T.sqrt(A[i])", np.sqrt, "sqrtf", np.sqrt),
    Unary("rsqrt", "T.rsqrt(A[i])", _rsqrt),
    Unary("pow(x, 2)", "T.pow(A[i], T.float32(2))", np.square),
    Unary("pow(x, 3)", "T.pow(A[i], T.float32(3))", lambda x: x * x * x),
    Unary("pow(x, 0.5)", "T.pow(A[i], T.float32(0.5))", _pow_half),
    Unary("pow(x, -1)", "T.pow(A[i], T.float32(-1))", lambda x: 1 / x),
]


class Tally:
    """The largest ulp error seen (and its input), and special-value mismatches."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.at: tuple[float, ...] = ()
        self.special = 0
        self.example: tuple[float, ...] = ()
        self.count = 0

    def add(self, got: np.ndarray, ref64: np.ndarray, *inputs: np.ndarray) -> None:
        self.count += got.size
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            ref32 = ref64.astype(np.float32)
        # only results other than the correctly rounded one (or its zero's sign) can
        # err by more than half an ulp: the rest is looked at no further
        differ = np.flatnonzero((got != ref32) | (np.signbit(got) != np.signbit(ref32)))
        got, ref64, ref32 = got[differ], ref64[differ], ref32[differ]
        inputs = tuple(x[differ] for x in inputs)
        ordinary = np.isfinite(ref32) & (ref32 != 0)
        # specials: exactly the reference's infinity, zero (with its sign) or NaN
        bad = ~ordinary & ~(np.isnan(got) & np.isnan(ref32))
        bad |= ordinary & np.isnan(got)
        if bad.any():
            i = int(np.argmax(bad))
            self.special += int(bad.sum())
            self.example = (*(float(x[i]) for x in inputs), float(got[i]), float(ref64[i]))
        ordinary &= ~np.isnan(got)  # counted above
        mag = np.abs(ref64[ordinary])
        exponent = np.maximum(np.frexp(mag)[1] - 1, -126)
        ulp = np.ldexp(1.0, exponent - 23)
        wide = got[ordinary].astype(np.float64)
        wide = np.where(np.isinf(wide), np.copysign(2.0**128, wide), wide)
        err = np.abs(wide - ref64[ordinary]) / ulp
        if err.size and err.max() > self.worst:
            i = int(np.argmax(err))
            self.worst = float(err[i])
            self.at = tuple(float(x[ordinary][i]) for x in inputs)

    def row(self, name: str, who: str, what: str) -> str:
        at = ", ".join(f"{x:.9g}" for x in self.at)
        # without a result other than the correctly rounded one, no error was measured
        worst = f"{self.worst:.3f}" if self.at else "<= 0.5"
        line = f"| {name} | {who} | {what} | {worst} | {at} | {self.special} |"
        if self.special:
            line += f"  e.g. {self.example}"
        return line


def _build(text: str) -> Callable[..., None]:
    return tvmlite.build(tvmlite.parse(text), cache=False)["main"]


def contender(u: Unary, who: str) -> Callable[[np.ndarray], np.ndarray] | None:
    """float32 -> float32 by `who`: tvmlite's routine, the C library's function
    (called from a tvmlite kernel, one call a lane) or NumPy's float32 loop."""
    if who == "numpy":
        return u.numpy
    if who == "libm" and u.libm is None:
        return None
    expr = u.expr if who == "tvmlite" else f'T.call_pure_extern("float32", "{u.libm}", A[i])'
    kernel = _build(UNARY_KERNEL.format(expr=expr))

    def run(x: np.ndarray) -> np.ndarray:
        out = np.empty_like(x)
        kernel(x, out)
        return out

    return run


def sweep_unary(u: Unary, compute: Callable[[np.ndarray], np.ndarray], step: int) -> Tally:
    tally = Tally()
    offsets = np.arange(0, CHUNK * step, step, dtype=np.uint64).astype(np.uint32)
    for start in range(0, 1 << 32, CHUNK * step):
        bits = offsets[: ((1 << 32) - start + step - 1) // step] + np.uint32(start)
        x = bits.view(np.float32)
        with np.errstate(all="ignore"):
            got = compute(x)
            ref = u.reference(x.astype(np.float64))
        tally.add(got, ref, x)
    return tally


def sweep_pow(pairs: int, seed: int = 0) -> Tally:
    kernel = _build(BINARY_KERNEL)
    rng = np.random.default_rng(seed)
    tally = Tally()
    for start in range(0, pairs, CHUNK):
        n = min(CHUNK, pairs - start)
        x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
        kind = rng.integers(0, 3, n)
        with np.errstate(all="ignore"):
            spanning = rng.uniform(-160, 140, n) / np.log2(np.abs(x.astype(np.float64)))
        y = np.where(kind == 0, rng.uniform(-8, 8, n), spanning)
        y = np.where(kind == 1, rng.integers(-40, 41, n), y).astype(np.float32)
        got = np.empty_like(x)
        kernel(x, y, got)
        with np.errstate(all="ignore"):
            ref = np.power(x.astype(np.float64), y.astype(np.float64))
        tally.add(got, ref, x, y)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="a function's name (repeatable)")
    parser.add_argument("--step", type=int, default=1, help="every K-th float32 (default 1)")
    parser.add_argument("--pairs", type=int, default=1 << 26, help="pow's random pairs")
    parser.add_argument(
        "--against",
        action="append",
        choices=["libm", "numpy"],
        default=[],
        help="also measure the C library's float32 functions or NumPy's float32 loops",
    )
    args = parser.parse_args()
    sweep = "every float32" if args.step == 1 else f"every {args.step}th float32"
    print("| function | by | inputs | max ulp | at | special mismatches |")
    print("|---|---|---|---|---|---|")
    for u in UNARY:
        if args.only and u.name not in args.only:
            continue
        for who in ["tvmlite", *args.against]:
            compute = contender(u, who)
            if compute is None:
                continue
            began = time.perf_counter()
            tally = sweep_unary(u, compute, args.step)
            took = time.perf_counter() - began
            print(tally.row(u.name, who, sweep), f"({took:.0f} s)", flush=True)
    if not args.only or "pow" in args.only:
        tally = sweep_pow(args.pairs)
        print(tally.row("pow", "tvmlite", f"{args.pairs} random pairs"), flush=True)


if __name__ == "__main__":
    main()
