"""LowerIntrinsics: rewrite TIR intrinsics that have no single machine counterpart.

After this pass codegen sees only intrinsics that map one-to-one onto an LLVM
intrinsic or a libm function: `sigmoid` and `rsqrt` become arithmetic, hints
(`likely`, `assume`) disappear, `T.ret` becomes `Return`, and math on float16 is
computed in float32 (as TVM does; libm has no half functions).
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.diagnostics import Span
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.tir_mutator import StmtExprMutator
from tvmlite.lowering.transform import PrimFuncPass

# Intrinsics that are exact (or bit-level) on half: no promotion needed.
_HALF_NATIVE = frozenset(
    ["fabs", "isnan", "isinf", "isfinite", "reinterpret", "if_then_else", "copysign"]
)


def _one(dtype: str) -> tir.PrimExpr:
    return tir.FloatImm(dtype, 1.0) if dt.lanes(dtype) == 1 else _splat(1.0, dtype)


def _splat(value: float, dtype: str) -> tir.PrimExpr:
    scalar = tir.FloatImm(dt.element_of(dtype), value)
    return tir.Broadcast(scalar, dt.lanes(dtype), dtype)


class _IntrinsicLowerer(StmtExprMutator):
    """Expand composite intrinsics of one PrimFunc."""

    def visit_Call(self, e: tir.Call) -> tir.PrimExpr:
        if not all(isinstance(a, tir.PrimExpr) for a in e.args):
            return super().visit_Call(e)  # a tile operator: the backend refuses it by name
        args = self.visit_exprs(e.args)
        op = e.op
        if op == "likely":
            return args[0]
        if op == "assume":
            return tir.IntImm("bool", 1)
        if (
            dt.element_of(e.dtype) == "float16"
            and op not in _HALF_NATIVE
            and all(dt.is_float(dt.element_of(a.dtype)) for a in args)
        ):
            wide = dt.with_lanes("float32", dt.lanes(e.dtype))
            promoted = tuple(tir.Cast(dt.with_lanes("float32", dt.lanes(a.dtype)), a) for a in args)
            return tir.Cast(e.dtype, self.visit_expr(tir.Call(wide, op, promoted, e.span)), e.span)
        if op == "sigmoid":
            return _sigmoid(args[0], e.span)
        if op == "rsqrt":
            x = args[0]
            root = tir.Call(x.dtype, "sqrt", (x,))
            return tir.BinaryOp("div", _one(x.dtype), root, x.dtype, e.span)
        if args is e.args:
            return e
        return tir.Call(e.dtype, op, args, e.span)

    def visit_Evaluate(self, s: tir.Evaluate) -> tir.Stmt:
        value = s.value
        if isinstance(value, tir.Call) and value.op == "ret":
            return tir.Return(self.visit_expr(value.args[0]), s.span)
        return super().visit_Evaluate(s)


def _zero(dtype: str) -> tir.PrimExpr:
    return tir.FloatImm(dtype, 0.0) if dt.lanes(dtype) == 1 else _splat(0.0, dtype)


def _sigmoid(x: tir.PrimExpr, span: Span | None) -> tir.PrimExpr:
    """(1 if x >= 0 else e) / (1 + e) with e = exp(-|x|): unlike 1 / (1 + exp(-x)),
    nothing overflows, so sigmoid stays right where it is subnormal (x < -87 in
    float32) instead of 0."""
    d = x.dtype
    e = tir.Var("e", d)
    magnitude = tir.Call(d, "fabs", (x,))
    exp = tir.Call(d, "exp", (tir.BinaryOp("sub", _zero(d), magnitude, d),))
    negative = tir.BinaryOp("lt", x, _zero(d), dt.with_lanes("bool", dt.lanes(d)))
    numerator = tir.Select(negative, e, _one(d), d)
    body = tir.BinaryOp("div", numerator, tir.BinaryOp("add", _one(d), e, d), d)
    return tir.Let(e, exp, body, d, span)


@dataclass(frozen=True)
class LowerIntrinsics(PrimFuncPass):
    """Composite intrinsics of every prim function become primitive ones."""

    name: str = "LowerIntrinsics"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return _IntrinsicLowerer().visit_prim_func(func)
