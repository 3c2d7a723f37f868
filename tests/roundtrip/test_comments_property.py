"""Comments survive formatting: comments sprinkled at random legal places of the
text of generated programs, and of the texts TVM printed in tests/golden/corpus
(Relax graphs, dataflow blocks, legalized TIR with blocks, both spellings), all
come back, in order, and formatting is a fixed point (`fmt(fmt(x)) == fmt(x)`).

A legal place is any place Python allows a comment in canonical text: a line of
its own before any line (at the indentation of that line, of the line before it,
which ends a body, or at any other), the end of a line of code, the end of the
file.
"""

from __future__ import annotations

import functools
from pathlib import Path
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

# Python reads a comment line at any indentation, even one no code line has.
_ANY_INDENT = st.integers(0, 17).map(" ".__mul__)


@st.composite
def sprinkled(draw: Any, cases: st.SearchStrategy[tuple[str, Any]]) -> tuple[str, Any, list]:
    """(text with comments, the program, the comments in text order), from `cases`
    of (canonical text, the program it parses to)."""
    text, program = draw(cases)
    lines = text.rstrip("\n").split("\n")
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
            indent = st.sampled_from(sorted(indents)) | _ANY_INDENT
            out.append(draw(indent) + comment())
        if code and not code.startswith("#") and draw(st.integers(0, 4)) == 0:
            line = f"{line}  {comment()}"
        out.append(line)
    if draw(st.booleans()):  # the end of the file
        out.append(draw(st.sampled_from(["", _indent(lines[-1])]) | _ANY_INDENT) + comment())
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


def generated(make: Any, printed: str, **knobs: Any) -> st.SearchStrategy[tuple[str, Any]]:
    """Programs of `make(**knobs)` with their text in the dialect `printed`."""
    return make(**knobs).map(lambda program: (script(program, printed), program))


GOLDEN = sorted((Path(__file__).parents[1] / "golden" / "corpus").glob("*.tvms"))


@functools.cache
def golden(path: Path) -> tuple[str, Any]:
    text = path.read_text()
    return format_text(text), tvmlite.parse(text)


CASES = {
    "module-classic": generated(tst.ir_modules, CLASSIC),
    "module-0.27": generated(tst.ir_modules, TVM027, dialect=TVM027),
    "prim-func-classic": generated(tst.prim_funcs, CLASSIC),
    "relax-function-0.27": generated(tst.relax_functions, TVM027, dialect=TVM027),
    "corpus": st.sampled_from(GOLDEN).map(golden),
}


@pytest.mark.parametrize("kind", list(CASES))
@given(data=st.data())
def test_comments_are_kept_in_order_and_formatting_is_a_fixed_point(kind: str, data: Any) -> None:
    check_kept(data.draw(sprinkled(CASES[kind])))
