"""Scalar-or-vector floating-point arithmetic for the routines of this package.

A routine computes one function on a float scalar or on every lane of a float
vector, with the same code: `Lanes` makes constants of the value's shape (a
scalar, or the value splatted across the lanes), and wraps the LLVM operations
the routines use, so that their code reads as the formula it computes. Nothing
here uses fast-math flags: every operation rounds as IEEE says, which is what
the routines' error bounds assume.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from llvmlite import ir

Value = ir.Value
# `intrinsic(name, args)` calls the LLVM intrinsic `name` overloaded on the first
# argument's type (llvm_math.intrinsic bound to a module and builder).
Intrinsic = Callable[[str, list[Value]], Value]


@dataclass(frozen=True)
class Format:
    """An IEEE binary format: its LLVM type, the integer type of its bits, the
    width of its stored significand and its exponent bias."""

    float: ir.Type
    int: ir.IntType
    fraction_bits: int
    bias: int

    def round(self, value: float) -> float:
        """`value` rounded to this format (a constant as the code will hold it)."""
        if self.fraction_bits == 52:
            return value
        return struct.unpack("<f", struct.pack("<f", value))[0]


F32 = Format(ir.FloatType(), ir.IntType(32), 23, 127)
F64 = Format(ir.DoubleType(), ir.IntType(64), 52, 1023)


class Lanes:
    """Operations on values of format `fmt` with `lanes` lanes (None: scalars),
    emitted at `b`'s position."""

    def __init__(
        self, b: ir.IRBuilder, intrinsic: Intrinsic, lanes: int | None, fmt: Format = F32
    ) -> None:
        self.b = b
        self.intrinsic = intrinsic
        self.lanes = lanes
        self.fmt = fmt

    @classmethod
    def like(cls, b: ir.IRBuilder, intrinsic: Intrinsic, x: Value) -> Lanes:
        """Lanes of `x`'s shape and format (float32 or float64)."""
        t = x.type
        lanes = t.count if isinstance(t, ir.VectorType) else None
        scalar = t.element if isinstance(t, ir.VectorType) else t
        return cls(b, intrinsic, lanes, F64 if isinstance(scalar, ir.DoubleType) else F32)

    def widened(self, fmt: Format) -> Lanes:
        """The same lanes in another format."""
        return Lanes(self.b, self.intrinsic, self.lanes, fmt)

    # ------------------------------------------------------------ types and constants

    def of(self, scalar: ir.Type) -> ir.Type:
        return scalar if self.lanes is None else ir.VectorType(scalar, self.lanes)

    @property
    def float_type(self) -> ir.Type:
        return self.of(self.fmt.float)

    @property
    def int_type(self) -> ir.Type:
        return self.of(self.fmt.int)

    def _splat(self, scalar: ir.Constant) -> ir.Constant:
        if self.lanes is None:
            return scalar
        return ir.Constant(ir.VectorType(scalar.type, self.lanes), [scalar] * self.lanes)

    def const(self, value: float) -> ir.Constant:
        return self._splat(ir.Constant(self.fmt.float, value))

    def int(self, value: int) -> ir.Constant:
        return self._splat(ir.Constant(self.fmt.int, value))

    # ------------------------------------------------------------ arithmetic

    def add(self, a: Value, c: Value) -> Value:
        return self.b.fadd(a, c)

    def sub(self, a: Value, c: Value) -> Value:
        return self.b.fsub(a, c)

    def mul(self, a: Value, c: Value) -> Value:
        return self.b.fmul(a, c)

    def div(self, a: Value, c: Value) -> Value:
        return self.b.fdiv(a, c)

    def neg(self, x: Value) -> Value:
        """-x, the sign bit flipped (-0 for 0, unlike 0 - x)."""
        return self.b.fneg(x)

    def fma(self, a: Value, m: Value, c: Value) -> Value:
        """a * m + c, rounded once."""
        return self.intrinsic("llvm.fma", [a, m, c])

    def poly(self, x: Value, coefficients: Sequence[float]) -> Value:
        """c0 + c1 x + c2 x^2 + ... by Horner's rule, one FMA a coefficient."""
        *low, top = coefficients
        p: Value = self.const(top)
        for c in reversed(low):
            p = self.fma(p, x, self.const(c))
        return p

    def fabs(self, x: Value) -> Value:
        return self.intrinsic("llvm.fabs", [x])

    def copysign(self, magnitude: Value, sign: Value) -> Value:
        return self.intrinsic("llvm.copysign", [magnitude, sign])

    def rint(self, x: Value) -> Value:
        """x rounded to an integer, ties to even."""
        return self.intrinsic("llvm.rint", [x])

    def minimum(self, a: Value, c: Value) -> Value:
        """The smaller; the number when one side is NaN (llvm.minnum): callers that
        bound a NaN lane this way put NaN back at the end."""
        return self.intrinsic("llvm.minnum", [a, c])

    def maximum(self, a: Value, c: Value) -> Value:
        """The larger; the number when one side is NaN (llvm.maxnum)."""
        return self.intrinsic("llvm.maxnum", [a, c])

    def clamp(self, x: Value, low: float, high: float) -> Value:
        """x within [low, high]; a NaN lane becomes `high`."""
        return self.maximum(self.minimum(x, self.const(high)), self.const(low))

    def sqrt(self, x: Value) -> Value:
        return self.intrinsic("llvm.sqrt", [x])

    # ------------------------------------------------------------ comparisons and choice

    def less(self, a: Value, c: Value) -> Value:
        """a < c; false when either is NaN (as every comparison here but `is_nan`)."""
        return self.b.fcmp_ordered("<", a, c)

    def less_equal(self, a: Value, c: Value) -> Value:
        return self.b.fcmp_ordered("<=", a, c)

    def equal(self, a: Value, c: Value) -> Value:
        return self.b.fcmp_ordered("==", a, c)

    def is_nan(self, x: Value) -> Value:
        return self.b.fcmp_unordered("uno", x, x)

    def select(self, condition: Value, a: Value, c: Value) -> Value:
        return self.b.select(condition, a, c)

    def either(self, a: Value, c: Value) -> Value:
        return self.b.or_(a, c)

    def both(self, a: Value, c: Value) -> Value:
        return self.b.and_(a, c)

    # ------------------------------------------------------------ bits and integers

    def bits(self, x: Value) -> Value:
        return self.b.bitcast(x, self.int_type)

    def from_bits(self, i: Value) -> Value:
        return self.b.bitcast(i, self.float_type)

    def to_int(self, x: Value) -> Value:
        """An integer-valued float as an integer of the format's width."""
        return self.b.fptosi(x, self.int_type)

    def to_float(self, i: Value) -> Value:
        return self.b.sitofp(i, self.float_type)

    def power_of_two(self, k: Value) -> Value:
        """2^k for integers k whose power is a normal number of the format."""
        biased = self.b.add(k, self.int(self.fmt.bias))
        return self.from_bits(self.b.shl(biased, self.int(self.fmt.fraction_bits)))

    def scale(self, p: Value, k: Value) -> Value:
        """p * 2^k for integer k up to twice the exponent range: as two factors
        2^(k//2) * 2^(k - k//2), each a normal number, so that one rounding (the
        last product) makes subnormal results and overflow to infinity."""
        half = self.b.ashr(k, self.int(1))
        p = self.mul(p, self.power_of_two(half))
        return self.mul(p, self.power_of_two(self.b.sub(k, half)))

    # ------------------------------------------------------------ formats

    def convert(self, x: Value, into: Lanes) -> Value:
        """x in `into`'s format: exact when widening, rounded once when narrowing."""
        if into.fmt.fraction_bits > self.fmt.fraction_bits:
            return self.b.fpext(x, into.float_type)
        return self.b.fptrunc(x, into.float_type)
