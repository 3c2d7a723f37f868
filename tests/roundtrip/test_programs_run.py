"""Programs also run: a compiled kernel computes what the reference evaluator
(`tvmlite.testing.reference`) says the TIR means, on random inputs.

The evaluator walks the IR as written and shares no code with the lowering, so
every disagreement is a bug in one of the two. Programs come from the strategies
with `runnable=True` (defined results only); integers must agree exactly, floats
bit for bit (NaN matching NaN) except math intrinsics, which may differ by a few
ulps between libm and NumPy. Signed add/sub/mul that wrap are LLVM poison (the
codegen marks them `nsw`, as TVM does), so a result may differ only when the
evaluator saw one. Regression tests for bugs the evaluator found are at the end.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import tvmlite
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.lowering import compile_prim_funcs
from tvmlite.testing import random_arguments, reference_ops
from tvmlite.testing import strategies as tst
from tvmlite.testing.arguments import random_values
from tvmlite.testing.reference import Interpreter, UndefinedBehavior, run_prim_func

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "float32", "float64")
DTYPES = ("bool", *INTS, *FLOATS)
SEEDS = st.integers(0, 2**32 - 1)


# ---------------------------------------------------------------- harness


def ulps_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in representable floats; NaN vs NaN is 0, NaN vs a number is huge."""
    ints = {2: np.int16, 4: np.int32, 8: np.int64}[a.itemsize]
    lowest = np.iinfo(ints).min

    def ordered(x: np.ndarray) -> np.ndarray:
        bits = x.view(ints).astype(object)
        return np.array([lowest - v if v < 0 else v for v in bits.ravel()], dtype=object)

    distance = np.abs(ordered(a) - ordered(b)).astype(float)
    nan_a, nan_b = np.isnan(a).ravel(), np.isnan(b).ravel()
    distance[nan_a & nan_b] = 0
    distance[nan_a != nan_b] = np.inf
    return distance


def assert_same(got: np.ndarray, want: np.ndarray, ulps: int = 0) -> None:
    """Bit-equal (NaN matching NaN; -0.0 and 0.0 differ), or within `ulps`."""
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    worst = ulps_apart(got, want).max(initial=0)
    assert worst <= ulps, f"{worst} ulps apart:\nkernel    {got}\nreference {want}"


def check_program(func: tir.PrimFunc, seed: int, ulps: int = 0) -> None:
    """Compile `func`, run it and the reference on the same random arguments, and
    compare every buffer's whole memory (strided ones include the gaps)."""
    arguments = random_arguments(func, seed)
    kernel = compile_prim_funcs({"main": func})["main"]
    kernel_bases, kernel_args = arguments.fresh()
    kernel(*kernel_args)
    ref_bases, ref_args = arguments.fresh()
    interpreter = Interpreter(func)
    interpreter.run(*ref_args)
    try:
        for got, want in zip(kernel_bases, ref_bases, strict=True):
            if got is not None and want is not None:
                assert_same(got, want, ulps)
    except AssertionError:
        if not interpreter.overflows:  # else: `nsw` poison may legitimately differ
            raise AssertionError(func.script()) from None


def parse_func(text: str) -> tir.PrimFunc:
    func = tvmlite.parse(text)
    assert isinstance(func, tir.PrimFunc)
    return func


# ---------------------------------------------------------------- generated programs


@given(tst.prim_funcs(runnable=True, dtypes=DTYPES), SEEDS)
def test_programs_match_reference(func: tir.PrimFunc, seed: int) -> None:
    check_program(func, seed)


@given(
    tst.prim_funcs(
        runnable=True,
        max_depth=3,
        include={"loops", "grid", "blocks", "alloc", "strides", "let"},
    ),
    SEEDS,
)
def test_loop_kinds_and_reductions_match_reference(func: tir.PrimFunc, seed: int) -> None:
    """Serial/parallel/vectorized/unroll loops with nonzero min, grids, blocks with
    reduce axes, `T.init` and `T.where`, allocations, strided buffers."""
    check_program(func, seed)


