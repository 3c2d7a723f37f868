"""Scalar semantics of TIR for the reference evaluator (`reference.py`).

Values are NumPy scalars of the exact dtype (`np.int8`, `np.float16`, `np.bool_`)
and vectors are tuples of them. Integers are computed on Python ints and wrapped
into the dtype, so wrap-around, truncating and flooring division are spelled out
rather than inherited from NumPy's C casts; floats are computed on NumPy scalars of
the operand dtype, so every operation rounds as the machine does. What TIR leaves
undefined (a float cast to an int it does not fit, a shift by the bit width or
more) raises `UndefinedBehavior`: compiled code may do anything there.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tvmlite.dsl import dtype as dt

Scalar = Any  # a NumPy scalar (np.generic)
Value = Any  # a Scalar or a tuple of them (a vector)
# Called with a message when signed add/sub/mul wraps: LLVM's `nsw` makes that
# poison, TVM's (and our) codegen emits it, so results may legitimately differ.
OverflowHook = Callable[[str], None]


class UndefinedBehavior(Exception):
    """The program did something TIR leaves undefined."""


@functools.lru_cache(maxsize=64)
def _kind(dtype: str) -> tuple[str, int, type]:
    """(bool/int/uint/float, bits, NumPy scalar type): asked for every value made,
    so cached (a pure function of an immutable string, and bounded)."""
    code = "float" if dt.is_float(dtype) else dt.code(dtype)
    return code, dt.bits(dtype), np.dtype(dtype).type


def int_range(dtype: str) -> tuple[int, int]:
    code, bits, _ = _kind(dtype)
    if code == "bool":
        return 0, 1
    if code == "uint":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def wrap(value: int, dtype: str) -> int:
    """Two's-complement wrap of `value` into integer `dtype` (bool keeps bit 0)."""
    code, bits, _ = _kind(dtype)
    if code == "bool":
        return value & 1
    value &= (1 << bits) - 1
    if code == "int" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def make(value: int | float | bool, dtype: str) -> Scalar:
    """A scalar of `dtype`: integers wrap, floats round to nearest."""
    code, _, scalar_type = _kind(dtype)
    if code == "bool":
        return np.bool_(bool(value))
    if code == "float":
        with np.errstate(all="ignore"):
            return scalar_type(value)
    return scalar_type(wrap(int(value), dtype))


def lanewise(fn: Callable[..., Scalar], *values: Value) -> Value:
    """`fn` on scalars, or lane by lane when any operand is a vector (scalars are
    broadcast)."""
    lanes = max((len(v) for v in values if isinstance(v, tuple)), default=0)
    if not lanes:
        return fn(*values)
    columns = [v if isinstance(v, tuple) else (v,) * lanes for v in values]
    return tuple(fn(*row) for row in zip(*columns, strict=True))


