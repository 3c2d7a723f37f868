"""Drawing TIR that can also be run (`runnable=True`): the pieces that differ from
what the round-trip strategies draw.

A program that only has to print and parse may index out of bounds, loop forever
or cast NaN to int8; one that is run must have a single defined result, so that a
compiled kernel and the reference evaluator can be compared. Each helper here
keeps one such promise: indices inside the buffer, loops of few steps, `while`
bounded by a counter, casts of values the target holds, shifts below the width.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.testing.draws import BOOLS, ints, pick

if TYPE_CHECKING:
    from tvmlite.testing.tir_gen import Scope, TIRGen

MAX_SYMBOLIC_STEPS = 8  # `range(n)` over a var runs at most this many times
FLOAT_UNARY = ("sqrt", "fabs", "floor", "ceil", "trunc", "round")  # exact in every dtype
FLOAT_BINARY = ("copysign", "fmod", "nextafter")
BIT_UNARY = ("popcount", "clz", "bitwise_not")
BIT_BINARY = ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right")
CLASSIFY = ("isnan", "isinf", "isfinite")


def i32(value: int) -> tir.IntImm:
    return tir.IntImm("int32", value)


def extent(dim: tir.PrimExpr) -> int:
    if not isinstance(dim, tir.IntImm):
        raise ValueError("runnable programs have static shapes")
    return dim.value


# ---------------------------------------------------------------- indices and loops


def _after(kind: str, bounds: tuple[int, int], step: int) -> tuple[int, int]:
    low, high = bounds
    if kind == "add":
        return low + step, high + step
    if kind == "mul":
        return low * step, high * step
    if kind == "floordiv":
        return low // step, high // step
    return 0, step - 1  # floormod


def index(gen: TIRGen, scope: Scope, depth: int, size: int) -> tir.PrimExpr:
    """An index in `[0, size)`: a literal, or a var (with arithmetic when its range
    is known) wrapped by `floormod` unless its range already fits."""
    draw = gen.draw
    candidates = [v for v in scope.vars if v.dtype == "int32"]
    if candidates and draw(BOOLS):
        var = pick(draw, candidates)
        expr: tir.PrimExpr = var
        bounds = scope.ranges.get(var)
        if bounds is not None and depth > 0 and draw(BOOLS):
            kind = pick(draw, ("add", "mul", "floordiv", "floormod"))
            step = draw(ints(2, 4))
            expr = tir.BinaryOp(kind, var, i32(step), "int32")
            bounds = _after(kind, bounds, step)
        if bounds is not None and 0 <= bounds[0] and bounds[1] < size:
            return expr
        return tir.BinaryOp("floormod", expr, i32(size), "int32")
    return i32(draw(ints(0, size - 1)))


def few_steps(count: tir.PrimExpr) -> tir.PrimExpr:
    """A loop extent taken from a var of any value, capped."""
    return tir.BinaryOp("min", count, i32(MAX_SYMBOLIC_STEPS), "int32")


def loop_range(start: tir.PrimExpr, count: tir.PrimExpr) -> tuple[int, int]:
    """The values a loop var takes (a superset when the extent is a capped var)."""
    low = extent(start)
    if isinstance(count, tir.IntImm):
        return low, low + count.value - 1
    return low, low + MAX_SYMBOLIC_STEPS - 1


def bounded_while(gen: TIRGen, scope: Scope, depth: int) -> tir.Stmt:
    """`while n[0] < k and cond: n[0] += 1; ...` over a fresh local counter, which
    the body cannot see (so it cannot undo the bound)."""
    name = gen.name()
    counter = tir.Buffer(
        name, tir.Var(name, "handle", pointee=("int32", "local")), "int32", (i32(1),), scope="local"
    )
    at = (i32(0),)
    count = tir.BufferLoad(counter, at, "int32")
    limit = tir.BinaryOp("lt", count, i32(gen.draw(ints(1, 4))), "bool")
    cond = tir.BinaryOp("and", limit, gen.expr("bool", scope, 1), "bool")
    inner = scope.child()
    inner.breakable = True
    body = gen.seq(inner, depth)
    step = tir.BufferStore(counter, tir.BinaryOp("add", count, i32(1), "int32"), at)
    rest = body.seq if isinstance(body, tir.SeqStmt) else (body,)
    return tir.SeqStmt(
        (
            tir.AllocBuffer(counter, form="alloc_local"),
            tir.BufferStore(counter, i32(0), at),
            tir.While(cond, tir.SeqStmt((step, *rest))),
        )
    )


def jump(gen: TIRGen, scope: Scope) -> tir.Stmt:
    """`if cond: break` or `if cond: continue` (only drawn inside a loop)."""
    cond = gen.expr("bool", scope, 1)
    return tir.IfThenElse(cond, tir.Break() if gen.draw(BOOLS) else tir.Continue())


def fill(buffer: tir.Buffer, value: tir.PrimExpr, names: list[str]) -> tir.Stmt:
    """A loop nest writing `value` to every element of a static-shape buffer."""
    loop_vars = [tir.Var(names[k % len(names)], "int32") for k in range(len(buffer.shape))]
    body: tir.Stmt = tir.BufferStore(buffer, value, tuple(loop_vars))
    for var, dim in reversed(list(zip(loop_vars, buffer.shape, strict=True))):
        body = tir.For(var, i32(0), i32(extent(dim)), tir.SERIAL, body)
    return body


# ---------------------------------------------------------------- expressions


def cast_in_range(value: tir.PrimExpr, dtype: str) -> tir.PrimExpr:
    """`T.Cast(dtype, value)`; a float going to an int type is first replaced by 0
    unless `lo - 1 < value < hi + 1` (NaN fails both), so the cast is defined. The
    bounds are rounded to the float type as the compiled code rounds them; both
    roundings keep the test exact or on the safe side."""
    src = value.dtype
    if not dt.is_float(src) or dt.is_float(dtype) or dt.is_bool(dtype):
        return tir.Cast(dtype, value)
    bits = dt.bits(dtype)
    low, high = (0, 2**bits - 1) if dt.is_uint(dtype) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    with np.errstate(over="ignore"):
        below = float(np.dtype(src).type(float(low) - 1))
        above = float(np.dtype(src).type(float(high) + 1))
    fits = tir.BinaryOp(
        "and",
        tir.BinaryOp("gt", value, tir.FloatImm(src, below), "bool"),
        tir.BinaryOp("lt", value, tir.FloatImm(src, above), "bool"),
        "bool",
    )
    return tir.Cast(dtype, tir.Select(fits, value, tir.FloatImm(src, 0.0), src))


def intrinsic(gen: TIRGen, dtype: str, scope: Scope, depth: int) -> tir.PrimExpr:
    """An exactly specified intrinsic of result `dtype`: float rounding and sign
    functions, float classification (bool), bit counting, logic and shifts."""
    draw = gen.draw
    if dt.is_bool(dtype):
        floats = [d for d in gen.numeric if dt.is_float(d)]
        if not floats:
            return gen._compare(dtype, scope, depth)
        x = gen.expr(pick(draw, floats), scope, depth)
        return tir.Call("bool", pick(draw, CLASSIFY), (x,))
    if dt.is_float(dtype):
        if draw(BOOLS):
            return tir.Call(dtype, pick(draw, FLOAT_UNARY), (gen.expr(dtype, scope, depth),))
        args = (gen.expr(dtype, scope, depth), gen.expr(dtype, scope, depth))
        return tir.Call(dtype, pick(draw, FLOAT_BINARY), args)
    if draw(BOOLS):
        return tir.Call(dtype, pick(draw, BIT_UNARY), (gen.expr(dtype, scope, depth),))
    op = pick(draw, BIT_BINARY)
    a = gen.expr(dtype, scope, depth)
    if op.startswith("shift"):
        bits = dt.bits(dtype)
        amount: tir.PrimExpr = tir.IntImm(dtype, draw(ints(0, bits - 1)))
        if draw(BOOLS):
            amount = tir.BinaryOp(
                "floormod", gen.expr(dtype, scope, depth), tir.IntImm(dtype, bits), dtype
            )
        return tir.Call(dtype, op, (a, amount))
    return tir.Call(dtype, op, (a, gen.expr(dtype, scope, depth)))
