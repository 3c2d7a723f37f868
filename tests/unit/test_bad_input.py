"""No input makes `tvmlite.parse` raise anything but a located ParseError, hang,
or run code: random text, and mutants of real modules."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
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


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    tokens = re.findall(r"\w+|[^\w\s]", text)
    op = rng.randrange(8)
    if op == 0:
        del lines[rng.randrange(len(lines))]
    elif op == 1:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif op == 2:
        i = rng.randrange(len(lines))
        lines[i] = " " * rng.choice([1, 3, 5, 12]) + lines[i].lstrip()
    elif op == 3:
        return text[: rng.randrange(len(text))]
    elif op == 4:
        return text.replace(rng.choice(tokens), "", 1)
    elif op == 5:
        i = rng.randrange(len(text))
        return (
            text[:i]
            + rng.choice(["\x00", "\u200b", "é", "(", "]", ":", "\t", "\\", "'''"])
            + text[i:]
        )
    elif op == 6:
        words = [t for t in tokens if t.isidentifier()]
        a, b = rng.sample(words, 2)
        return text.replace(a, "\0", 1).replace(b, a, 1).replace("\0", b, 1)
    else:
        return rng.choice(
            [
                text.replace("R.", "R.nosuch_", 1),
                text.replace('"float32"', '"float33"', 1),
                text.replace("T.", "Q.", 1),
                text.replace("T.int64(", "T.int64(-", 1),
            ]
        )
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(8))
def test_mutants_of_real_modules_fail_cleanly(seed):
    rng = random.Random(seed)
    for _ in range(40):
        _parse_or_located_error(_mutate(rng.choice(GOLDEN).read_text(), rng))


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
