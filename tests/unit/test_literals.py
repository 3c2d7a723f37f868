"""Numbers that become a shape, an extent, an index or a dtype are checked where
they are parsed, with a located error (issue 9): beyond int64 or the index dtype,
negative, non-integral, infinite. IR built in code gets the same checks from the
node constructors, with an error naming the node and field. A negative dim of a
Relax tensor is the exception: TVM keeps and prints one, so parsing keeps it and
`lower`/`build` refuse it (issue 12)."""

from __future__ import annotations

import re

import pytest

import tvmlite
from tvmlite.dsl import relax, tir


def prim(params: str, body: str) -> str:
    return f"from tvm.script import tir as T\n\n@T.prim_func\ndef main({params}):\n" + "".join(
        f"    {line}\n" for line in body.splitlines()
    )


def graph(shape: str, body: str = "y = R.add(x, x)\nreturn y") -> str:
    return (
        "from tvm.script import relax as R\nfrom tvm.script import tir as T\n\n@R.function\n"
        f'def main(x: R.Tensor({shape}, "float32")):\n'
        + "".join(f"    {line}\n" for line in body.splitlines())
    )


BUF = 'A: T.Buffer((4, 16), "float32")'
STORE = "    A[i, 0] = T.float32(1)"


def located(text: str, culprit: str, message: str, lower: bool = False) -> None:
    """Parsing `text` (then lowering it, with `lower`) fails with `message` (a
    regex), located at the first occurrence of `culprit` in the text."""
    before = text[: text.index(culprit)]
    line, col = before.count("\n") + 1, len(before) - before.rfind("\n")
    with pytest.raises(tvmlite.ParseError) as info:
        parsed = tvmlite.parse(text, filename="m.tvms")
        if lower:
            tvmlite.lower(parsed)
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"m.tvms:{line}:{col}: error: "), first
    assert re.search(message, first), first


# The examples of issue 9, item 3: each was accepted and then crashed, reached
# LLVM's verifier or raised a raw TypeError / OverflowError.
@pytest.mark.parametrize(
    ("text", "culprit", "message"),
    [
        (
            prim(BUF, f"for i, j in T.grid(99999999999, 16):\n{STORE}"),
            "99999999999",
            r"T.grid extent 99999999999 does not fit int32: write T.int64\(99999999999\)",
        ),
        (graph("(8, 10**30)"), "10**30", r"value 10{30} is out of range for int64"),
        (graph("(4, 1e308)"), "1e308", r"a shape dimension must be an integer, got 1e\+308"),
        (graph("(4, 0.5)"), "0.5", r"a shape dimension must be an integer, got 0.5"),
        (graph("(4, 1e999)"), "1e999", r"a shape dimension must be an integer, got inf"),
        (graph("(4, 2**63)"), "2**63", r"value 9223372036854775808 is out of range for int64"),
    ],
)
def test_issue_examples_are_located_errors(text: str, culprit: str, message: str) -> None:
    located(text, culprit, message)


def test_a_negative_tensor_dim_parses_and_lower_refuses_it() -> None:
    text = graph("(4, -1)")
    printed = tvmlite.parse(text).script()
    assert 'R.Tensor((4, -1), dtype="float32")' in printed
    assert tvmlite.parse(printed).script() == printed
    located(text, "-1", r"a shape dimension must not be negative, got -1", lower=True)