@given(tst.prim_funcs(runnable=True, dialect="tvm-0.27"), SEEDS)
def test_027_programs_match_reference(func: tir.PrimFunc, seed: int) -> None:
    """The 0.27 dialect adds flat `Bind`s, scoped over the rest of a sequence."""
    check_program(func, seed)


SCALARS = tuple(tir.Var(f"v_{d}", d) for d in DTYPES)


def expression_func(expr: tir.PrimExpr) -> tir.PrimFunc:
    """`out[0] = expr` over one scalar param of every dtype."""
    data = tir.Var("out", "handle", pointee=(expr.dtype, "global"))
    out = tir.Buffer("out", data, expr.dtype, (tir.IntImm("int64", 1),))
    handle = tir.Var("out", "handle")
    store = tir.BufferStore(out, expr, (tir.IntImm("int32", 0),))
    return tir.PrimFunc(
        (handle, *SCALARS), ((handle, out),), store, attrs=(("global_symbol", "main"),)
    )


@given(
    st.sampled_from(DTYPES).flatmap(
        lambda d: tst.tir_exprs(d, SCALARS, runnable=True, max_depth=4, dtypes=DTYPES)
    ),
    SEEDS,
)
def test_expressions_match_reference(expr: tir.PrimExpr, seed: int) -> None:
    """Every operator, Select/if_then_else, min/max, comparisons, logic, casts and
    exact intrinsics, nested four deep over literals (extremes, -0.0, inf, NaN)."""
    check_program(expression_func(expr), seed)


# ---------------------------------------------------------------- focused semantics

DIVISION = """
@T.prim_func
def main(A: T.Buffer(({n},), "{d}"), B: T.Buffer(({n},), "{d}"), k: T.{d},
         C: T.Buffer((12, {n}), "{d}")):
    for i in range({n}):
        C[0, i] = T.floordiv(A[i], B[i])
        C[1, i] = T.floormod(A[i], B[i])
        C[2, i] = T.truncdiv(A[i], B[i])
        C[3, i] = T.truncmod(A[i], B[i])
        C[4, i] = T.floordiv(A[i], T.{d}({c}))
        C[5, i] = T.floormod(A[i], T.{d}({c}))
        C[6, i] = T.truncdiv(A[i], T.{d}({c}))
        C[7, i] = T.truncmod(A[i], T.{d}({c}))
        C[8, i] = T.floordiv(A[i], k)
        C[9, i] = T.floormod(k, B[i])
        C[10, i] = T.truncdiv(k, B[i])
        C[11, i] = T.truncmod(A[i], k)
"""


def int_values(dtype: str) -> st.SearchStrategy[int]:
    low, high = reference_ops.int_range(dtype)
    edges = sorted({low, high, 0, 1, max(low, -1), max(low, -7), min(high, 3), low + 1})
    return st.one_of(st.sampled_from(edges), st.integers(low, high))


@st.composite
def division_cases(draw: st.DrawFn) -> tuple[str, list[int], list[int], int, int]:
    dtype = draw(st.sampled_from(INTS))
    values = st.lists(int_values(dtype), min_size=1, max_size=8)
    a, b = draw(values), draw(values)
    n = min(len(a), len(b))
    return dtype, a[:n], b[:n], draw(int_values(dtype)), draw(int_values(dtype))


@given(division_cases())
@example(("int32", [-(2**31), 7, -7, 0], [-1, 0, 2, -3], -1, 0))
@example(("int8", [-128, -128, 127, -3], [-1, 3, -128, 2], -128, -1))
def test_integer_division_flavours(case: tuple[str, list[int], list[int], int, int]) -> None:
    """floordiv/floormod/truncdiv/truncmod on every int dtype, negative operands,
    divisors from memory, literals (the unguarded fast path) and scalar params;
    division by zero gives 0 and INT_MIN / -1 wraps."""
    dtype, a, b, c, k = case
    func = parse_func(DIVISION.format(n=len(a), d=dtype, c=c))
    want = np.zeros((12, len(a)), dtype)
    got = want.copy()
    args = (np.array(a, dtype), np.array(b, dtype), k)
    compile_prim_funcs({"main": func})["main"](*args[:3], got)
    run_prim_func(func, *args[:3], want)
    np.testing.assert_array_equal(got, want)


