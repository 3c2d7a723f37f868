"""Source spans and the error classes the library raises on purpose.

Every error about user text carries a `Span` and renders rustc-style:

    model.tvms:12:9: error: unknown operator R.nn.relu6
        y = R.nn.relu6(x)
            ^^^^^^^^^^
"""

from __future__ import annotations

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
