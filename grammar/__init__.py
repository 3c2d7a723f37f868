"""The `.tvms` grammar: text in, `grammar/syntax.py` nodes out, `ParseError` on any problem.

`tvms.lark` is compiled once per process, lazily (the first parse pays for it), and
Lark's cache keeps the compiled LALR tables on disk so later processes load them
instead of re-analysing the grammar. Nothing in the text is ever evaluated: literals
are decoded, everything else becomes a node.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from lark import Lark, LarkError

from tvmlite.diagnostics import ParseError, Source, Span
from tvmlite.grammar import lark_internals, syntax
from tvmlite.grammar.builder import Placement, SyntaxBuilder
from tvmlite.grammar.comments import Found, attach
from tvmlite.grammar.errors import convert
from tvmlite.grammar.indenter import IndentationProblem, layout
from tvmlite.grammar.lalr import LalrParser
from tvmlite.grammar.lexer import Tok, TvmsLexer

__all__ = ["comment_texts", "parse_expression", "parse_syntax", "tokenize"]

GRAMMAR = Path(__file__).with_name("tvms.lark")


@dataclass(frozen=True, slots=True)
class _Parser:
    """Lark's compiled grammar (for its tables and terminal names) and our machinery."""

    lark: Lark
    lexer: TvmsLexer
    lalr: LalrParser
    builder: SyntaxBuilder


@functools.cache
def _parser() -> _Parser:
    """The one parser of the process."""
    lark = Lark(
        GRAMMAR.read_text(encoding="utf-8"),
        parser="lalr",
        lexer="basic",  # never runs: it only makes Lark hand over the terminals
        start=["module", "expression_input"],
        maybe_placeholders=True,
        cache=True,
    )
    lark_internals.check(lark)
    builder = SyntaxBuilder()
    lexer = TvmsLexer(lark.lexer_conf)
    return _Parser(lark, lexer, LalrParser(lark, builder, lexer.punctuation["."]), builder)


def parse_syntax(
    text: str, filename: str | None = None, tokens: list[Tok] | None = None
) -> syntax.Module:
    """Parse a whole `.tvms` file into a `syntax.Module` whose span covers all of `text`,
    its statements carrying the comments written around them. `tokens`, when given,
    are `tokenize(text)` (a caller that reads them too lexes once)."""
    source = Source(text, filename or "<string>")
    comments: list[Found] = []
    body = _run(text, "module", Placement(source), None, comments, tokens)
    lines = text.split("\n")
    span = Span(source, 1, 1, len(lines), len(lines[-1]) + 1)
    module = syntax.Module(body, span)
    if comments:
        attach(module, comments, source)
    return module


def comment_texts(text: str) -> list[str]:
    """The comments of `text`, in order, found without parsing it (only as far as
    it lexes: `tvms fmt` reads its own output with this)."""
    parser = _parser()
    found: list[Found] = []
    layout(parser.lexer.tokenize(text), found)
    return [comment.text for comment in found]


def parse_expression(
    text: str, span: Span | None = None, filename: str | None = None
) -> syntax.Node:
    """Parse one expression, such as the quoted shape `"n + 1"` in `R.Tensor(("n + 1",))`.

    With `span` (the span of the string literal holding `text`), node spans point into
    the enclosing source when the literal's text can be mapped back to it, and every
    error is reported at `span`, quoting the expression.
    """
    stripped = text.lstrip(" \t")
    shift = len(text) - len(stripped)
    if span is None:
        source = Source(text, filename or "<string>")
        return _run(stripped, "expression_input", Placement(source, 0, shift), None)
    placement = _placement_in_literal(text, span) or Placement(Source(text, span.source.filename))
    placement = Placement(placement.source, placement.line, placement.column + shift)
    return _run(stripped, "expression_input", placement, (text, span))


def _placement_in_literal(text: str, span: Span) -> Placement | None:
    """Where `text` sits in the source if `span` is a plain one-line literal of exactly it."""
    if span.line != span.end_line:
        return None
    line = span.source.line(span.line)
    literal = line[span.column - 1 : span.end_column - 1]
    if len(literal) < 2 or literal[0] not in "'\"" or literal[1:-1] != text:
        return None
    return Placement(span.source, span.line - 1, span.column)


def tokenize(text: str) -> list[Tok]:
    """The tokens of `text` as lexed, before layout: comments are inside the `_NEWLINE`
    tokens, and a `DeferredError` ends the list where lexing failed."""
    return _parser().lexer.tokenize(text)


def _run(
    text: str,
    start: str,
    placement: Placement,
    quoted: tuple[str, Span] | None,
    comments: list[Found] | None = None,
    tokens: list[Tok] | None = None,
) -> syntax.Node | tuple[syntax.Node, ...]:
    parser = _parser()
    if tokens is None:
        tokens = parser.lexer.tokenize(text)
    try:
        with parser.builder.parsing(placement):
            return parser.lalr.parse(layout(tokens, comments), start)
    except ParseError as error:
        raise _requote(error, quoted) from None
    except (LarkError, IndentationProblem) as error:
        raise _requote(convert(error, text, placement, parser.lark), quoted) from None


def _requote(error: ParseError, quoted: tuple[str, Span] | None) -> ParseError:
    """An error inside a quoted expression, moved to the literal that holds it."""
    if quoted is None:
        return error
    text, span = quoted
    return ParseError(f"{error.message} in expression {text!r}", span, span.source.filename)
