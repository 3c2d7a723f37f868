"""Broadcasting binary operators, comparisons, logic and bit operations, `where`.

All are TOPI broadcast kernels: named after the op (`add`), one `T_<op>` block
over `ax0, ...`; a 0-d constant operand is folded into the expression.
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.broadcast import Operand, bcast_load, with_agreeing_shapes
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize

Scalar2 = Callable[[tir.PrimExpr, tir.PrimExpr], tir.PrimExpr]


def binary_kernel(ctx: LegalizeCtx, name: str, fn: Scalar2) -> tir.PrimExpr:
    """`out = fn(a, b)` broadcast over the result shape."""
    ctx = with_agreeing_shapes(ctx)
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, a: Operand, b: Operand) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            return fn(bcast_load(a, ax, shape), bcast_load(b, ax, shape))

        return kb.compute(shape, body, f"T_{name}")

    return ctx.call_te(name, build, scalar_consts=True)


def _floor_divide(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    if dt.is_float(a.dtype):
        return E.call("floor", a.dtype, E.div(a, b))
    return E.floordiv(a, b)


def _floor_mod(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    if dt.is_float(a.dtype):
        return E.sub(a, E.mul(E.call("floor", a.dtype, E.div(a, b)), b))
    return E.floormod(a, b)


def _power(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    return E.call("pow", a.dtype, a, b)


def _atan2(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    return E.call("atan2", a.dtype, a, b)


def _log_add_exp(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
    """`max + log(1 + exp(min - max))`: exact and overflow-free."""
    hi, lo = E.maximum(a, b), E.minimum(a, b)
    one = E.const(1, a.dtype)
    return E.add(hi, E.call("log", a.dtype, E.add(one, E.call("exp", a.dtype, E.sub(lo, hi)))))


def _bitcall(name: str) -> Scalar2:
    def fn(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
        return E.call(name, a.dtype, a, b)

    fn.__name__ = f"scalar_{name}"
    return fn


def _arith(kind: str) -> Scalar2:
    def fn(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
        return E.binary(kind, a, b)

    fn.__name__ = f"scalar_{kind}"
    return fn


def _swapped(kind: str) -> Scalar2:
    """`a > b` as TOPI builds it: `b < a`."""

    def fn(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
        return E.binary(kind, b, a)

    fn.__name__ = f"scalar_swapped_{kind}"
    return fn


def _logical(kind: str) -> Scalar2:
    def fn(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.PrimExpr:
        return tir.BinaryOp(kind, a, b, "bool")

    fn.__name__ = f"scalar_{kind}"
    return fn


_KERNELS: dict[str, Scalar2] = {
    "add": _arith("add"),
    "subtract": _arith("sub"),
    "multiply": _arith("mul"),
    "divide": _arith("div"),
    "floor_divide": _floor_divide,
    "floor_mod": _floor_mod,
    "mod": _arith("mod"),
    "power": _power,
    "atan2": _atan2,
    "log_add_exp": _log_add_exp,
    "maximum": _arith("max"),
    "minimum": _arith("min"),
    "equal": _arith("eq"),
    "not_equal": _arith("ne"),
    "less": _arith("lt"),
    "less_equal": _arith("le"),
    "greater": _swapped("lt"),
    "greater_equal": _swapped("le"),
    "logical_and": _logical("and"),
    "logical_or": _logical("or"),
    "logical_xor": _bitcall("bitwise_xor"),
    "bitwise_and": _bitcall("bitwise_and"),
    "bitwise_or": _bitcall("bitwise_or"),
    "bitwise_xor": _bitcall("bitwise_xor"),
    "left_shift": _bitcall("shift_left"),
    "right_shift": _bitcall("shift_right"),
}


def _binary_rule(name: str) -> Callable[[LegalizeCtx], tir.PrimExpr]:
    scalar = _KERNELS[name]

    def rule(ctx: LegalizeCtx) -> tir.PrimExpr:
        return binary_kernel(ctx, name, scalar)

    rule.__name__ = f"legalize_{name}"
    return rule


for _name in _KERNELS:
    register_legalize(f"relax.{_name}")(_binary_rule(_name))


@register_legalize("relax.where")
def legalize_where(ctx: LegalizeCtx) -> tir.PrimExpr:
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, c: Operand, x: Operand, y: Operand) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            cond = bcast_load(c, ax, shape)
            test = E.binary("lt", E.const(0, "int64"), E.cast(cond, "int64"))
            return E.select(test, bcast_load(x, ax, shape), bcast_load(y, ax, shape))

        return kb.compute(shape, body, "T_where")

    return ctx.call_te("where", build, scalar_consts=True)


@register_legalize("relax.ewise_fma")
def legalize_ewise_fma(ctx: LegalizeCtx) -> tir.PrimExpr:
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, a: te.Tensor, b: te.Tensor, c: te.Tensor) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            return E.add(E.mul(a[ax], b[ax]), c[ax])

        return kb.compute(shape, body, "T_ewise_fma")

    return ctx.call_te("ewise_fma", build)
