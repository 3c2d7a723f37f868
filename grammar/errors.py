"""Lark's exceptions, turned into one-sentence `ParseError`s located at the culprit.

Lark reports terminal names (`RPAR`, `_INDENT`, `$END`); users should read `')'`,
"expected an indented block" and "unexpected end of input". A few Python constructs
the language lacks (comprehensions, star arguments, `:=`) fail deep in the grammar
with a confusing token, so they are recognised here and named instead.
"""

from __future__ import annotations

from lark import Lark, LarkError
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from tvmlite.diagnostics import ParseError, Span
from tvmlite.grammar.builder import Placement
from tvmlite.grammar.indenter import IndentationProblem
from tvmlite.grammar.lark_internals import PatternStr
from tvmlite.grammar.lexer import Tok

_WHAT = {
    "NAME": "a name",
    "DOTTED_NAME": "a name",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "DEC_NUMBER": "a number",
    "HEX_NUMBER": "a number",
    "FLOAT_NUMBER": "a number",
    "_NEWLINE": "end of line",
    "$END": "end of input",
}
_NUMBERS = {"DEC_NUMBER", "HEX_NUMBER", "FLOAT_NUMBER"}
_MAX_EXPECTED = 3  # listing more alternatives than this helps nobody


def convert(error: Exception, text: str, where: Placement, lark: Lark) -> ParseError:
    """The `ParseError` for a Lark or layout error raised while parsing `text`."""
    if isinstance(error, IndentationProblem):
        return _located(error.message, where, _token_span(error.token))
    if isinstance(error, UnexpectedCharacters):
        return _bad_character(error, text, where)
    if isinstance(error, UnexpectedToken):
        return _unexpected(error.token, set(error.expected), text, where, lark)
    if isinstance(error, UnexpectedEOF):
        lines = text.split("\n")
        end = (len(lines), len(lines[-1]) + 1)
        return _located("unexpected end of input", where, (*end, *end))
    if isinstance(error, LarkError):
        return _located(f"invalid syntax ({error})", where, (1, 1, 1, 2))
    raise TypeError(f"not a parse error: {error!r}")


def _bad_character(error: UnexpectedCharacters, text: str, where: Placement) -> ParseError:
    pos, line, column = error.pos_in_stream, error.line, error.column
    char = text[pos] if pos < len(text) else ""
    end_of_line = text.find("\n", pos)
    rest = len(text) - pos if end_of_line < 0 else end_of_line - pos
    span = (line, column, line, column + max(1, rest))
    if char in "'\"":
        triple = text[pos : pos + 3] == char * 3
        return _located(f"unterminated {'triple-quoted ' if triple else ''}string", where, span)
    if char == "\\":
        message = "stray '\\': a line continuation must be the last character of its line"
        return _located(message, where, (line, column, line, column + 1))
    shown = char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
    if not char.isprintable():
        shown += f"' (U+{ord(char):04X})" if char else "'"
        message = f"invalid character '{shown}"
    else:
        message = f"invalid character '{shown}'"
    return _located(message, where, (line, column, line, column + 1))


def _unexpected(
    token: Tok, expected: set[str], text: str, where: Placement, lark: Lark
) -> ParseError:
    span = _token_span(token)
    kind, value = token.type, str(token.value)
    if "_INDENT" in expected and kind != "_INDENT":
        return _located("expected an indented block", where, span)
    if kind == "FOR" and _inside_line(text, token):
        return _located("comprehensions are not supported", where, span)
    if kind in ("STAR", "DOUBLESTAR") and "NAME" in expected:
        return _located("star expressions and star arguments are not supported", where, span)
    if kind == "COLON" and text.startswith("=", (token.end_pos or 0)):
        return _located("assignment expressions (':=') are not supported", where, span)
    if kind == "$END" or (kind == "_NEWLINE" and not value):
        message = "unexpected end of input"
    elif kind == "_NEWLINE":
        message, span = "unexpected end of line", (span[0], span[1], span[0], span[1] + 1)
    elif kind == "_INDENT":
        message = "unexpected indent"
    elif kind == "_DEDENT":
        message = "unexpected unindent"
    elif kind == "NAME":
        message = f"unexpected name '{value}'"
    elif kind in ("STRING", "LONG_STRING"):
        message = "unexpected string"
    elif kind in _NUMBERS:
        message = f"unexpected number {value}"
    elif value.isidentifier():
        message = f"unexpected keyword '{value}'"
    else:
        message = f"unexpected '{value}'"
    wanted = _describe_expected(expected, lark)
    if wanted:
        message += f", expected {wanted}"
    return _located(message, where, span)


def _describe_expected(expected: set[str], lark: Lark) -> str | None:
    """`':' or '->'` for a short list of readable alternatives, else None."""
    names: list[str] = []
    for kind in sorted(expected):
        described = _WHAT.get(kind)
        if described is None:
            try:
                pattern = lark.get_terminal(kind).pattern
            except KeyError:
                return None
            if not isinstance(pattern, PatternStr):
                return None
            described = f"'{pattern.value}'"
        if described not in names:
            names.append(described)
    if not names or len(names) > _MAX_EXPECTED:
        return None
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _inside_line(text: str, token: Tok) -> bool:
    """Whether something other than indentation precedes `token` on its line."""
    pos = token.start_pos or 0
    line_start = text.rfind("\n", 0, pos) + 1
    return bool(text[line_start:pos].strip())


def _token_span(token: Tok) -> tuple[int, int, int, int]:
    line, column = token.line or 1, token.column or 1
    end_line, end_column = token.end_line or line, token.end_column or column + 1
    if end_line != line or end_column <= column:
        end_line, end_column = line, column + 1
    return line, column, end_line, end_column


def _located(message: str, where: Placement, span: tuple[int, int, int, int]) -> ParseError:
    line, column, end_line, end_column = span
    if line == 1:
        column += where.column
    if end_line == 1:
        end_column += where.column
    located = Span(where.source, line + where.line, column, end_line + where.line, end_column)
    return ParseError(message, located, where.source.filename)
