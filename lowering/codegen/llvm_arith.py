"""TIR arithmetic, comparisons and casts as LLVM instructions, with TVM's rules.

Integers: `div`/`mod` truncate, `floordiv`/`floormod` round toward -inf on signed
types; add/sub/mul on signed types carry `nsw` (as TVM emits, so LLVM can widen
int32 induction variables). Division by zero and INT_MIN / -1 would trap on x86
and kill the process, so a divisor that is not a known safe constant is guarded:
the result is then 0 (as NumPy gives) instead of a crash. Floats: add, sub and mul
carry `contract`, so a multiply feeding an add may become one FMA (TVM builds with
fp-contract=fast too: matmul and conv inner loops need it); `div` is fdiv,
`mod` is fmod, `floordiv` is floor(a / b), `floormod` is a - floor(a / b) * b,
min/max are TVM's selects, `!=` is unordered (true on NaN, as in C and NumPy).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_math import intrinsic

_PRED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
Value = ir.Value
_CONTRACT = ("contract",)


def category(dtype: str) -> str:
    """ "float", "int" (signed) or "uint" (unsigned and bool)."""
    elem = dt.element_of(dtype)
    if dt.is_float(elem):
        return "float"
    return "int" if dt.is_int(elem) else "uint"


def _safe_constant(e: tir.PrimExpr) -> bool:
    """A divisor that can neither be 0 nor -1."""
    return isinstance(e, tir.IntImm) and e.value not in (0, -1)


class Arith:
    """Arithmetic and casts at `b`'s position (intrinsics declared in `module`)."""

    def __init__(self, module: ir.Module, b: ir.IRBuilder) -> None:
        self.module = module
        self.b = b
        self._binary: dict[tuple[str, str], Callable[[Value, Value, tir.BinaryOp], Value]] = {}
        for kind in ("add", "sub", "mul", "div", "mod", "floordiv", "floormod", "min", "max"):
            self._binary[kind, "float"] = getattr(self, f"_float_{kind}")
            self._binary[kind, "int"] = getattr(self, f"_int_{kind}")
            self._binary[kind, "uint"] = getattr(self, f"_int_{kind}")
        for kind in _PRED:
            self._binary[kind, "float"] = self._float_compare
            self._binary[kind, "int"] = self._int_compare
            self._binary[kind, "uint"] = self._int_compare

    def binary(self, e: tir.BinaryOp, a: Value, b: Value) -> Value:
        method = self._binary.get((e.kind, category(e.a.dtype)))
        if method is None:
            raise TVMLiteError(f"binary operator {e.kind} on {e.a.dtype} is not supported")
        return method(a, b, e)

    # ------------------------------------------------------------ floats

    def _float_add(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.fadd(a, b, flags=_CONTRACT)

    def _float_sub(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.fsub(a, b, flags=_CONTRACT)

    def _float_mul(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.fmul(a, b, flags=_CONTRACT)

    def _float_div(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.fdiv(a, b)

    def _float_mod(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.frem(a, b)

    def _float_floordiv(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self._floor(self.b.fdiv(a, b))

    def _float_floormod(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.fsub(a, self.b.fmul(self._floor(self.b.fdiv(a, b)), b))

    def _float_min(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.select(self.b.fcmp_ordered("<", a, b), a, b)

    def _float_max(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.select(self.b.fcmp_ordered(">", a, b), a, b)

    def _float_compare(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        if e.kind == "ne":
            return self.b.fcmp_unordered("!=", a, b)
        return self.b.fcmp_ordered(_PRED[e.kind], a, b)

    # ------------------------------------------------------------ integers

    def _flags(self, e: tir.BinaryOp) -> tuple[str, ...]:
        return ("nsw",) if category(e.dtype) == "int" else ()

    def _int_add(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.add(a, b, flags=self._flags(e))

    def _int_sub(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.sub(a, b, flags=self._flags(e))

    def _int_mul(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.mul(a, b, flags=self._flags(e))

    def _int_compare(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        if category(e.a.dtype) == "int":
            return self.b.icmp_signed(_PRED[e.kind], a, b)
        return self.b.icmp_unsigned(_PRED[e.kind], a, b)

    def _int_min(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.select(self._less(a, b, e), a, b)

    def _int_max(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        return self.b.select(self._less(b, a, e), a, b)

    def _less(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        if category(e.dtype) == "int":
            return self.b.icmp_signed("<", a, b)
        return self.b.icmp_unsigned("<", a, b)

    def _guard(self, a: Value, b: Value, e: tir.BinaryOp) -> tuple[Value, Value | None]:
        """A divisor that cannot trap, and the i1 "divisor was zero" (None when
        the divisor is a safe constant)."""
        if _safe_constant(e.b):
            return b, None
        zero = ty.constant(e.b.dtype, 0)
        one = ty.constant(e.b.dtype, 1)
        is_zero = self.b.icmp_unsigned("==", b, zero)
        bad = is_zero
        if category(e.dtype) == "int":
            low = -(1 << (dt.bits(dt.element_of(e.dtype)) - 1))
            overflow = self.b.and_(
                self.b.icmp_signed("==", a, ty.constant(e.dtype, low)),
                self.b.icmp_signed("==", b, ty.constant(e.dtype, -1)),
            )
            bad = self.b.or_(is_zero, overflow)
        return self.b.select(bad, one, b), is_zero

    def _zero_if(self, is_zero: Value | None, value: Value, e: tir.BinaryOp) -> Value:
        if is_zero is None:
            return value
        return self.b.select(is_zero, ty.constant(e.dtype, 0), value)

    def _int_div(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        b, is_zero = self._guard(a, b, e)
        q = self.b.sdiv(a, b) if category(e.dtype) == "int" else self.b.udiv(a, b)
        return self._zero_if(is_zero, q, e)

    def _int_mod(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        b, _ = self._guard(a, b, e)
        return self.b.srem(a, b) if category(e.dtype) == "int" else self.b.urem(a, b)

    def _round_down(self, r: Value, b: Value, e: tir.BinaryOp) -> Value:
        """i1: the truncated remainder `r` is nonzero with the opposite sign of `b`."""
        zero = ty.constant(e.dtype, 0)
        nonzero = self.b.icmp_signed("!=", r, zero)
        opposite = self.b.icmp_signed("<", self.b.xor(r, b), zero)
        return self.b.and_(nonzero, opposite)

    def _int_floordiv(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        if category(e.dtype) == "uint":
            return self._int_div(a, b, e)
        b, is_zero = self._guard(a, b, e)
        q, r = self.b.sdiv(a, b), self.b.srem(a, b)
        q = self.b.select(self._round_down(r, b, e), self.b.sub(q, ty.constant(e.dtype, 1)), q)
        return self._zero_if(is_zero, q, e)

    def _int_floormod(self, a: Value, b: Value, e: tir.BinaryOp) -> Value:
        if category(e.dtype) == "uint":
            return self._int_mod(a, b, e)
        b, _ = self._guard(a, b, e)
        r = self.b.srem(a, b)
        return self.b.select(self._round_down(r, b, e), self.b.add(r, b), r)

    def _floor(self, x: Value) -> Value:
        return intrinsic(self.module, self.b, "llvm.floor", [x])

    # ------------------------------------------------------------ casts

    def cast(self, value: Value, src: str, dst: str) -> Value:
        """Convert between dtypes with TVM's semantics (float -> int truncates
        toward zero; anything -> bool is `!= 0`)."""
        if src == dst:
            return value
        s, d = dt.element_of(src), dt.element_of(dst)
        target = ty.value_type(dst)
        if s == "handle" or d == "handle":
            if s == d:
                return value
            return (
                self.b.ptrtoint(value, target) if s == "handle" else self.b.inttoptr(value, target)
            )
        if dt.is_bool(d):
            zero = ty.constant(src, 0)
            if dt.is_float(s):
                return self.b.fcmp_unordered("!=", value, zero)
            return self.b.icmp_unsigned("!=", value, zero)
        if dt.is_float(s) and dt.is_float(d):
            if dt.bits(s) == dt.bits(d):
                return value
            grow = dt.bits(d) > dt.bits(s)
            return self.b.fpext(value, target) if grow else self.b.fptrunc(value, target)
        if dt.is_float(s):
            return self.b.fptosi(value, target) if dt.is_int(d) else self.b.fptoui(value, target)
        if dt.is_float(d):
            return self.b.sitofp(value, target) if dt.is_int(s) else self.b.uitofp(value, target)
        sb, db = dt.bits(s), dt.bits(d)
        if sb == db:
            return value
        if sb > db:
            return self.b.trunc(value, target)
        return self.b.sext(value, target) if dt.is_int(s) else self.b.zext(value, target)
