"""A one-regex lexer for `tvms.lark`, built from the grammar's own terminal definitions.

Lark's lexers try a regex per terminal or per parser state and allocate through several
Python layers per token; for this grammar that buys nothing, because no two terminals
overlap once keywords are told apart from names by a dictionary lookup. This lexer
compiles every regex terminal into one alternation (highest priority first) plus one
group for all punctuation (longest first), so each token costs one `match` call, and
it lexes the whole text into a list up front instead of through a generator.

It relies on these properties of `tvms.lark`, which `tests/unit/test_grammar.py` checks
by comparing its tokens with Lark's own lexer: regex terminals of equal priority never
match at the same position, and every literal terminal is either a word (a keyword,
which NAME also matches) or punctuation (which no regex terminal matches).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lark.exceptions import UnexpectedCharacters

from tvmlite.grammar.lark_internals import PatternStr

if TYPE_CHECKING:
    from lark.common import LexerConf

_PUNCTUATION = "PUNCTUATION"  # the group holding all literal punctuation terminals
# Regex terminals tried first within their priority: each failed alternative costs time,
# and almost every token that is not punctuation is a name.
_FIRST = ("DOTTED_NAME", "NAME")
# The blanks that tvms.lark ignores (its `%ignore /[\t \f]+/`). One character a
# repetition, so that backtracking over them stays linear.
_BLANK_CHARS = "\t \f"
_BLANKS = "[\t \f]*"


class Tok:
    """A token: what the parser reads (`type`) plus what spans need (positions).

    Used instead of `lark.Token`, whose constructor costs three times as much; tokens
    never leave the grammar package. Positions are 1-based with exclusive ends, as in Lark.
    """

    __slots__ = (
        "column",
        "end_column",
        "end_line",
        "end_pos",
        "line",
        "start_pos",
        "type",
        "value",
    )

    def __init__(
        self,
        type: str,
        value: str,
        start_pos: int = 0,
        line: int = 1,
        column: int = 1,
        end_line: int = 1,
        end_column: int = 1,
        end_pos: int = 0,
    ) -> None:
        self.type = type
        self.value = value
        self.start_pos = start_pos
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column
        self.end_pos = end_pos

    def __repr__(self) -> str:
        return f"Tok({self.type!r}, {self.value!r}, {self.line}:{self.column})"


class DeferredError(Tok):
    """Stands in the token list where lexing or layout failed.

    The whole text is lexed before parsing starts, but an error at the end of the text
    must not hide a syntax error before it, so problems wait in the list: no parser
    state has an action for this token's type, and the parser raises `error` on it.
    """

    __slots__ = ("error",)
    TYPE = "<error>"

    def __init__(self, error: Exception) -> None:
        super().__init__(self.TYPE, "")
        self.error = error


class TvmsLexer:
    """Tokens with 1-based line/column and exclusive end positions, like Lark's.

    Two details of the regex keep Python's `re` from trying every alternative at every
    token: each alternative names its terminal with an empty group at its end rather than
    a group around it, so that an alternative starting with a literal or a character
    class is skipped after one character test; and blanks before a token are matched
    with it, which saves a `match` call for every blank between tokens.
    """

    def __init__(self, conf: LexerConf) -> None:
        words: dict[str, str] = {}
        punctuation: dict[str, str] = {}
        alternatives: list[str] = []
        regex_terminals = [t for t in conf.terminals if not isinstance(t.pattern, PatternStr)]
        for terminal in conf.terminals:
            if isinstance(terminal.pattern, PatternStr):
                value = terminal.pattern.value
                (words if value.isidentifier() else punctuation)[value] = terminal.name
        # Priority first: it decides between overlapping terminals.
        for terminal in sorted(regex_terminals, key=lambda t: (-t.priority, t.name not in _FIRST)):
            alternatives.append(f"(?:{terminal.pattern.to_regexp()})(?P<{terminal.name}>)")
        literals = sorted(punctuation, key=len, reverse=True)
        alternatives.append(f"(?:{'|'.join(map(re.escape, literals))})(?P<{_PUNCTUATION}>)")
        # A blank run is ignored, so it may as well lead the token after it; it is still an
        # alternative of its own (`conf.ignore`) for blanks that end the text.
        pattern = f"{_BLANKS}(?:{'|'.join(alternatives)})"
        self.pattern = re.compile(pattern, conf.g_regex_flags)
        # `tokenize` relies on it: an empty match would never advance.
        assert self.pattern.match("") is None, "a terminal of tvms.lark matches nothing"
        self.words = words
        self.punctuation = punctuation
        self.ignore = frozenset(conf.ignore)

    def tokenize(self, text: str) -> list[Tok]:
        """All tokens of `text`, ending in a `DeferredError` if a character is invalid."""
        words, punctuation, ignore = self.words, self.punctuation, self.ignore
        tokens: list[Tok] = []
        append = tokens.append
        line, line_start, end = 1, 0, 0
        # Each call continues where the last ended; the loop ends where no token matches.
        for found in iter(self.pattern.scanner(text).match, None):
            kind = found.lastgroup
            value = found.group()
            end = found.end()
            if value[0] in _BLANK_CHARS:
                value = value.lstrip(_BLANK_CHARS)
            start = end - len(value)
            if kind == _PUNCTUATION:
                kind = punctuation[value]
            elif kind == "NAME":
                kind = words.get(value, "NAME")
            column = start - line_start + 1
            if "\n" not in value:
                append(Tok(kind, value, start, line, column, line, column + len(value), end))
                continue
            end_line = line + value.count("\n")
            line_start = text.rindex("\n", start, end) + 1
            if kind not in ignore:
                append(Tok(kind, value, start, line, column, end_line, end - line_start + 1, end))
            line = end_line
        # Blanks are ignored on their own only where no token follows them.
        if tokens and tokens[-1].type in ignore:
            tokens.pop()
        if end < len(text):
            error = UnexpectedCharacters(text, end, line, end - line_start + 1)
            append(DeferredError(error))
        return tokens
