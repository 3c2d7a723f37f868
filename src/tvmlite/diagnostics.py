"""Source spans and the error classes the library raises on purpose.

Every error about user text carries a `Span` and renders rustc-style:

    model.tvms:12:9: error: unknown operator R.nn.relu6
        y = R.nn.relu6(x)
            ^^^^^^^^^^
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Source:
    """The text a span points into; shared by every span of one parse."""

    text: str = field(repr=False)
    filename: str = "<string>"

    def line(self, lineno: int) -> str:
        lines = self.text.splitlines()
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


@dataclass(slots=True)
class Span:
    """A 1-based line/column range in a `Source` (end is exclusive)."""

    source: Source = field(repr=False, compare=False)
    line: int
    column: int
    end_line: int
    end_column: int

    def location(self) -> str:
        return f"{self.source.filename}:{self.line}:{self.column}"

    def merge(self, other: Span | None) -> Span:
        if other is None:
            return self
        return Span(self.source, self.line, self.column, other.end_line, other.end_column)


class TVMLiteError(Exception):
    """Base of every error tvmlite raises on purpose."""


class ParseError(TVMLiteError):
    """An error in `.tvms` text: a message located at a span."""

    def __init__(self, message: str, span: Span | None = None, filename: str | None = None):
        self.message = message
        self.span = span
        self.filename = filename
        super().__init__(render(message, span, filename))


class VerifyError(ParseError):
    """A program that parses but breaks a rule of the IR (scoping, shapes, regions)."""


def render(message: str, span: Span | None, filename: str | None = None) -> str:
    if span is None:
        return f"{filename or '<string>'}:1:1: error: {message}"
    text = span.source.line(span.line)
    to_eol = len(text) - span.column + 1
    width = (span.end_column - span.column) if span.end_line == span.line else to_eol
    width = max(1, min(width, max(1, len(text) - span.column + 1)))
    # Tabs keep their width so the caret lines up under the offending token.
    pad = "".join("\t" if ch == "\t" else " " for ch in text[: span.column - 1])
    head = f"{span.location()}: error: {message}"
    if not text.strip():
        return head
    return f"{head}\n    {text}\n    {pad}{'^' * width}"


def did_you_mean(word: str, candidates: Iterable[str], *, quote: bool = False) -> str:
    """ " (did you mean X?)" naming up to three of `candidates` close to `word`
    (difflib's similarity of at least 0.75, ignoring case), or "" when none is:
    a far-fetched guess misleads more than no guess."""
    by_lower: dict[str, str] = {}
    for name in sorted(set(candidates)):
        if name != word:
            by_lower.setdefault(name.lower(), name)
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=3, cutoff=0.75)
    if not close:
        return ""
    names = [f"'{by_lower[c]}'" if quote else by_lower[c] for c in close]
    shown = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f" (did you mean {shown}?)"
