"""The nesting limit: statements and expressions nested up to it parse, print and
parse back; one level more, or thousands more, is a located ParseError naming the
limit, for every construct that nests (TIR and Relax, expressions, statements,
struct info, attribute values)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import tvmlite
from tvmlite.dsl.parse.scope import MAX_NESTING
from tvmlite.printer import format_text

PRIM = '@T.prim_func\ndef main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):\n'
RELAX = '@R.function\ndef main(x: R.Tensor((4,), "float32"), c: R.Tensor((), "bool")):\n'
IND = "    "


def prim(*lines: str) -> str:
    return PRIM + "".join(IND + line + "\n" for line in lines)


def relax(*lines: str) -> str:
    return RELAX + "".join(IND + line + "\n" for line in lines)


def nested_stmts(n: int, head: str, leaf: str) -> list[str]:
    return [IND * k + head.format(k=k) for k in range(n)] + [IND * n + leaf]


def relax_ifs(n: int) -> list[str]:
    """`n` nested `if c:` whose branches all end by binding `y`."""
    head = [IND * k + "if c:" for k in range(n)]
    tail = []
    for k in reversed(range(n)):
        tail += [IND * (k + 1) + "y = y", IND * k + "else:", IND * (k + 1) + "y = x"]
    return [*head, IND * n + "y = x", *tail]


CASES: dict[str, Callable[[int], str]] = {
    "tir-binary-chain": lambda n: prim("A[0] = " + " + ".join(["A[1]"] * n)),
    "tir-calls": lambda n: prim("B[0] = " + "T.exp(" * n + "B[1]" + ")" * n),
    "tir-subscripts": lambda n: prim("A[0] = " + "A[" * n + "0" + "]" * n),
    "tir-negations": lambda n: prim("A[0] = " + "-" * n + "A[1]"),
    "tir-fors": lambda n: prim(*nested_stmts(n, "for i{k} in range(2):", "A[0] = 1")),
    "tir-ifs": lambda n: prim(*nested_stmts(n, "if A[{k}] > 0:", "A[0] = 1")),
    "tir-whiles": lambda n: prim(*nested_stmts(n, "while A[0] > {k}:", "A[0] = 1")),
    "tir-lets": lambda n: prim(*[f"x{k}: T.int32 = {k}" for k in range(n)], "A[0] = x0"),
    "tir-grid": lambda n: prim(
        f"for {', '.join(f'i{k}' for k in range(n))} in T.grid({', '.join(['2'] * n)}):",
        IND + "A[0] = 1",
    ),
    "tir-elifs": lambda n: prim(
        "if A[0] == 0:",
        IND + "A[0] = 1",
        *[line for k in range(n) for line in (f"elif A[0] == {k + 1}:", IND + "A[0] = 1")],
    ),
    "tir-attr-lists": lambda n: prim(
        "T.func_attr({'a': " + "[" * n + "1" + "]" * n + "})", "A[0] = 1"
    ),
    "relax-calls": lambda n: relax("y = " + "R.negative(" * n + "x" + ")" * n, "return y"),
    "relax-binary-chain": lambda n: relax("y = " + " + ".join(["x"] * n), "return y"),
    "relax-tuples": lambda n: relax("y = " + "(" * n + "x" + ",)" * n, "return y"),
    "relax-ifs": lambda n: relax(*relax_ifs(n), "return y"),
    "relax-sinfo": lambda n: relax(
        "y: "
        + "R.Tuple(" * n
        + "R.Tensor((4,), 'float32')"
        + ")" * n
        + " = "
        + "(" * n
        + "x"
        + ",)" * n,  # fmt: skip
        "return y",
    ),
}


INDENTED = ("tir-fors", "tir-ifs", "tir-whiles", "relax-ifs")


def accepts(text: str) -> bool:
    try:
        tvmlite.parse(text, "deep.tvms")
    except tvmlite.ParseError as error:
        assert "nesting limit" in error.message, str(error)
        return False
    return True


def deepest_accepted(make: Callable[[int], str]) -> int:
    """The largest n whose text parses (a parse at n implies one at n - 1)."""
    low, high = 1, MAX_NESTING + 5
    assert accepts(make(low)) and not accepts(make(high))
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if accepts(make(middle)) else (low, middle)
    return low


@pytest.mark.parametrize("case", list(CASES))
def test_nesting_up_to_the_limit_works_and_beyond_it_is_a_located_error(case: str) -> None:
    make = CASES[case]
    deepest = deepest_accepted(make)
    # the function body and the statement holding an expression take a few levels
    assert MAX_NESTING - 5 <= deepest <= MAX_NESTING
    func = tvmlite.parse(make(deepest))
    back = tvmlite.parse(func.script())
    assert tvmlite.structural_equal(back, func)
    # indentation makes statement nests quadratic in size: thousands, not tens of
    top = 1500 if case in INDENTED else 10000
    for n in (deepest + 1, deepest + 2, 196, 2 * MAX_NESTING, 1000, top):
        with pytest.raises(tvmlite.ParseError) as info:
            tvmlite.parse(make(n), "deep.tvms")
        error = info.value
        assert f"the nesting limit is {MAX_NESTING} levels" in error.message
        assert str(error).startswith("deep.tvms:") and error.span is not None
        # located at the construct inside the function that crosses the limit
        assert error.span.line >= 3 and (error.span.line > 3 or error.span.column > 1)


@pytest.mark.parametrize("case", list(CASES))
def test_commented_deep_text_is_a_located_error_when_formatted(case: str) -> None:
    """Comments on every line of a text nested beyond the limit: formatting reports
    the nesting error, located, never an internal error."""
    for n in (MAX_NESTING + 1, 1500 if case in INDENTED else 10000):
        lines = CASES[case](n).split("\n")
        text = "\n".join(f"{line}  # c" if line.strip() else line for line in lines)
        with pytest.raises(tvmlite.ParseError) as info:
            format_text(text, "deep.tvms")
        assert f"the nesting limit is {MAX_NESTING} levels" in info.value.message
        assert str(info.value).startswith("deep.tvms:") and info.value.span is not None


@pytest.mark.parametrize("n", [MAX_NESTING + 5, 1000, 5000])
def test_deep_constant_lists_stop_at_the_limit(n: int) -> None:
    """(NumPy allows 64 dimensions, so this one cannot be shown to work up to the limit.)"""
    text = relax("y = R.const(" + "[" * n + "1" + "]" * n + ", 'int32')", "return x")
    with pytest.raises(tvmlite.ParseError, match=f"nesting limit is {MAX_NESTING} levels"):
        tvmlite.parse(text)


def test_code_at_the_limit_builds_and_runs() -> None:
    """The stages after the parser (verifier, passes, codegen) cope with the deepest
    text the parser lets through."""
    import numpy as np

    for case in ("tir-binary-chain", "tir-fors"):
        make = CASES[case]
        deepest = deepest_accepted(make)
        ex = tvmlite.build(tvmlite.parse(make(deepest)), cache=False)
        a, b = np.zeros(4, "int32"), np.zeros(4, "float32")
        a[1] = 1
        ex["main"](a, b)
        assert a[0] == (deepest if case == "tir-binary-chain" else 1)
