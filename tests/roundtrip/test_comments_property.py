"""Comments survive formatting: comments sprinkled at random legal places of the
text of generated programs all come back, in order, and formatting is a fixed
point (`fmt(fmt(x)) == fmt(x)`).

A legal place is any place Python allows a comment in canonical text: a line of
its own before any line (at the indentation of that line or of the line before
it: the end of a body), the end of a line of code, the end of the file.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tvmlite
from tvmlite.dsl.module import CLASSIC, TVM027
from tvmlite.grammar import comment_texts
from tvmlite.printer import format_text, script
from tvmlite.printer.format import PRINTERS_OWN
from tvmlite.testing import strategies as tst

# What a comment may say after its number: quotes, hashes, backslashes, colons,
# brackets, non-ASCII; never a line break.
_WORDS = st.text(st.sampled_from(list("ab #'\"\\:()[]{}=é→\t")), min_size=0, max_size=12).map(
    str.strip
)


@st.composite
def sprinkled(draw: Any, programs: st.SearchStrategy[Any], dialect: str) -> tuple[str, Any, list]:
    """(text with comments, the program, the comments in text order)."""
    program = draw(programs)
    lines = script(program, dialect).rstrip("\n").split("\n")
    out: list[str] = []
    added: list[str] = []

    def comment() -> str:
        words = draw(_WORDS)
        text = f"# c{len(added)}" + (f" {words}" if words else "")
        added.append(text)
        return text

    for i, line in enumerate(lines):
        code = line.strip()
        if draw(st.integers(0, 4)) == 0:  # a line of its own before this one
            indents = {_indent(line) if code else _indent(_next_code(lines, i))}
            if i and lines[i - 1].strip():
                indents.add(_indent(lines[i - 1]))
            out.append(draw(st.sampled_from(sorted(indents))) + comment())
        if code and not code.startswith("#") and draw(st.integers(0, 4)) == 0:
            line = f"{line}  {comment()}"
        out.append(line)
    if draw(st.booleans()):  # the end of the file, at either end of the indentation
        out.append(draw(st.sampled_from(["", _indent(lines[-1])])) + comment())
    return "\n".join(out) + "\n", program, added


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _next_code(lines: list[str], i: int) -> str:
    return next((line for line in lines[i:] if line.strip()), "")


def check_kept(case: tuple[str, Any, list[str]]) -> None:
    text, program, added = case
    once = format_text(text)
    assert [c for c in comment_texts(once) if c not in PRINTERS_OWN] == added, once
    assert format_text(once) == once
    assert tvmlite.structural_equal(tvmlite.parse(once), program)


PROGRAMS = {
    "module-classic": (tst.ir_modules, {}, CLASSIC),
    "module-0.27": (tst.ir_modules, {"dialect": TVM027}, TVM027),
    "prim-func-classic": (tst.prim_funcs, {}, CLASSIC),
    "relax-function-0.27": (tst.relax_functions, {"dialect": TVM027}, TVM027),
}


@pytest.mark.parametrize("kind", list(PROGRAMS))
@given(data=st.data())
def test_comments_are_kept_in_order_and_formatting_is_a_fixed_point(kind: str, data: Any) -> None:
    make, knobs, dialect = PROGRAMS[kind]
    check_kept(data.draw(sprinkled(make(**knobs), dialect)))
