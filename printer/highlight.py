"""Colour for printed TVMScript: the light, dark and ansi styles, and the ANSI
and HTML renderings that `show()` and notebooks use.

Colour is a pass over the final text (STYLE.md): the lexer only adds escape
codes or markup, so stripping them gives back exactly what `script()` printed.
Formatters are imported when used, keeping `import tvmlite` free of them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from pygments.style import Style
from pygments.token import (
    Comment,
    Error,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Token,
)

from tvmlite.diagnostics import TVMLiteError
from tvmlite.printer.lexer import TvmsLexer

__all__ = [
    "STYLES",
    "AnsiStyle",
    "DarkStyle",
    "LightStyle",
    "ansi_text",
    "contrast_ratio",
    "default_style",
    "wants_colour",
    "html_text",
    "number_lines",
    "resolve_style",
    "strip_ansi",
    "wants_truecolor",
]

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
STYLE_ENV = "TVMLITE_STYLE"  # the default style of show() and notebook output


class LightStyle(Style):
    """Jupyter-like, for white backgrounds: bold green keywords, blue functions,
    purple decorators, dark red strings, italic teal comments."""

    name = "tvms-light"
    background_color = "#ffffff"
    line_number_color = "#6a737d"
    styles = {
        Token: "#000000",
        Comment: "italic #3d7b7b",
        Keyword: "bold #008000",
        Keyword.Constant: "bold #008000",
        Keyword.Type: "#b00040",
        Name.Namespace: "bold #0000ff",
        Name.Builtin: "#008000",
        Name.Builtin.Pseudo: "#008000",
        Name.Function: "#0000ff",
        Name.Class: "bold #0000ff",
        Name.Decorator: "#aa22ff",
        String: "#ba2121",
        Number: "#666666",
        Operator: "#666666",
        Error: "border:#ff0000",
    }


class DarkStyle(Style):
    """VS Code's dark palette."""

    name = "tvms-dark"
    background_color = "#1e1e1e"
    line_number_color = "#8a8a8a"
    styles = {
        Token: "#d4d4d4",
        Comment: "italic #6a9955",
        Keyword: "#c586c0",
        Keyword.Constant: "#569cd6",
        Keyword.Type: "#4ec9b0",
        Name.Namespace: "#4ec9b0",
        Name.Builtin: "#dcdcaa",
        Name.Builtin.Pseudo: "#569cd6",
        Name.Function: "#dcdcaa",
        Name.Class: "#4ec9b0",
        Name.Decorator: "#dcdcaa",
        String: "#ce9178",
        Number: "#b5cea8",
        Operator: "#d4d4d4",
        Punctuation: "#d4d4d4",
        Error: "#f44747",
    }


class AnsiStyle(Style):
    """The terminal's own 16 colours, so the user's palette decides (default in a
    terminal)."""

    name = "tvms-ansi"
    styles = {
        Comment: "italic ansibrightblack",
        Keyword: "bold ansigreen",
        Keyword.Constant: "ansigreen",
        Keyword.Type: "ansicyan",
        Name.Namespace: "bold ansiblue",
        Name.Builtin: "ansiblue",
        Name.Builtin.Pseudo: "ansigreen",
        Name.Function: "ansibrightblue",
        Name.Class: "bold ansibrightblue",
        Name.Decorator: "ansimagenta",
        String: "ansired",
        Number: "ansiyellow",
        Error: "ansibrightred",
        Text: "",
    }


STYLES: Mapping[str, type[Style]] = {"light": LightStyle, "dark": DarkStyle, "ansi": AnsiStyle}


def resolve_style(style: str | type[Style]) -> type[Style]:
    """A style: "light", "dark", "ansi", any installed Pygments style, or a Style class."""
    if isinstance(style, type) and issubclass(style, Style):
        return style
    if not isinstance(style, str):
        raise TVMLiteError(f"style must be a name or a pygments Style class, not {style!r}")
    if style in STYLES:
        return STYLES[style]
    from pygments.styles import get_style_by_name
    from pygments.util import ClassNotFound

    try:
        return get_style_by_name(style)
    except ClassNotFound:
        known = ", ".join(repr(s) for s in STYLES)
        raise TVMLiteError(f"unknown style {style!r}: use {known} or a Pygments style") from None


