"""The Lark internals the front end reads (grammar/lark_internals.py): the pin in
pyproject, a loud error naming the attribute when one is gone, and our LALR loop
and lexer agreeing with Lark's own parser on real texts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import lark
import pytest
from lark import Lark

from tvmlite.diagnostics import Source
from tvmlite.grammar import GRAMMAR, _parser, lark_internals, parse_syntax
from tvmlite.grammar.builder import Placement, SyntaxBuilder
from tvmlite.grammar.indenter import layout
from tvmlite.grammar.lark_internals import LarkInternalsChanged

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = sorted((ROOT / "tests" / "golden" / "corpus").glob("*.tvms"))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def test_pyproject_pins_the_tested_range_and_it_is_installed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (pin,) = [d.removeprefix("lark") for d in project["dependencies"] if d.startswith("lark")]
    assert pin == lark_internals.TESTED, "pyproject's lark pin and lark_internals.TESTED differ"
    low, high = re.fullmatch(r">=([\d.]+),<([\d.]+)", pin).groups()  # type: ignore[union-attr]
    installed = _version(lark.__version__)
    assert _version(low) <= installed < _version(high), f"lark {lark.__version__} is untested"


def test_the_installed_lark_has_everything_the_parser_reads() -> None:
    lark_internals.check(_parser().lark)


_MISSING = object()


class _Patched:
    """`obj` as seen through `path` with its last attribute replaced by `value`
    (or missing)."""

    def __init__(self, obj: Any, path: str, value: Any = _MISSING) -> None:
        self._obj, self._path, self._value = obj, path, value

    def __getattr__(self, name: str) -> Any:
        head, _, rest = self._path.partition(".")
        if name != head:
            return getattr(self._obj, name)
        if rest:
            return _Patched(getattr(self._obj, name), rest, self._value)
        if self._value is _MISSING:
            raise AttributeError(name)
        return self._value


@pytest.mark.parametrize("path", lark_internals.ON_LARK)
def test_a_missing_attribute_is_named(path: str) -> None:
    with pytest.raises(LarkInternalsChanged, match=re.escape(f"Lark.{path}")) as caught:
        lark_internals.check(_Patched(_parser().lark, path))  # type: ignore[arg-type]
    assert f"lark{lark_internals.TESTED}" in str(caught.value)


@pytest.mark.parametrize(
    "states",
    [[{"NAME": (None, 1)}], {0: {"NAME": "shift"}}, {0: {"NAME": (lark_internals.Shift, "s")}}],
)
def test_a_reshaped_table_is_named(states: Any) -> None:
    with pytest.raises(LarkInternalsChanged, match=r"Lark\.parser\.parser\.parser\.parse_table"):
        lark_internals.check(_Patched(_parser().lark, lark_internals.STATES, states))  # type: ignore[arg-type]


def test_a_moved_import_is_named() -> None:
    with pytest.raises(LarkInternalsChanged, match=r"private lark\.lexer\.NoSuchName"):
        lark_internals._imported("lark.lexer", "NoSuchName")


@pytest.fixture(scope="module")
def lark_with_our_builder() -> tuple[Lark, SyntaxBuilder]:
    builder = SyntaxBuilder()
    options = {"parser": "lalr", "lexer": "basic", "maybe_placeholders": True, "cache": True}
    return Lark(GRAMMAR.read_text(), start="module", transformer=builder, **options), builder


@pytest.mark.parametrize("path", GOLDEN[::4], ids=lambda p: p.name)
def test_our_lalr_loop_builds_what_larks_parser_builds(
    path: Path, lark_with_our_builder: tuple[Lark, SyntaxBuilder]
) -> None:
    """Lark's own LALR parser, fed the same tokens and calling the same builder,
    gives the same syntax tree: the table is read as Lark means it."""
    reference, builder = lark_with_our_builder
    text = path.read_text()
    with builder.parsing(Placement(Source(text, path.name))):
        interactive = reference.parse_interactive(start="module")
        for token in layout(_parser().lexer.tokenize(text)):
            interactive.feed_token(token)
        theirs = interactive.feed_eof()
    assert parse_syntax(text, path.name).body == tuple(theirs)
