"""No input makes `tvmlite.parse` raise anything but a located ParseError, hang,
or run code: random text and token soup (mutants of real modules are in
tests/fuzz/, which also builds and runs them)."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import tvmlite

GOLDEN = sorted((Path(__file__).parents[1] / "golden" / "corpus").glob("*.tvms"))
LOCATED = re.compile(r"mutant\.tvms:\d+:\d+: error: ")


def _parse_or_located_error(text: str) -> None:
    try:
        tvmlite.parse(text, filename="mutant.tvms")
    except tvmlite.ParseError as err:
        assert LOCATED.match(str(err)), str(err)


@given(st.text(max_size=300))
def test_random_text_fails_cleanly(text):
    _parse_or_located_error(text)


@given(
    st.lists(
        st.sampled_from(
            [
                "@I.ir_module",
                "class",
                "Module",
                ":",
                "\n",
                "    ",
                "def",
                "main",
                "(",
                ")",
                "x",
                ",",
                "R.Tensor",
                "T.Buffer",
                "=",
                "with",
                "T.sblock",
                "for",
                "in",
                "T.grid",
                "[",
                "]",
                "1",
                "return",
                "->",
                '"float32"',
                "R.add",
                "T.prim_func",
                "@R.function",
                "if",
                "else",
            ]
        ),
        max_size=60,
    )
)
def test_random_token_soup_fails_cleanly(tokens):
    _parse_or_located_error(" ".join(tokens))


def test_deep_nesting_is_parsed_or_rejected_cleanly():
    deep = "x = " + "(" * 600 + "1" + ")" * 600 + "\n"
    _parse_or_located_error(deep)
    body = "".join("    " * (k + 1) + f'with T.sblock("b{k}"):\n' for k in range(200))
    text = (
        '@T.prim_func\ndef main(A: T.Buffer((1,), "float32")):\n'
        + body
        + "    " * 201
        + "A[0] = T.float32(1.0)\n"
    )
    _parse_or_located_error(text)


PAYLOAD = "__import__('os').system('touch {marker}')"


def test_text_never_runs_code(tmp_path):
    marker = tmp_path / "pwned"
    payload = PAYLOAD.format(marker=marker)
    base = next(p for p in GOLDEN if p.name.endswith(".legalized.tvms")).read_text()
    probes = [
        base.replace('"float32"', payload, 1),
        base.replace("T.int64(", f"({payload}) or T.int64(", 1),
        base + f"\n{payload}\n",
        base.replace("@R.function", f"@R.function({payload})", 1),
        base.replace("def main(", f"def main(z=({payload}), ", 1),
    ]
    for text in probes:
        try:
            tvmlite.parse(text).script()
        except tvmlite.ParseError:
            pass
    assert not marker.exists()