@pytest.mark.parametrize(
    ("params", "body", "culprit", "message"),
    [
        ('A: T.Buffer((0.5,), "float32")', "A[0] = A[1]", "0.5", "must be an integer"),
        ('A: T.Buffer((1e999,), "float32")', "A[0] = A[1]", "1e999", "must be an integer"),
        ('A: T.Buffer((2**63,), "float32")', "A[0] = A[1]", "2**63", "out of range for int64"),
        (BUF, f"for i in range(0.5):\n{STORE}", "0.5", "a loop bound must be an integer, got 0.5"),
        (BUF, f"for i in range(1e308):\n{STORE}", "1e308", r"a loop bound .* got 1e\+308"),
        (BUF, f"for i in range(10**30):\n{STORE}", "10**30", r"value 10{30} is out of range"),
        (BUF, f"for i in range(2**63):\n{STORE}", "2**63", "out of range for int64"),
        (BUF, "for i, j in T.grid(0.5, 16):\n    A[i, j] = A[0, 0]", "0.5", "got 0.5"),
        (BUF, f"for i in range(1, 4, 0.5):\n{STORE}", "0.5", "a loop step must be an integer"),
        (BUF, "A[0.5, 0] = T.float32(1)", "0.5", "a buffer index must be an integer, got 0.5"),
        (BUF, "A[T.float32(1), 0] = A[0, 0]", "T.float32(1)", "an integer, got float32"),
        (BUF, "A[0, 0] = A[0, 1e308]", "1e308", r"a buffer index must be .* got 1e\+308"),
        (BUF, "A[0, 0:4.5] = A[0, 0:4]", "4.5", "a slice bound must be an integer, got 4.5"),
        (BUF, "A[10**30, 0] = T.float32(1)", "10**30", "out of range for int64"),
        (BUF, "B = T.alloc_buffer((1e308,))\nA[0, 0] = B[0]", "1e308", "must be an integer"),
        (BUF, "A[0, 0] = T.float32(1e39)", "1e39", "out of range for float32"),
        (BUF, "A[0, 0] = T.Cast('float32', T.int32(2**31))", "2**31", "range for int32"),
        (BUF, "A[0, 0:100000] = A[0, 0:100000]", "0:", "lanes of a slice must be from 1 to"),
        (BUF, "T.evaluate(T.Broadcast(A[0, 1], 0))", "0))", "lanes of T.Broadcast"),
        ('A: T.Buffer((4,), "float32x70000")', "A[0] = A[1]", '"float32x70000"', "unknown"),
        ('A: T.Buffer((4,), "int128")', "A[0] = A[1]", '"int128"', "unknown dtype 'int128'"),
        (
            'A: T.Buffer((4,), "int4")',
            "A[0] = T.int4(8)",
            "8)",
            r"out of range for int4 \(-8 to 7\)",
        ),
        ('A: T.Buffer((4,), "uint4")', "A[0] = T.uint4(16)", "16)", "out of range for uint4"),
        ('A: T.Buffer((4,), "float6_e2m3fn")', "A[0] = T.float6_e2m3fn(8.0)", "8.0", "7.5"),
        ('A: T.Buffer((4,), "float8_e3m4")', "A[0] = T.float8_e3m4(16.0)", "16.0", "15.5"),
        ('A: T.Buffer((4,), "int32")', "A[0] = A[1] << 32", "A[1] <<", "shift amount 32 is"),
        ('A: T.Buffer((4,), "int32")', "A[0] = A[1] ** 2", "A[1] **", "power needs float"),
        ('A: T.Buffer((4,), "int32")', "A[0] = T.pow(A[1], A[2])", "T.pow", "power needs float"),
    ],
)
def test_tir_numbers_are_checked(params: str, body: str, culprit: str, message: str) -> None:
    located(prim(params, body), culprit, message)


@pytest.mark.parametrize(
    ("params", "body", "culprit"),
    [
        ('A: T.Buffer((-1,), "float32")', "A[0] = A[1]", "-1"),
        (BUF, "B = T.decl_buffer((-4,))\nA[0, 0] = B[0]", "-4"),
        (BUF, "B = T.alloc_local((2, -3))\nA[0, 0] = B[0, 0]", "-3"),
    ],
)
def test_a_negative_buffer_dim_parses_and_lower_refuses_it(
    params: str, body: str, culprit: str
) -> None:
    """TVM prints such buffers (`T.alloc_local((-1,))`): kept as written, never built."""
    text = prim(params, body)
    assert tvmlite.parse(tvmlite.parse(text).script()).script() == tvmlite.parse(text).script()
    located(text, culprit, rf"'[AB]': a shape dimension must not be negative, got {culprit}", True)


@pytest.mark.parametrize(
    ("body", "culprit", "message"),
    [
        ("y = R.shape([0.5])", "0.5", "a shape dimension must be an integer, got 0.5"),
        ("y = R.shape([1e308])", "1e308", r"must be an integer, got 1e\+308"),
        ("y = R.shape([T.float32(2)])", "2)", "must be an integer, got float32"),
        ("y = R.shape([2**63])", "2**63", "out of range for int64"),
        ("y = R.zeros((2**63,), 'float32')", "2**63", "out of range for int64"),
        ("y = R.reshape(x, (10**30,))", "10**30", "out of range for int64"),
        ("y = R.prim_value(2**63)", "2**63", "out of range for int64"),
        ("y = R.const(0.5, 'int32')", "0.5", "int32 expects an integer, got 0.5"),
        ("y = R.const([1, 300], 'uint8')", "[1", "value 300 is out of range for uint8"),
        ("y = R.const(1e10, 'float16')", "1e10", "out of range for float16"),
        ("y = R.const(2**40, 'int32')", "2**40", "out of range for int32"),
        ("y = R.tile(x, [2**62])", "R.tile", "out of range for int64"),
    ],
)
def test_graph_numbers_are_checked(body: str, culprit: str, message: str) -> None:
    located(graph("(4,)", body + "\nreturn y"), culprit, message)


