"""Notebook HTML stays readable on light and dark themes: the `<pre>` that
notebook style sheets paint carries the style's own background and base colour,
and every colour in it has a WCAG contrast ratio of at least 4.5 against that
background. `TVMLITE_STYLE` picks the default style."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

import pytest

import tvmlite
from tvmlite.printer import highlight

ROOT = Path(__file__).resolve().parents[2]
MLP = (ROOT / "examples" / "mlp.tvms").read_text()
WCAG_AA = 4.5
PRE = re.compile(r'^<div class="tvmlite-script"><pre style="([^"]*)">(.*)</pre></div>$', re.DOTALL)


def _declarations(style: str) -> dict[str, str]:
    pairs = (d.split(":", 1) for d in style.split(";") if ":" in d)
    return {k.strip(): v.strip() for k, v in pairs}


def _colours(markup: str) -> set[str]:
    """Every `color:` value set on an element inside the `<pre>`."""
    found = set()
    for style in re.findall(r'style="([^"]*)"', markup):
        colour = _declarations(style).get("color")
        if colour is not None:
            found.add(colour)
    return found


@pytest.mark.parametrize("style", sorted(highlight.STYLES))
@pytest.mark.parametrize("numbered", [False, True])
def test_builtin_styles_carry_background_and_readable_colours(style: str, numbered: bool) -> None:
    out = highlight.html_text(MLP, style, line_numbers=numbered)
    match = PRE.match(out)
    assert match is not None, out[:200]
    pre = _declarations(match.group(1))
    background, base = pre["background"], pre["color"]
    assert re.fullmatch(r"#[0-9a-fA-F]{6}", background) and re.fullmatch(r"#[0-9a-fA-F]{6}", base)
    colours = _colours(match.group(2)) | {base}
    assert len(colours) > 4  # highlighted, not plain
    for colour in colours:
        ratio = highlight.contrast_ratio(colour, background)
        assert ratio >= WCAG_AA, f"{style}: {colour} on {background} has contrast {ratio:.2f}"
    # The markup is the text: stripping the tags (and the line numbers) gives it back.
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", match.group(2)))
    if numbered:
        text = "".join(line[len(str(MLP.count("\n"))) + 1 :] for line in text.splitlines(True))
    assert text == MLP


def test_light_and_dark_backgrounds_differ_and_ansi_uses_light() -> None:
    def background(style: str) -> str:
        match = PRE.match(highlight.html_text(MLP, style))
        assert match is not None
        return _declarations(match.group(1))["background"]

    assert background("light") == "#ffffff" and background("ansi") == "#ffffff"
    assert background("dark") == "#1e1e1e"
    assert highlight.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)


def test_foreign_pygments_style_gets_its_own_background() -> None:
    match = PRE.match(highlight.html_text(MLP, "monokai"))
    assert match is not None
    pre = _declarations(match.group(1))
    assert pre["background"].lower() == "#272822" and pre["color"].lower() == "#f8f8f2"


def test_tvmlite_style_picks_the_default(monkeypatch) -> None:
    mod = tvmlite.parse(MLP)
    monkeypatch.delenv("TVMLITE_STYLE", raising=False)
    assert "background: #ffffff" in mod._repr_html_()
    monkeypatch.setenv("TVMLITE_STYLE", "dark")
    assert "background: #1e1e1e" in mod._repr_html_()
    assert highlight.default_style(html=False) == "dark"
    monkeypatch.setenv("TVMLITE_STYLE", "nope")
    with pytest.raises(tvmlite.TVMLiteError, match="TVMLITE_STYLE: unknown style 'nope'"):
        mod._repr_html_()