def wants_colour(color: str, terminal: bool, environ: Mapping[str, str]) -> bool:
    """Whether to colour output: `color` ("always"/"never", as a command-line
    flag) first, then the conventions CPython follows, in its order: NO_COLOR
    (set and not empty) turns colour off, FORCE_COLOR or CLICOLOR_FORCE (set,
    not empty, not "0") on even into pipes, TERM=dumb off; else only terminals."""
    if color != "auto":
        return color == "always"
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR", "0") not in ("", "0") or environ.get(
        "CLICOLOR_FORCE", "0"
    ) not in ("", "0"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    return terminal


def wants_truecolor(environ: Mapping[str, str]) -> bool:
    """The de-facto convention terminals use to announce 24-bit colour."""
    return environ.get("COLORTERM", "").lower() in ("truecolor", "24bit")


def _lexer() -> TvmsLexer:
    # keep leading/trailing blank lines: the coloured text must equal the plain one
    return TvmsLexer(stripnl=False, ensurenl=False)


def ansi_text(text: str, style: str | type[Style] = "ansi", truecolor: bool = False) -> str:
    """`text` with ANSI colour codes: 256 colours, or 24-bit when `truecolor` (the
    16-colour "ansi" style never needs more)."""
    from pygments import highlight
    from pygments.formatters import Terminal256Formatter, TerminalTrueColorFormatter

    resolved = resolve_style(style)
    formatter_class = Terminal256Formatter
    if truecolor and resolved is not AnsiStyle:
        formatter_class = TerminalTrueColorFormatter
    return highlight(text, _lexer(), formatter_class(style=resolved))


def default_style(html: bool) -> str:
    """$TVMLITE_STYLE, else "light" for HTML and "ansi" (the terminal's palette)
    for terminals."""
    chosen = os.environ.get(STYLE_ENV, "").strip()
    if chosen:
        try:
            resolve_style(chosen)
        except TVMLiteError as err:
            raise TVMLiteError(f"{STYLE_ENV}: {err}") from None
        return chosen
    return "light" if html else "ansi"


def html_text(text: str, style: str | type[Style] = "light", line_numbers: bool = False) -> str:
    """`text` as a `<pre>` with inline styles (notebooks and GitHub drop style
    sheets). The `<pre>` carries the style's own background and base colour:
    notebook front ends (JupyterLab, classic Notebook, VS Code) style that
    element from their theme, and a colour set only on an outer element would
    leave dark text on a dark theme's background, or light on a light one. The
    "ansi" style has no colours of its own, so HTML uses "light" for it."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    resolved = resolve_style(style)
    if resolved is AnsiStyle:
        resolved = LightStyle
    background = resolved.background_color or "#ffffff"
    base = _base_colour(resolved, background)
    body = highlight(text, _lexer(), HtmlFormatter(style=resolved, noclasses=True, nowrap=True))
    if line_numbers:
        number = resolved.line_number_color
        number = number if number.startswith("#") else base
        lines = body.splitlines(keepends=True)
        width = len(str(len(lines)))
        body = "".join(
            f'<span style="color: {number}; user-select: none">{k:>{width}} </span>{line}'
            for k, line in enumerate(lines, start=1)
        )
    pre = (
        f"margin: 0; padding: 0.5em; background: {background}; color: {base}; "
        "font-family: monospace; line-height: 125%; overflow-x: auto"
    )
    return f'<div class="tvmlite-script"><pre style="{pre}">{body}</pre></div>'


def _base_colour(style: type[Style], background: str) -> str:
    """The style's colour for plain text, else black or white, whichever reads
    better on `background`."""
    colour = style.style_for_token(Token.Text)["color"] or style.style_for_token(Token)["color"]
    if colour:
        return f"#{colour}"
    return max(("#000000", "#ffffff"), key=lambda c: contrast_ratio(c, background))


def relative_luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a `#rrggbb` (or `#rgb`) colour."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    channels = [int(digits[k : k + 2], 16) / 255 for k in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21; text wants at least 4.5)."""
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def number_lines(text: str, dim: bool = False) -> str:
    """Prefix every line with its number, right-aligned (dimmed for terminals)."""
    lines = text.splitlines(keepends=True)
    width = len(str(len(lines)))
    out = []
    for number, line in enumerate(lines, start=1):
        label = f"{number:>{width}} "
        out.append((f"\x1b[2m{label}\x1b[0m" if dim else label) + line)
    return "".join(out)


def strip_ansi(text: str) -> str:
    """`text` without ANSI colour codes."""
    return _ANSI_ESCAPE.sub("", text)