OPERATORS = """
@T.prim_func
def main(A: T.Buffer(({n},), "{d}"), B: T.Buffer(({n},), "{d}"), C: T.Buffer((8, {n}), "{d}"),
         D: T.Buffer((6, {n}), "bool")):
    for i in range({n}):
        C[0, i] = T.min(A[i], B[i])
        C[1, i] = T.max(A[i], B[i])
        C[2, i] = T.Select(A[i] < B[i], A[i], B[i])
        C[3, i] = T.if_then_else(A[i] >= B[i], A[i] - B[i], B[i] * A[i])
        C[4, i] = A[i] + B[i]
        C[5, i] = T.Div(A[i], B[i])
        C[6, i] = T.Select(A[i] != B[i], T.min(B[i], A[i]), T.max(B[i], A[i]))
        C[7, i] = T.Mod(A[i], B[i])
        D[0, i] = A[i] == B[i]
        D[1, i] = A[i] != B[i]
        D[2, i] = A[i] < B[i]
        D[3, i] = A[i] <= B[i]
        D[4, i] = A[i] > B[i]
        D[5, i] = A[i] >= B[i]
"""


def edge_values(dtype: str) -> st.SearchStrategy[object]:
    if dt.is_float(dtype):
        edges = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]
        return st.one_of(st.sampled_from(edges), st.floats(width=dt.bits(dtype)))
    return int_values(dtype)


@st.composite
def operator_cases(draw: st.DrawFn) -> tuple[str, list[object], list[object]]:
    dtype = draw(st.sampled_from(DTYPES[1:]))
    values = st.lists(edge_values(dtype), min_size=1, max_size=8)
    a, b = draw(values), draw(values)
    n = min(len(a), len(b))
    return dtype, a[:n], b[:n]


@given(operator_cases())
@example(("float32", [math.nan, 1.0, -0.0, 0.0], [1.0, math.nan, 0.0, -0.0]))
def test_select_min_max_comparisons(case: tuple[str, list[object], list[object]]) -> None:
    """min/max are selects on an ordered `<`/`>` (NaN and signed zeros pick a side),
    comparisons are ordered except `!=`, Select evaluates both sides."""
    dtype, a, b = case
    func = parse_func(OPERATORS.format(n=len(a), d=dtype))
    inputs = (np.array(a, dtype), np.array(b, dtype))
    want = (np.zeros((8, len(a)), dtype), np.zeros((6, len(a)), "bool"))
    got = (want[0].copy(), want[1].copy())
    compile_prim_funcs({"main": func})["main"](*inputs, *got)
    interpreter = Interpreter(func)
    interpreter.run(*inputs, *want)
    if interpreter.overflows:  # `A + B` wrapped: nsw poison, skip that row
        got[0][4], want[0][4] = 0, 0
    assert_same(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


CAST = """
@T.prim_func
def main(A: T.Buffer(({n},), "{s}"), x: T.{s}, B: T.Buffer(({n1},), "{d}")):
    for i in range({n}):
        B[i] = T.Cast("{d}", A[i])
    B[{n}] = T.Cast("{d}", x)
"""


def cast_values(src: str, dst: str) -> st.SearchStrategy[object]:
    """Values of `src` whose conversion to `dst` is defined (floats going to an
    integer type must truncate into its range)."""
    if src == "bool":
        return st.booleans()
    if not dt.is_float(src):
        return int_values(src)
    floats = st.floats(width=dt.bits(src))
    if dt.is_float(dst) or dst == "bool":
        return floats
    low, high = reference_ops.int_range(dst)

    def fit(parts: tuple[int, float]) -> float:
        whole, fraction = parts
        value = float(np.array(whole + fraction).astype(src))  # as the parser rounds it
        return value if low - 1 < value < high + 1 else fraction

    return st.tuples(int_values(dst), st.floats(-0.99, 0.99)).map(fit)


@st.composite
def cast_cases(draw: st.DrawFn) -> tuple[str, str, list[object]]:
    src, dst = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES))
    return src, dst, draw(st.lists(cast_values(src, dst), min_size=2, max_size=8))


