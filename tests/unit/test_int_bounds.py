"""`arith.IntBounds`, which lets checked builds leave out the checks that cannot
fail and region inference relax indices, must never claim bounds that a value
can leave: random index expressions are evaluated (with the dtype's wrap-around)
at every point of their variables' ranges and compared with what the analysis
says, in both of its modes."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import free_vars
from tvmlite.dsl.arith import IntBounds

OPS = ("add", "sub", "mul", "div", "mod", "floordiv", "floormod", "min", "max")
DTYPES = ("int8", "int32", "int64", "uint8")
VARS = {dtype: (tir.Var("i", dtype), tir.Var("j", dtype)) for dtype in DTYPES}


def wrap(value: int, dtype: str) -> int:
    lo, hi = dt.int_range(dtype)
    return (value - lo) % (hi - lo + 1) + lo


def evaluate(e: tir.PrimExpr, env: dict[tir.Var, int]) -> int | None:
    """The value the compiled code computes; None for a division by zero."""
    if isinstance(e, tir.IntImm):
        return e.value
    if isinstance(e, tir.Var):
        return env[e]
    if isinstance(e, tir.Cast):
        value = evaluate(e.value, env)
        return None if value is None else wrap(value, e.dtype)
    assert isinstance(e, tir.BinaryOp)
    a, b = evaluate(e.a, env), evaluate(e.b, env)
    if a is None or b is None or (b == 0 and e.kind in OPS[3:7]):
        return None
    truncated = int(a / b) if e.kind in ("div", "mod") else 0
    result = {
        "add": lambda: a + b,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "div": lambda: truncated,
        "mod": lambda: a - truncated * b,
        "floordiv": lambda: a // b,
        "floormod": lambda: a % b,
        "min": lambda: min(a, b),
        "max": lambda: max(a, b),
    }[e.kind]()
    return wrap(result, e.dtype)


@st.composite
def expressions(draw: st.DrawFn, dtype: str, depth: int = 3) -> tir.PrimExpr:
    lo, hi = dt.int_range(dtype)
    leaf = st.one_of(
        st.sampled_from(VARS[dtype]),
        st.integers(max(lo, -40), min(hi, 40)).map(lambda v: tir.IntImm(dtype, v)),
        st.sampled_from([lo, hi]).map(lambda v: tir.IntImm(dtype, v)),
    )
    if depth == 0 or draw(st.booleans()):
        return draw(leaf)
    if draw(st.integers(0, 5)) == 0:
        source = draw(st.sampled_from(DTYPES))
        return tir.Cast(dtype, draw(expressions(source, depth - 1)))
    kind = draw(st.sampled_from(OPS))
    a, b = draw(expressions(dtype, depth - 1)), draw(expressions(dtype, depth - 1))
    return tir.BinaryOp(kind, a, b, dtype)


def imm(value: int, dtype: str) -> tir.IntImm:
    return tir.IntImm(dtype, value)


@given(st.data(), st.sampled_from(DTYPES), st.booleans())
def test_bounds_contain_every_value(data: st.DataObject, dtype: str, any_value: bool) -> None:
    e = data.draw(expressions(dtype))
    analysis = IntBounds(any_value=any_value)
    points = {}
    for var in free_vars(e):
        lo_d, hi_d = dt.int_range(var.dtype)
        lo = data.draw(st.integers(max(lo_d, -50), min(hi_d, 50)))
        hi = data.draw(st.integers(lo, min(lo + 6, hi_d)))
        analysis.ranges[var] = (imm(lo, var.dtype), imm(hi, var.dtype))
        points[var] = range(lo, hi + 1)
    bounds = analysis.ints(e)
    if bounds is None:
        assert not any_value  # with any_value, every integer expression has bounds
        return
    names = list(points)
    for values in itertools.product(*(points[v] for v in names)):
        value = evaluate(e, dict(zip(names, values, strict=True)))
        if value is not None:
            assert bounds[0] <= value <= bounds[1], (e, values, bounds)


def test_known_ranges() -> None:
    i = tir.Var("i", "int64")
    analysis = IntBounds({i: (imm(0, "int64"), imm(15, "int64"))}, any_value=True)
    four = imm(4, "int64")
    assert analysis.ints(tir.BinaryOp("add", i, four, "int64")) == (4, 19)
    assert analysis.ints(tir.BinaryOp("floormod", i, four, "int64")) == (0, 3)
    assert analysis.ints(tir.BinaryOp("floordiv", i, four, "int64")) == (0, 3)
    assert analysis.ints(tir.BinaryOp("mul", i, i, "int64")) == (0, 225)
    narrow = tir.Cast("int8", tir.BinaryOp("mul", i, tir.IntImm("int64", 100), "int64"))
    assert analysis.ints(narrow) == (-128, 127)  # 1500 does not fit: it may have wrapped
    unknown = tir.Var("n", "int32")
    assert analysis.ints(unknown) == (-(2**31), 2**31 - 1)
    assert analysis.ints(tir.Var("u", "uint8")) == (0, 255)
    loop = tir.For(i, imm(2, "int64"), imm(5, "int64"), tir.SERIAL, tir.Evaluate(i))
    assert analysis.ints(tir.BinaryOp("floormod", loop.loop_var, imm(16, "int64"), "int64")) == (
        0,
        15,
    )
    assert analysis.loop_range(loop) == (imm(2, "int64"), imm(6, "int64"))


def test_symbolic_mode_keeps_free_vars() -> None:
    """Without any_value a var outside `ranges` is fixed: bounds are expressions of it,
    and what is not followed (or would wrap) is None rather than the whole dtype."""
    i, n = tir.Var("i", "int32"), tir.Var("n", "int32")
    analysis = IntBounds({i: (imm(0, "int32"), imm(7, "int32"))})
    assert analysis.of(n) == (n, n)
    lo, hi = analysis.of(tir.BinaryOp("add", i, n, "int32"))
    assert lo is n and hi == tir.BinaryOp("add", imm(7, "int32"), n, "int32")
    assert analysis.of(tir.BinaryOp("mul", i, n, "int32")) is None
    big = tir.BinaryOp("mul", i, imm(2**30, "int32"), "int32")
    assert analysis.of(big) is None  # 7 * 2**30 does not fit int32
    assert analysis.of(tir.BinaryOp("floormod", i, imm(16, "int32"), "int32")) == (
        imm(0, "int32"),
        imm(7, "int32"),
    )