def test_values_that_fit_are_kept() -> None:
    """The limits themselves are fine, and literal arithmetic folds as TVM's parser
    (which runs Python) computes it: 2**31 is an int64 dim, 2**31 - 1 an int32."""
    mod = tvmlite.parse(graph("(4, 2**31)"))
    assert mod.params[0].struct_info.shape[1] == tir.IntImm("int64", 2**31)
    func = tvmlite.parse(prim(BUF, f"for i in range(2**31 - 1):\n{STORE}"))
    loop = func.body
    assert isinstance(loop, tir.For) and loop.extent == tir.IntImm("int32", 2**31 - 1)
    wide = tvmlite.parse(prim(BUF, f"for i in range(2**31):\n{STORE}")).body
    assert wide.extent == tir.IntImm("int64", 2**31) and wide.loop_var.dtype == "int64"
    assert tvmlite.parse(prim('A: T.Buffer((4,), "uint64")', "A[0] = T.uint64(2**64 - 1)"))
    assert tvmlite.parse(graph("(4,)", "y = R.shape([-1])\nreturn y"))  # a value, not a size


# ---------------------------------------------------------------- IR built in code

LOOP_VAR = tir.Var("i", "int32")
BUFFER = tir.Buffer("A", tir.Var("A", "handle"), "float32", (tir.IntImm("int32", 4),))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: tir.IntImm("int32", 2**31), r"tir.IntImm\(dtype='int32'.*out of range for int32"),
        (lambda: tir.IntImm("int64", 2**63), "out of range for int64"),
        (lambda: tir.IntImm("uint8", -1), "out of range for uint8"),
        (lambda: tir.FloatImm("float16", 1e5), "out of range for float16"),
        (
            lambda: tir.Buffer(
                "B", tir.Var("B", "handle"), "float32", (tir.FloatImm("float32", 2),)
            ),
            "a shape dimension must be an integer, got float32",
        ),
        (
            lambda: relax.TensorStructInfo((tir.FloatImm("float32", 2),), "float32", 1),
            r"relax.TensorStructInfo.shape\[0\]: a shape dimension must be an integer",
        ),
        (
            lambda: relax.ShapeExpr((tir.FloatImm("float32", 0.5),)),
            r"relax.ShapeExpr.values\[0\]: a shape dimension must be an integer",
        ),
        (
            lambda: relax.ShapeStructInfo((tir.FloatImm("float32", 0.5),), 1),
            r"relax.ShapeStructInfo.values\[0\]",
        ),
        (
            lambda: tir.BufferLoad(BUFFER, (tir.FloatImm("float32", 0.5),), "float32"),
            r"tir.BufferLoad\('A'\).indices\[0\]: a buffer index must be an integer",
        ),
        (
            lambda: tir.BufferStore(
                BUFFER, tir.FloatImm("float32", 1), (tir.FloatImm("float64", 1),)
            ),
            r"tir.BufferStore\('A'\).indices\[0\]",
        ),
        (
            lambda: tir.For(
                LOOP_VAR, tir.IntImm("int32", 0), tir.IntImm("int64", 2**31), "serial", EMPTY
            ),
            r"tir.For\('i'\).extent: the loop bound extent is int64, its var is int32",
        ),
        (
            lambda: tir.For(
                tir.Var("f", "float32"),
                tir.FloatImm("float32", 0),
                tir.FloatImm("float32", 4),
                "serial",
                EMPTY,
            ),
            r"tir.For\('f'\): a loop variable must be an integer, got float32",
        ),
    ],
)
def test_nodes_built_in_code_are_checked(build, message: str) -> None:
    with pytest.raises(tvmlite.TVMLiteError, match=message) as info:
        build()
    assert not isinstance(info.value, tvmlite.ParseError)  # no span: named, not located


EMPTY = tir.Evaluate(tir.IntImm("int32", 0))