@given(cast_cases())
@example(("int64", "float32", [2**62 + 2**38 + 1, -(2**63)]))  # rounds once, not via double
@example(("uint64", "float16", [65519, 2**64 - 1]))
@example(("float64", "float16", [65519.99, 2.9802322387695312e-08]))
@example(("float16", "int8", [-128.9, 127.5]))
def test_casts_between_every_dtype_pair(case: tuple[str, str, list[object]]) -> None:
    src, dst, values = case
    n = len(values) - 1
    func = parse_func(CAST.format(n=n, n1=n + 1, s=src, d=dst))
    a = np.array(values[:n], src)
    x = np.array(values[n:], src)[0].item()  # the scalar, rounded to `src` first
    want = np.zeros(n + 1, dst)
    got = want.copy()
    compile_prim_funcs({"main": func})["main"](a, x, got)
    run_prim_func(func, a, x, want)
    assert_same(got, want)


MATH = """
@T.prim_func
def main(A: T.Buffer(({n},), "{d}"), B: T.Buffer(({n},), "{d}"), C: T.Buffer(({n},), "{d}")):
    for i in range({n}):
        C[i] = T.{op}({args})
"""
BINARY_MATH = ["pow", "atan2", "hypot", "fmod", "nextafter", "copysign"]
UNARY_MATH = sorted(set(reference_ops.FLOAT_INTRINSICS) - {"ldexp", *BINARY_MATH})


@st.composite
def math_cases(draw: st.DrawFn) -> tuple[str, str, list[float], list[float]]:
    dtype = draw(st.sampled_from(FLOATS))
    op = draw(st.sampled_from(UNARY_MATH + BINARY_MATH))
    values = st.lists(st.floats(width=dt.bits(dtype)), min_size=1, max_size=8)
    a, b = draw(values), draw(values)
    n = min(len(a), len(b))
    return dtype, op, a[:n], b[:n]


@given(math_cases())
def test_math_intrinsics_within_ulps(case: tuple[str, str, list[float], list[float]]) -> None:
    """libm (through LLVM) against NumPy in float64 rounded once: a few ulps apart
    at most, NaN where the other has NaN. float16 math runs in float32 in both."""
    dtype, op, a, b = case
    args = "A[i]" if op in UNARY_MATH else "A[i], B[i]"
    func = parse_func(MATH.format(n=len(a), d=dtype, op=op, args=args))
    inputs = (np.array(a, dtype), np.array(b, dtype))
    want = np.zeros(len(a), dtype)
    got = want.copy()
    compile_prim_funcs({"main": func})["main"](*inputs, got)
    run_prim_func(func, *inputs, want)
    assert_same(got, want, ulps=1 if dtype == "float16" else 4)


# ---------------------------------------------------------------- written by hand

