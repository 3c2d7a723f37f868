"""Nothing a user writes reaches LLVM in a form that makes its verifier or a fatal
error fire, or makes the compiled code crash or hang (issue 9): one test per place
the audit of user data flowing into llvmlite found open. Text is rejected with a
located error where it is parsed; IR built in code, which skips the parser, is
refused by the code generator with a TVMLiteError; values known only at run time
are guarded in the generated code."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.lowering import compile_prim_funcs

Error = tvmlite.TVMLiteError


def prim(params: str, body: str) -> tir.PrimFunc:
    text = f"from tvm.script import tir as T\n\n@T.prim_func\ndef main({params}):\n" + "".join(
        f"    {line}\n" for line in body.splitlines()
    )
    return tvmlite.parse(text, filename="m.tvms")


def build(params: str, body: str, **kw) -> tvmlite.Executable:
    return tvmlite.build(prim(params, body), cache=False, **kw)


def graph(text: str, **kw) -> tvmlite.Executable:
    header = "from tvm.script import relax as R\nfrom tvm.script import tir as T\n\n"
    return tvmlite.build(tvmlite.parse(header + text, filename="m.tvms"), cache=False, **kw)


A8 = 'A: T.Buffer((8,), "float32")'


def with_value(func: tir.PrimFunc, value: tir.PrimExpr) -> tir.PrimFunc:
    """`func` (whose body is one store) storing `value` instead: IR built in code,
    which the parser's checks never see."""
    store = func.body
    assert isinstance(store, tir.BufferStore)
    body = tir.BufferStore(store.buffer, value, store.indices)
    return tir.PrimFunc(func.params, func.buffer_map, body, func.ret_type, func.attrs)


# ---------------------------------------------------------------- T.call_extern


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ('sqrtf\\"; x', "is not the name of an external C function"),
        ("tvmlite_entry_main", "is not the name of an external C function"),
        ("no_such_function_anywhere", "C function 'no_such_function_anywhere' is not loaded"),
    ],
)
def test_call_extern_names_are_checked(name: str, message: str) -> None:
    """An unresolved name was a call of address 0 (a crash); a name that is not a
    C identifier was LLVM text."""
    with pytest.raises(Error, match=message):
        build(A8, f'A[0] = T.call_extern("float32", "{name}", A[1])')


def test_call_extern_resolves_and_runs() -> None:
    a = np.full(8, 9, "float32")
    build(A8, 'A[0] = T.call_extern("float32", "sqrtf", A[1])')["main"](a)
    assert a[0] == 3


@pytest.mark.parametrize(
    "body",
    [
        'A[0] = T.call_extern("float32", "sqrtf", A[1]) + T.call_extern("float32", "sqrtf", A[1], A[2])',
        # `free` is also the kernel's own (for scratch memory): one type per name.
        'B = T.alloc_buffer((8,))\nB[1] = A[1]\nA[0] = T.call_extern("float32", "free", B[1])',
    ],
)
def test_one_c_declaration_per_name(body: str) -> None:
    """Two types for one C name were LLVM's 'invalid redefinition' or a call with
    the wrong type (the verifier)."""
    with pytest.raises(Error, match=r"C function '(sqrtf|free)' is called as .* declared as"):
        build(A8, body)


# ---------------------------------------------------------------- intrinsics


def _code_built(value_of) -> Exception:
    func = prim(A8 + ", n: T.int32", "A[0] = A[1]")
    load = func.body.value
    n = func.params[1]
    with pytest.raises(Error) as info:
        compile_prim_funcs({"main": with_value(func, value_of(load, n))})
    assert "LLVM" not in str(info.value) and "verifier" not in str(info.value)
    return info.value


@pytest.mark.parametrize(
    ("value_of", "message"),
    [
        # llvm.pow.i32 does not exist: the "Intrinsic has incorrect return type"
        (lambda x, n: tir.Call("float32", "pow", (x, tir.Cast("float64", x))), "T.pow of float32"),
        (lambda x, n: tir.Cast("float32", tir.Call("int32", "pow", (n, n))), "T.pow needs float"),
        (lambda x, n: tir.Cast("float32", tir.Call("int32", "sqrt", (n,))), "T.sqrt needs float"),
        (lambda x, n: tir.Call("float32", "popcount", (x,)), "T.popcount needs int"),
        (lambda x, n: tir.Call("float32", "isnan", (n,)), "T.isnan needs float"),
        (lambda x, n: tir.Call("float32", "fabs", (tir.Cast("float64", x),)), "has operands of"),
        (
            lambda x, n: tir.Call("float32", "reinterpret", (tir.Cast("float64", x),)),
            "T.reinterpret cannot change float64 into float32",
        ),
    ],
)
def test_intrinsic_operands_are_checked(value_of, message: str) -> None:
    assert message in str(_code_built(value_of))


def test_integer_fmod_by_zero_does_not_trap() -> None:
    """`srem` by 0 is a SIGFPE; fmod on integers is truncmod with its guard."""
    a = np.array([7, 0, 5, 0, 0, 0, 0, 0], "int32")
    b = np.array([0, 2, 0, 0, 0, 0, 0, 0], "int32")
    build('A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")', "A[1] = T.fmod(A[0], B[0])")[
        "main"
    ](a, b)
    assert a[1] == 0  # TIR's x % 0, as the other integer divisions give