# ---------------------------------------------------------------- arithmetic


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_binary(kind: str, a: int, b: int, dtype: str, on_overflow: OverflowHook | None) -> int:
    """`kind` on integers of `dtype`; division by zero gives 0 (as the codegen
    guarantees instead of a trap)."""
    if kind in ("add", "sub", "mul"):
        exact = a + b if kind == "add" else a - b if kind == "sub" else a * b
        result = wrap(exact, dtype)
        if result != exact and dt.is_int(dtype) and on_overflow is not None:
            on_overflow(f"{dtype} {kind} {a}, {b}")
        return result
    if kind == "min":
        return min(a, b)
    if kind == "max":
        return max(a, b)
    if b == 0:
        return 0
    if kind == "div":
        return wrap(_trunc_div(a, b), dtype)
    if kind == "mod":
        return a - _trunc_div(a, b) * b
    if kind == "floordiv":
        return wrap(a // b, dtype)
    if kind == "floormod":
        return a % b
    raise ValueError(f"unknown integer operator {kind}")


def float_binary(kind: str, a: Scalar, b: Scalar) -> Scalar:
    """`kind` on two floats of one dtype, each step rounded to that dtype."""
    with np.errstate(all="ignore"):
        if kind == "add":
            return a + b
        if kind == "sub":
            return a - b
        if kind == "mul":
            return a * b
        if kind == "div":
            return a / b
        if kind == "mod":
            return np.fmod(a, b)
        if kind == "floordiv":
            return np.floor(a / b)
        if kind == "floormod":
            return a - np.floor(a / b) * b
        # TVM's min/max are `Select(a < b, a, b)`: NaN in `b` wins, NaN in `a` loses.
        if kind == "min":
            return a if a < b else b
        if kind == "max":
            return a if a > b else b
    raise ValueError(f"unknown float operator {kind}")


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def binary(
    kind: str, a: Scalar, b: Scalar, operand: str, dtype: str, on_overflow: OverflowHook | None
) -> Scalar:
    """A scalar BinaryOp on `operand`-typed values, of result `dtype` (bool for
    comparisons and logic)."""
    if kind in COMPARE:
        if dt.is_float(operand):
            with np.errstate(all="ignore"):
                return np.bool_(COMPARE[kind](a, b))
        return np.bool_(COMPARE[kind](int(a), int(b)))
    if kind == "and":
        return np.bool_(bool(a) and bool(b))
    if kind == "or":
        return np.bool_(bool(a) or bool(b))
    if dt.is_float(dtype):
        return float_binary(kind, a, b)
    return make(int_binary(kind, int(a), int(b), dtype, on_overflow), dtype)


# ---------------------------------------------------------------- casts

_MANTISSA = {16: 11, 32: 24, 64: 53}


def _round_to_bits(n: int, precision: int) -> int:
    """`n` rounded (half to even) to `precision` significant bits."""
    extra = abs(n).bit_length() - precision
    if extra <= 0:
        return n
    magnitude, rest = divmod(abs(n), 1 << extra)
    half = 1 << (extra - 1)
    if rest > half or (rest == half and magnitude & 1):
        magnitude += 1
    return (magnitude << extra) * (1 if n >= 0 else -1)


def int_to_float(n: int, dtype: str) -> Scalar:
    """Correctly rounded int -> float. Converting through a Python float would
    round twice for |n| >= 2**53 (once to double, once to float32)."""
    rounded = _round_to_bits(n, _MANTISSA[dt.bits(dtype)])
    return make(float(rounded), dtype)  # exact in a double; overflows to inf if it must


def cast(value: Scalar, dtype: str) -> Scalar:
    """TVM's Cast: to bool is `!= 0` (NaN is true), float -> int truncates toward
    zero (undefined outside the target's range), int -> float rounds to nearest."""
    src_is_float = isinstance(value, np.floating)
    if dt.is_bool(dtype):
        return np.bool_(bool(value != 0))
    if dt.is_float(dtype):
        if src_is_float:
            return make(value, dtype)
        return int_to_float(int(value), dtype)
    if src_is_float:
        if not math.isfinite(float(value)):
            raise UndefinedBehavior(f"cast of {value} to {dtype}")
        truncated = int(float(value))
        low, high = int_range(dtype)
        if not low <= truncated <= high:
            raise UndefinedBehavior(f"cast of {value} to {dtype}: out of range")
        return make(truncated, dtype)
    return make(int(value), dtype)


# ---------------------------------------------------------------- intrinsics

# Math computed in float64 and rounded once to the operand dtype (libm's float
# functions are nearly correctly rounded; so is this). Tests compare with a few ulps.
_WIDE_UNARY: dict[str, Callable[[Any], Any]] = {
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(np.float64(10.0), x),
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "erf": lambda x: np.float64(math.erf(float(x))),
}
_WIDE_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "pow": np.power,
    "atan2": np.arctan2,
    "hypot": np.hypot,
}
# Exact (or correctly rounded) in the operand dtype itself.
_EXACT_UNARY: dict[str, Callable[[Any], Any]] = {
    "sqrt": np.sqrt,
    "fabs": np.fabs,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.rint,  # half to even
    "nearbyint": np.rint,
}
_EXACT_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "copysign": np.copysign,
    "nextafter": np.nextafter,
    "fmod": np.fmod,
}
# float16 intrinsics TVM computes natively; the others go through float32.
_HALF_NATIVE = frozenset({"fabs", "isnan", "isinf", "isfinite", "copysign"})
FLOAT_INTRINSICS = frozenset(
    [*_WIDE_UNARY, *_WIDE_BINARY, *_EXACT_UNARY, *_EXACT_BINARY, "sigmoid", "rsqrt", "ldexp"]
)
INT_INTRINSICS = frozenset(
    ["popcount", "clz", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]
    + ["shift_left", "shift_right", "fmod"]
)