RNG = np.random.default_rng(5)
HAND_WRITTEN = {
    "match_buffer_tiles": (
        """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(2, 2):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            S = T.match_buffer(A[vi * 2:vi * 2 + 2, vj * 4:vj * 4 + 4], (2, 4), strides=(8, 1))
            D = T.match_buffer(B[vi * 2:vi * 2 + 2, vj * 4:vj * 4 + 4], (2, 4))
            for x, y in T.grid(2, 4):
                D[x, y] = S[x, y] * T.float32(2) + T.Cast("float32", vi * 10 + x)
""",
        [((4, 8), "float32"), ((4, 8), "float32")],
    ),
    "match_buffer_rows_reduce": (
        """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            row = T.match_buffer(A[vi, 0:8], (8,))
            for k in range(8):
                B[k] = B[k] + row[k]
""",
        [((4, 8), "float32"), ((8,), "float32")],
    ),
    "ramp_broadcast_select": (
        """
@T.prim_func
def main(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(4):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i, 4, 4)] * T.Broadcast(3, 4) + T.Ramp(0, -1, 4)
    for i in range(2):
        B[T.Ramp(i, 2, 4)] = T.Select(
            A[T.Ramp(i, 2, 4)] > T.Broadcast(0, 4), A[T.Ramp(i, 2, 4)], T.Broadcast(-5, 4)
        )
""",
        [((16,), "int32"), ((16,), "int32")],
    ),
    "strided_let_parallel_vectorized": (
        """
@T.prim_func
def main(A: T.Buffer((3, 4), "int16", strides=(10, 2)), B: T.Buffer((3, 4), "int16"),
         k: T.int16):
    assert k < T.int16(100), "k too big"
    y = T.int16()
    for i in T.parallel(3):
        for j in T.vectorized(4):
            x: T.int16 = A[i, j] * k
            B[i, j] = T.Let(y * y - x, where={y: x + T.int16(1)})
""",
        [((3, 4), "int16", (10, 2)), ((3, 4), "int16"), 7],
    ),
    "symbolic_shape": (
        """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 3), "float64")
    B = T.match_buffer(b, (n,), "float64")
    for i in T.unroll(n):
        B[i] = T.float64(0)
        for j in range(1, 3):
            B[i] = B[i] + A[i, j] / T.float64(3)
""",
        [((5, 3), "float64"), ((5,), "float64")],
    ),
    "while_break_continue": (
        """
@T.prim_func
def main(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        n = T.alloc_local((1,), "int32")
        n[0] = 0
        while n[0] < 12:
            n[0] = n[0] + 1
            if n[0] == A[i]:
                break
        B[i] = n[0]
    for i in range(16):
        if A[i] % 2 == 0:
            continue
        B[i] = B[i] + 1000
""",
        [((16,), "int32"), ((16,), "int32")],
    ),
    "decl_buffer_view": (
        """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    A2 = T.decl_buffer((4, 4), "float32", data=A.data)
    for i, j in T.grid(4, 4):
        B[i * 4 + j] = A2[j, i]
""",
        [((16,), "float32"), ((16,), "float32")],
    ),
    "reduction_where_and_late_init": (
        """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32"),
         D: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in range(2, 8):
            with T.block("sum"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(8, k)
                T.where(i < 6)
                with T.init():
                    C[vi] = T.float32(1)
                C[vi] = C[vi] + A[vi, vk]
    for i, k in T.grid(8, 6):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                D[vi] = T.min_value("float32")
            D[vi] = T.max(D[vi], A[vi, vk + 2])
""",
        [((8, 8), "float32"), ((8,), "float32"), ((8,), "float32")],
    ),
}


def _argument(spec: object) -> object:
    if not isinstance(spec, tuple):
        return spec
    shape, dtype, *strides = spec
    if not strides:
        return random_values(dtype, RNG, int(np.prod(shape))).reshape(shape)
    size = 1 + sum((n - 1) * s for n, s in zip(shape, strides[0], strict=True))
    base = random_values(dtype, RNG, size)
    return np.lib.stride_tricks.as_strided(base, shape, [s * base.itemsize for s in strides[0]])


