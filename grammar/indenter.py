"""The postlexer: turns Python-style indentation into `_INDENT`/`_DEDENT` tokens.

Lark's own `Indenter` keeps its state on the instance (so one cached parser could not
serve two threads), measures tabs with a fixed width (so mixed tabs and spaces pass
silently), and fails with assertions on unbalanced brackets. This one keeps all state
in local variables, compares indentation as strings the way CPython's tokenizer does,
and reports every problem as an `IndentationProblem` that `grammar/__init__.py` turns
into a located `ParseError`.
"""

from __future__ import annotations

from tvmlite.grammar.comments import Found, scan
from tvmlite.grammar.lexer import DeferredError, Tok

NEWLINE = "_NEWLINE"
INDENT = "_INDENT"
DEDENT = "_DEDENT"
OPENING = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
CLOSING = {"RPAR", "RSQB", "RBRACE"}
_LAYOUT = {NEWLINE, INDENT, DEDENT}  # what a newline of the text turns into

# Python keywords the language has no statement or expression for. They can never be
# identifiers in Python, so a NAME with one of these values is always a construct we
# do not support: saying so beats "unexpected name". (tvms.lark keeps them out of
# DOTTED_NAME, so they always arrive as a NAME.)
UNSUPPORTED_KEYWORDS = frozenset(
    {"async", "await", "yield", "global", "nonlocal", "del", "raise", "try", "except", "finally"}
)


class IndentationProblem(Exception):
    """A layout error found while post-lexing, located at a token."""

    def __init__(self, message: str, token: Tok) -> None:
        super().__init__(message)
        self.message = message
        self.token = token


def layout(tokens: list[Tok], comments: list[Found] | None = None) -> list[Tok]:
    """`tokens` with `_INDENT`/`_DEDENT` after the newlines outside brackets.

    Newlines inside brackets, where the grammar never accepts them, are dropped. The
    `_NEWLINE` terminal never swallows whitespace at the very end of the text, so
    trailing blanks open no block. A newline is synthesized before end of input when the
    text does not end with one, since every statement in the grammar ends in `_NEWLINE`.
    A problem ends the list with a `DeferredError`, as a lexer error does, so that the
    parser reports whichever problem comes first in the text. With `comments`, the
    comments the newlines hold are appended to it (grammar/comments.py).
    """
    out: list[Tok] = []
    lexed_to_end = not tokens or tokens[-1].type != DeferredError.TYPE
    try:
        _lay_out(tokens if lexed_to_end else tokens[:-1], out, lexed_to_end, comments)
    except IndentationProblem as problem:
        out.append(DeferredError(problem))
        return out
    if not lexed_to_end:
        out.append(tokens[-1])
    return out


def _lay_out(tokens: list[Tok], out: list[Tok], at_end: bool, comments: list[Found] | None) -> None:
    levels: list[str] = [""]  # the indentation strings of the open blocks
    brackets: list[Tok] = []
    last_newline: Tok | None = None
    append = out.append
    if tokens and tokens[0].type != NEWLINE and tokens[0].column != 1:
        raise IndentationProblem("unexpected indent", tokens[0])
    for token in tokens:
        kind = token.type
        if kind == NEWLINE:
            if comments is not None and "#" in token.value:
                # the last token kept is code ending on this line: a trailing comment
                last = out[-1] if out else None
                trailing = last is not None and last.type not in _LAYOUT
                trailing = trailing and last.end_line == token.line  # type: ignore[union-attr]
                scan(token, trailing, bool(brackets), comments)
            if brackets:
                continue
            if not out or out[-1].type not in _LAYOUT:
                append(token)  # two in a row only around form feeds: keep one
            last_newline = token
            _indentation(token, levels, out)
        elif kind == "NAME":
            if token.value in UNSUPPORTED_KEYWORDS:
                raise IndentationProblem(f"'{token.value}' is not supported in .tvms text", token)
            append(token)
        elif kind in OPENING:
            brackets.append(token)
            append(token)
        elif kind in CLOSING and brackets:
            opening = brackets.pop()
            if OPENING[opening.type] != kind:
                raise IndentationProblem(
                    f"closing '{token.value}' does not match opening '{opening.value}'"
                    f" on line {opening.line}",
                    token,
                )
            append(token)
        else:
            append(token)
    if not at_end or not out:
        return
    if brackets:
        raise IndentationProblem(f"'{brackets[-1].value}' was never closed", brackets[-1])
    # The last token of the text (layout tokens only ever follow a newline of the text).
    last = out[-1]
    if last.type in _LAYOUT and last_newline is not None:
        last = last_newline
    if last.type != NEWLINE:
        last = _at_end(NEWLINE, last)
        append(last)
    for _ in levels[1:]:
        append(_at_end(DEDENT, last))


def _indentation(newline: Tok, levels: list[str], out: list[Tok]) -> None:
    """Appends the `_INDENT`/`_DEDENT` tokens for the line that `newline` leads to."""
    text = newline.value
    cut = max(text.rfind("\n"), text.rfind("\r"))
    indent = text[cut + 1 :]
    if cut < 0 or "#" in indent:
        return  # a comment that ends the text: no line follows
    top = levels[-1]
    if indent == top:
        return
    if indent.startswith(top):
        levels.append(indent)
        out.append(_at_end(INDENT, newline, indent))
        return
    if indent in levels:
        while levels[-1] != indent:
            levels.pop()
            out.append(_at_end(DEDENT, newline))
        return
    here = _at_end(INDENT, newline, " ")
    if "\t" in indent or any("\t" in level for level in levels):
        raise IndentationProblem("inconsistent use of tabs and spaces in indentation", here)
    raise IndentationProblem("unindent does not match any outer indentation level", here)


def _at_end(kind: str, last: Tok, value: str = "") -> Tok:
    """A token placed just after `last`, spanning `value` (for error messages)."""
    line = last.end_line or last.line or 1
    column = last.end_column or last.column or 1
    pos = last.end_pos or 0
    return Tok(kind, value, pos, line, column, line, column + len(value), pos + len(value))