def float_intrinsic(op: str, args: list[Scalar], dtype: str) -> Scalar:
    """A float math intrinsic with result `dtype` (the operands' dtype)."""
    if dtype == "float16" and op not in _HALF_NATIVE:
        wide = [make(a, "float32") if isinstance(a, np.floating) else a for a in args]
        return make(float_intrinsic(op, wide, "float32"), "float16")
    with np.errstate(all="ignore"):
        if op in _EXACT_UNARY:
            return _EXACT_UNARY[op](args[0])
        if op in _EXACT_BINARY:
            return _EXACT_BINARY[op](args[0], args[1])
        if op in _WIDE_UNARY:
            return make(_WIDE_UNARY[op](np.float64(args[0])), dtype)
        if op in _WIDE_BINARY:
            return make(_WIDE_BINARY[op](np.float64(args[0]), np.float64(args[1])), dtype)
        one = make(1.0, dtype)
        if op == "sigmoid":  # as lowered: 1 / (1 + exp(-x)), each step in `dtype`
            return one / (one + float_intrinsic("exp", [make(0.0, dtype) - args[0]], dtype))
        if op == "rsqrt":
            return one / np.sqrt(args[0])
        if op == "ldexp":
            return np.ldexp(args[0], int(args[1]))
    raise NotImplementedError(f"T.{op} on {dtype}")


def classify(op: str, x: Scalar) -> Scalar:
    """isnan / isinf / isfinite."""
    value = float(x)
    if op == "isnan":
        return np.bool_(math.isnan(value))
    if op == "isinf":
        return np.bool_(math.isinf(value))
    return np.bool_(math.isfinite(value))


def int_intrinsic(op: str, args: list[Scalar], dtype: str) -> Scalar:
    """Bit intrinsics on integers of `dtype`."""
    bits = dt.bits(dtype)
    a = int(args[0])
    pattern = a & ((1 << bits) - 1)
    if op == "popcount":
        return make(bin(pattern).count("1"), dtype)
    if op == "clz":
        return make(bits - pattern.bit_length(), dtype)
    if op == "bitwise_not":
        return make(~a, dtype)
    b = int(args[1])
    if op == "bitwise_and":
        return make(a & b, dtype)
    if op == "bitwise_or":
        return make(a | b, dtype)
    if op == "bitwise_xor":
        return make(a ^ b, dtype)
    if op in ("shift_left", "shift_right"):
        if not 0 <= b < bits:
            raise UndefinedBehavior(f"T.{op} of {dtype} by {b}")
        return make(a << b if op == "shift_left" else a >> b, dtype)
    if op == "fmod":
        if b == 0:
            raise UndefinedBehavior(f"integer T.fmod by zero on {dtype}")
        return make(a - _trunc_div(a, b) * b, dtype)
    raise NotImplementedError(f"T.{op} on {dtype}")


def reinterpret(value: Scalar, dtype: str) -> Scalar:
    """The same bits seen as `dtype`."""
    return np.array(value).view(np.dtype(dtype))[()]


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides in elements of a compact row-major array of `shape`."""
    strides, running = [], 1
    for dim in reversed(shape):
        strides.append(running)
        running *= dim
    return tuple(reversed(strides))