def _copy(arg: object) -> object:
    """A copy with the same strides (over fresh memory)."""
    if not isinstance(arg, np.ndarray):
        return arg
    span = 1 + sum((n - 1) * s for n, s in zip(arg.shape, arg.strides, strict=True))
    view = np.lib.stride_tricks.as_strided(
        np.zeros(span // arg.itemsize, arg.dtype), arg.shape, arg.strides
    )
    view[...] = arg
    return view


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_programs_match_reference(name: str) -> None:
    """What the strategies do not draw: match_buffer views, vectors, strided and
    symbolic buffers, T.Let, asserts, while/break/continue, decl_buffer."""
    text, specs = HAND_WRITTEN[name]
    func = parse_func(text)
    args = [_argument(spec) for spec in specs]
    kernel_args, ref_args = [_copy(a) for a in args], [_copy(a) for a in args]
    compile_prim_funcs({"main": func})["main"](*kernel_args)
    run_prim_func(func, *ref_args)
    for got, want in zip(kernel_args, ref_args, strict=True):
        if isinstance(got, np.ndarray):
            assert_same(got, want)


def test_failed_assert_raises_like_the_kernel() -> None:
    text, specs = HAND_WRITTEN["strided_let_parallel_vectorized"]
    func = parse_func(text)
    args = [_argument(spec) for spec in specs[:2]]
    with pytest.raises(tvmlite.TVMLiteError, match="assertion failed: k too big"):
        compile_prim_funcs({"main": func})["main"](*args, 100)
    with pytest.raises(tvmlite.TVMLiteError, match="assertion failed: k too big"):
        run_prim_func(func, *args, 100)


# ---------------------------------------------------------------- the evaluator itself


def test_reference_integer_semantics_by_definition() -> None:
    """The reference's division is the textbook one (Python's floor, truncation by
    sign), whatever the codegen does."""
    for a in range(-9, 10):
        for b in [-4, -3, -1, 1, 2, 5]:
            trunc = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            assert reference_ops.int_binary("floordiv", a, b, "int32", None) == a // b
            assert reference_ops.int_binary("floormod", a, b, "int32", None) == a % b
            assert reference_ops.int_binary("div", a, b, "int32", None) == trunc
            assert reference_ops.int_binary("mod", a, b, "int32", None) == a - trunc * b
    assert reference_ops.int_binary("floordiv", 5, 0, "int32", None) == 0
    assert reference_ops.int_binary("div", -128, -1, "int8", None) == -128
    assert reference_ops.make(300, "uint8") == 44
    assert reference_ops.cast(np.float32(-2.9), "int8") == -2
    assert reference_ops.int_to_float(2**62 + 2**38 + 1, "float32") == np.float32(2**62 + 2**39)


UNDEFINED = {
    "out of bounds": "A[4] = T.float32(1)",
    "read before write": "S = T.alloc_buffer((2,))\n    A[0] = S[1]",
    "float to int overflow": "A[0] = T.Cast('float32', T.Cast('int8', A[1] * T.float32(1e6)))",
    # (A holds ones: the amount is 32 at run time; a constant 32 is a parse error)
    "shift by the width": (
        "A[0] = T.Cast('float32', T.shift_left(T.int32(1), T.Cast('int32', A[1]) * 32))"
    ),
}


@pytest.mark.parametrize("name", sorted(UNDEFINED))
def test_reference_refuses_undefined_behaviour(name: str) -> None:
    text = f"""
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    {UNDEFINED[name]}
"""
    with pytest.raises(UndefinedBehavior):
        run_prim_func(parse_func(text), np.ones(4, "float32"))


def test_reference_records_signed_wrap_around() -> None:
    func = parse_func(
        """
@T.prim_func
def main(A: T.Buffer((1,), "int64"), x: T.int64):
    A[0] = T.int64(-9223372036854775808) + x
"""
    )
    out = np.zeros(1, "int64")
    interpreter = Interpreter(func)
    interpreter.run(out, -4)
    assert out[0] == 2**63 - 4 and interpreter.overflows


# ---------------------------------------------------------------- regressions
# Bugs the reference evaluator found, each fixed at its source.

REGRESSIONS = {
    # llvm.copysign was declared unary (llvmlite's default signature): the verifier
    # rejected it, for every float dtype.
    **{
        f"copysign_{d}": (
            f"""
@T.prim_func
def main(A: T.Buffer((2,), "{d}")):
    A[0] = T.copysign(A[0], A[1])
""",
            [np.array([1.5, -2.0], d)],
        )
        for d in FLOATS
    },
    "copysign_vector": (
        """
@T.prim_func
def main(A: T.Buffer((8,), "float64"), B: T.Buffer((4,), "float64")):
    B[T.Ramp(0, 1, 4)] = T.copysign(A[T.Ramp(0, 1, 4)], A[T.Ramp(4, 1, 4)])
""",
        [np.array([1.5, -2, 0, -0.0, -1, 1, -0.0, 0.0]), np.zeros(4)],
    ),
    # Intrinsics on vector types crashed: llvmlite has no `intrinsic_name` for them.
    **{
        f"vector_{op}_{d}": (
            f"""
@T.prim_func
def main(A: T.Buffer((4,), "{d}"), B: T.Buffer((4,), "{d}")):
    B[T.Ramp(0, 1, 4)] = T.{op}(A[T.Ramp(0, 1, 4)])
""",
            [np.array([0.0, 1.5, -2.25, 4.0], d), np.zeros(4, d)],
        )
        for op in ("exp", "floor", "sqrt", "fabs", "round")
        for d in FLOATS
    },
    "vector_pow": (
        """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    B[T.Ramp(0, 1, 4)] = T.pow(A[T.Ramp(0, 1, 4)], A[T.Ramp(0, 1, 4)])
""",
        [np.array([0.5, 1.5, 2.0, 3.0], "float32"), np.zeros(4, "float32")],
    ),
    "vector_popcount_clz": (
        """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((8,), "int32")):
    B[T.Ramp(0, 1, 4)] = T.popcount(A[T.Ramp(0, 1, 4)])
    B[T.Ramp(4, 1, 4)] = T.clz(A[T.Ramp(0, 1, 4)])
""",
        [np.array([1, 7, -1, 1024], "int32"), np.zeros(8, "int32")],
    ),
    # The argument binder keyed buffers by name: B's dtype was checked against B_1's.
    "params_sharing_a_name": (
        """
@T.prim_func
def main(B: T.Buffer((1,), "int8"), B_1: T.Buffer((1,), "bool")):
    B[0] = T.int8(-128)
""",
        [np.zeros(1, "int8"), np.zeros(1, "bool")],
    ),
}


def _named_alike(func: tir.PrimFunc) -> tir.PrimFunc:
    """`func` with every buffer param named `B` (printing calls the second `B_1`)."""
    buffers = []
    for _, buffer in func.buffer_map:
        data = tir.Var("B", "handle", pointee=(buffer.dtype, "global"))
        buffers.append((tir.Var("B", "handle"), tir.Buffer("B", data, buffer.dtype, buffer.shape)))
    renamed = dict(zip([b for _, b in func.buffer_map], [b for _, b in buffers], strict=True))
    store = func.body
    assert isinstance(store, tir.BufferStore)
    body = tir.BufferStore(renamed[store.buffer], store.value, store.indices)
    return tir.PrimFunc(tuple(h for h, _ in buffers), tuple(buffers), body, attrs=func.attrs)


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regressions(name: str) -> None:
    text, args = REGRESSIONS[name]
    func = parse_func(text)
    if name == "params_sharing_a_name":
        func = _named_alike(func)
    want = [a.copy() for a in args]
    run_prim_func(func, *want)
    compile_prim_funcs({"main": func})["main"](*args)
    for got, expected in zip(args, want, strict=True):
        assert_same(got, expected, ulps=1)


def test_params_sharing_a_name_are_told_apart() -> None:
    """Checks and messages go by position; the messages use the printed names."""
    text, _ = REGRESSIONS["params_sharing_a_name"]
    func = _named_alike(parse_func(text))
    kernel = compile_prim_funcs({"main": func})["main"]
    assert repr(kernel) == "<PrimFuncKernel main(B, B_1)>"
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'B_1': expected dtype bool"):
        kernel(np.zeros(1, "int8"), np.zeros(1, "int8"))
    read_only = np.zeros(1, "int8")
    read_only.flags.writeable = False
    kernel(np.zeros(1, "int8"), read_only.view("bool"))  # B_1 is only read
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'B': the array is read-only"):
        kernel(read_only, np.zeros(1, "bool"))