# ---------------------------------------------------------------- memory


@pytest.mark.parametrize("size", ["T.int64(2**62)", "T.int64(2**40) * T.int64(2**22)", "n"])
def test_scratch_sizes_beyond_memory_fail_cleanly(size: str) -> None:
    """A byte count beyond int64 wrapped to a small block that the kernel then
    overran; a negative count was the same. Both now fail as out of memory."""
    ex = build(
        A8 + ", n: T.int64",
        f"B = T.alloc_buffer(({size},))\nfor i in range(n):\n    B[i] = A[i]\nA[0] = B[n - 1]",
    )
    with pytest.raises(Error, match="out of memory allocating a scratch buffer"):
        ex["main"](np.ones(8, "float32"), -5 if size == "n" else 3)


# ---------------------------------------------------------------- printf formats


def test_packed_names_are_not_printf_formats() -> None:
    """Error texts are snprintf formats: a user's `%s` or `%n` read or wrote
    through pointers that were never passed."""
    ex = graph(
        "@R.function(pure=False)\ndef main(x: R.Tensor((4,), 'float32')):\n"
        "    y = R.call_packed('my%s%n%d', x, sinfo_args=R.Tensor((4,), 'float32'))\n"
        "    return y\n"
    )
    with pytest.raises(Error, match="packed function 'my%s%n%d' is not registered"):
        ex["main"](np.ones(4, "float32"))


def test_dims_with_percent_are_not_printf_formats() -> None:
    ex = graph(
        "@R.function\ndef main(x: R.Tensor(('n',), 'float32'), p: R.Prim(value='n % 3')):\n"
        "    return x\n"
    )
    with pytest.raises(Error, match=r"expected the value n % 3 = 2, got 0"):
        ex["main"](np.ones(5, "float32"), 0)


# ---------------------------------------------------------------- strings


def test_strings_that_are_no_c_strings() -> None:
    with pytest.raises(tvmlite.ParseError, match=r"invalid escape '\\ud800' \(a lone surrogate\)"):
        prim(A8, 'assert A[0] > T.float32(0), "bad \\ud800"\nA[1] = A[0]')
    # A NUL would cut the name: `a\0b` was looked up as `a`.
    with pytest.raises(Error, match=r"packed function name 'a\\x00b' cannot be written"):
        graph(
            "@R.function(pure=False)\ndef main(x: R.Tensor((4,), 'float32')):\n"
            "    y = R.call_packed('a\\x00b', x, sinfo_args=R.Tensor((4,), 'float32'))\n"
            "    return y\n"
        )
    # IR built in code may hold a lone surrogate: compiled code holds its escape,
    # and the error raised in Python is the text as built.
    func = prim(A8, 'assert A[0] > T.float32(0), "bad"\nA[1] = A[0]')
    check = func.body.seq[0] if isinstance(func.body, tir.SeqStmt) else func.body
    odd = tir.AssertStmt(check.condition, check.error_kind, ("bad \ud800",))
    body = tir.SeqStmt((odd, *func.body.seq[1:]))
    code_built = tir.PrimFunc(func.params, func.buffer_map, body, None, func.attrs)
    with pytest.raises(Error, match="assertion failed: bad \ud800"):
        tvmlite.build(code_built, cache=False)["main"](np.zeros(8, "float32"))


# ---------------------------------------------------------------- vectors


def test_lane_by_lane_code_is_capped() -> None:
    """65535 lanes of libm calls (or of a strided access) took LLVM hours."""
    with pytest.raises(Error, match=r"T.sqrt on 65535 lanes would be compiled lane by lane"):
        build(
            A8,
            "B = T.alloc_buffer((65535,))\n"
            "B[0:65535] = T.sqrt(T.Broadcast(A[0], 65535))\nA[0] = B[7]",
        )
    with pytest.raises(Error, match=r"a load of 'B' at a non-contiguous index on 2000 lanes"):
        build(A8, "B = T.alloc_buffer((4000,))\nB[0:2000] = B[0:4000:2]\nA[0] = B[7]")


def test_buffers_numpy_cannot_hold_are_refused_at_call() -> None:
    ex = build('A: T.Buffer((4,), "float32x4"), B: T.Buffer((4,), "float32")', "B[0] = B[1]")
    with pytest.raises(Error, match="parameter 'A': no NumPy array has dtype float32x4"):
        ex["main"](np.zeros(4, "float32"), np.zeros(4, "float32"))


# ---------------------------------------------------------------- loops


@pytest.mark.parametrize(
    ("bounds", "n", "count"),
    [
        ("0, 10, 3", 0, 4),
        ("0, 4, n", 0, 0),  # a step of 0 at run time looped forever
        ("0, 4, n", -2, 0),
        ("0, 4, n", 3, 2),
        # the last step passes INT32_MAX: it wrapped and the loop never ended
        ("2147483600, 2147483647, 100", 0, 1),
        ("n, 2147483647, 7", 2147483630, 3),
        ("T.int64(2**63 - 60), T.int64(2**63 - 1), T.int64(100)", 0, 1),
    ],
)
def test_stepped_loops_end(bounds: str, n: int, count: int) -> None:
    a = np.zeros(8, "float32")
    build(A8 + ", n: T.int32", f"for i in range({bounds}):\n    A[0] = A[0] + T.float32(1)")[
        "main"
    ](a, n)
    assert a[0] == count
