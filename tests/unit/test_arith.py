"""dsl/arith.py against hand-checked cases and, by brute force, against the
reference evaluator (which shares no code with it)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from tvmlite.dsl import arith, tir
from tvmlite.testing import reference_ops
from tvmlite.testing import strategies as tst
from tvmlite.testing.reference import Interpreter
from tvmlite.testing.reference_ops import UndefinedBehavior

I32, I64 = "int32", "int64"
x = tir.Var("x", I32)
y = tir.Var("y", I32)


def c(value: int, dtype: str = I32) -> tir.IntImm:
    return tir.IntImm(dtype, value)


def _evaluate(e: tir.PrimExpr, env: dict[tir.Var, object]) -> tuple[object, list[str]]:
    """The reference value of `e` under `env`, and the signed overflows it met."""
    interp = Interpreter(tir.PrimFunc((), (), tir.Evaluate(c(0))))
    interp.env.update(env)
    return interp.expr(e), interp.overflows


def _same(a: object, b: object) -> bool:
    if isinstance(a, float | np.floating) and math.isnan(a):
        return isinstance(b, float | np.floating) and math.isnan(b)
    return bool(a == b) and np.asarray(a).dtype == np.asarray(b).dtype


# ---------------------------------------------------------------- folding


def test_fold_identities_return_the_operand_itself() -> None:
    assert arith.fold("add", x, c(0)) is x
    assert arith.fold("add", c(0), x) is x
    assert arith.fold("sub", x, c(0)) is x
    assert arith.fold("mul", x, c(1)) is x
    assert arith.fold("mul", c(1), x) is x
    assert arith.fold("floordiv", x, c(1)) is x
    assert arith.fold("mul", x, c(0)) == c(0)
    assert arith.fold("floormod", x, c(1)) == c(0)
    f = tir.Var("f", "float32")
    zero = tir.FloatImm("float32", 0.0)
    assert arith.fold("mul", f, zero) == tir.BinaryOp("mul", f, zero, "float32")
    assert arith.fold("add", f, zero) is f


def test_fold_leaves_logic_and_division_by_zero() -> None:
    t = tir.IntImm("bool", 1)
    assert arith.fold("and", t, t) == tir.BinaryOp("and", t, t, "bool")
    assert arith.fold("floordiv", c(7), c(0)) == tir.BinaryOp("floordiv", c(7), c(0), I32)
    assert arith.fold("lt", c(1), c(2)) == tir.IntImm("bool", 1)


def test_fold_wraps_and_truncates_like_the_machine() -> None:
    assert arith.fold("add", c(2**31 - 1), c(1)) == c(-(2**31))
    assert arith.fold("div", c(-7), c(2)) == c(-3)
    assert arith.fold("mod", c(-7), c(2)) == c(-1)
    assert arith.fold("floordiv", c(-7), c(2)) == c(-4)
    assert arith.fold("floormod", c(-7), c(2)) == c(1)
    big = 2**62 + 1  # not exact as a double: folding must not go through floats
    assert arith.fold("div", c(big, I64), c(1, I64)) == c(big, I64)
    assert arith.fold("div", c(big, I64), c(3, I64)) == c(big // 3, I64)


INT_DTYPES = ("int8", "int32", "int64", "uint8", "uint32")
KINDS = (*tir.ARITH_OPS, *tir.COMPARE_OPS)


@given(
    dtype=st.sampled_from(INT_DTYPES),
    kind=st.sampled_from(KINDS),
    data=st.data(),
)
def test_fold_of_immediates_matches_the_reference(dtype: str, kind: str, data) -> None:
    lo, hi = reference_ops.int_range(dtype)
    a, b = (c(data.draw(st.integers(lo, hi)), dtype) for _ in range(2))
    folded = arith.fold(kind, a, b)
    want, _ = _evaluate(tir.BinaryOp(kind, a, b, folded.dtype), {})
    if kind in ("div", "mod", "floordiv", "floormod") and b.value == 0:
        assert isinstance(folded, tir.BinaryOp)  # not folded: the machine decides
        return
    assert isinstance(folded, tir.IntImm)
    assert _same(_evaluate(folded, {})[0], want)


def test_cast_converts_immediates() -> None:
    assert arith.cast(I32, x) is x
    assert arith.cast("int8", c(300)) == c(44, "int8")
    assert arith.cast("float32", c(3)) == tir.FloatImm("float32", 3.0)
    assert arith.cast("bool", c(5)) == tir.IntImm("bool", 1)
    assert arith.cast(I32, tir.FloatImm("float32", -2.7)) == c(-2)
    too_big = tir.FloatImm("float32", 1e20)
    assert arith.cast(I32, too_big) == tir.Cast(I32, too_big)
    assert arith.cast(I32, tir.FloatImm("float32", math.inf)) == tir.Cast(
        I32, tir.FloatImm("float32", math.inf)
    )


def test_const_of_a_vector_dtype_is_a_broadcast() -> None:
    assert arith.const(1, "int32x4") == tir.Broadcast(c(1), 4, "int32x4")


# ---------------------------------------------------------------- linear forms


def test_const_int_and_difference_see_through_sums() -> None:
    i_plus_4 = tir.BinaryOp("add", x, c(4), I32)
    assert arith.const_int(i_plus_4) is None
    assert arith.const_int(tir.BinaryOp("sub", i_plus_4, x, I32)) == 4
    assert arith.difference(i_plus_4, x) == c(4)
    assert arith.difference(x, c(0)) is x
    twice = tir.BinaryOp("mul", x, c(2), I32)
    assert arith.difference(twice, x) == tir.BinaryOp("sub", twice, x, I32)
    scaled = tir.BinaryOp("mul", c(3), tir.BinaryOp("sub", x, y, I32), I32)
    assert arith.difference(scaled, tir.BinaryOp("mul", x, c(3), I32)) == tir.BinaryOp(
        "sub", scaled, tir.BinaryOp("mul", x, c(3), I32), I32
    )
    assert arith.const_int(tir.FloatImm("float32", 1.0)) is None


# ---------------------------------------------------------------- simplify


def test_simplify_folds_integer_immediates_only() -> None:
    e = tir.BinaryOp("add", tir.BinaryOp("mul", c(3), c(4), I32), x, I32)
    assert arith.simplify(e) == tir.BinaryOp("add", c(12), x, I32)
    f = tir.BinaryOp("add", tir.FloatImm("float32", 1.0), tir.FloatImm("float32", 2.0), "float32")
    assert arith.simplify(f) is f
    assert arith.simplify(tir.Cast("int8", c(300))) == c(44, "int8")
    assert arith.simplify(tir.Cast(I32, x)) is x
    assert arith.simplify(x) is x


@given(data=st.data())
def test_simplify_keeps_the_value(data) -> None:
    dtype = data.draw(st.sampled_from(("int32", "int64", "uint8", "bool")))
    a, b = tir.Var("a", "int32"), tir.Var("b", "int64")
    e = data.draw(tst.tir_exprs(dtype, variables=(a, b), max_depth=4))
    env = {
        a: np.int32(data.draw(st.integers(-(2**31), 2**31 - 1))),
        b: np.int64(data.draw(st.integers(-(2**63), 2**63 - 1))),
    }
    try:
        want, overflows = _evaluate(e, env)
    except UndefinedBehavior:
        assume(False)
    assume(not overflows)  # signed overflow is poison: any value is right
    got, _ = _evaluate(arith.simplify(e), env)
    assert _same(got, want), (e, got, want)


# ---------------------------------------------------------------- bounds


def test_bounds_of_index_arithmetic() -> None:
    i, j = tir.Var("i", I32), tir.Var("j", I32)
    ranges = {i: tir.Range(c(0), c(4)), j: tir.Range(c(2), c(3))}
    e = tir.BinaryOp("sub", tir.BinaryOp("mul", i, c(4), I32), j, I32)
    assert arith.bounds(e, ranges) == (c(-4), c(10))
    assert arith.bounds(tir.BinaryOp("floormod", x, c(8), I32), {x: tir.Range(y, c(100))}) == (
        c(0),
        c(7),
    )
    lo, hi = arith.bounds(tir.BinaryOp("add", i, y, I32), ranges)
    assert lo is y
    assert hi == tir.BinaryOp("add", c(3), y, I32)
    assert arith.bounds(y, ranges) == (y, y)
    assert arith.bounds(tir.BinaryOp("mul", i, j, I32), ranges) == (c(0), c(12))
    assert arith.bounds(tir.BinaryOp("mul", i, y, I32), ranges) is None


INDEX_OPS = ("add", "sub", "mul", "floordiv", "floormod", "min", "max")


def _index_exprs(variables: tuple[tir.Var, ...]) -> st.SearchStrategy[tir.PrimExpr]:
    """Index arithmetic over `variables` and small immediates (int64)."""
    leaves = st.one_of(st.sampled_from(variables), st.integers(-8, 8).map(lambda v: c(v, I64)))

    def combine(children: st.SearchStrategy[tir.PrimExpr]) -> st.SearchStrategy[tir.PrimExpr]:
        return st.builds(
            lambda kind, a, b: tir.BinaryOp(kind, a, b, I64),
            st.sampled_from(INDEX_OPS),
            children,
            children,
        )

    return st.recursive(leaves, combine, max_leaves=8)


@given(data=st.data())
def test_bounds_hold_for_every_value(data) -> None:
    i, j = tir.Var("i", I64), tir.Var("j", I64)
    starts = [data.draw(st.integers(-20, 20)) for _ in range(2)]
    extents = [data.draw(st.integers(1, 6)) for _ in range(2)]
    spans = list(zip(starts, extents, strict=True))
    ranges = {v: tir.Range(c(s, I64), c(n, I64)) for v, (s, n) in zip((i, j), spans, strict=True)}
    e = data.draw(st.one_of(_index_exprs((i, j)), tst.tir_exprs(I64, variables=(i, j))))
    found = arith.bounds(e, ranges)
    if found is None:
        return  # not an expression bounds follows; nothing to check
    lo, hi = found
    for vi, vj in itertools.product(*(range(s, s + n) for s, n in spans)):
        env = {i: np.int64(vi), j: np.int64(vj)}
        try:
            value, overflows = _evaluate(e, env)
            low, o1 = _evaluate(lo, env)
            high, o2 = _evaluate(hi, env)
        except UndefinedBehavior:
            continue
        if overflows or o1 or o2:
            continue  # the interval arithmetic assumes no wrap-around
        assert low <= value <= high, (e, vi, vj, lo, hi)
