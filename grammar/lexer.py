"""A one-regex lexer for `tvms.lark`, built from the grammar's own terminal definitions.

Lark's contextual lexer tries a per-parser-state regex and allocates through several
Python layers per token; for this grammar its context buys nothing, because no two
terminals overlap once keywords are told apart from names by a dictionary lookup. This
lexer compiles every regex terminal into one alternation (highest priority first) plus
one group for all punctuation (longest first), so each token costs one `match` call.

It relies on these properties of `tvms.lark`, which `tests/unit/test_grammar.py` checks
by comparing its tokens with Lark's own lexer: regex terminals of equal priority never
match at the same position, and every literal terminal is either a word (a keyword,
which NAME also matches) or punctuation (which no regex terminal matches).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lark import Token
from lark.common import LexerConf
from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer, PatternStr

_PUNCTUATION = "PUNCTUATION"  # the group holding all literal punctuation terminals


class TvmsLexer(Lexer):
    """Tokens with 1-based line/column and exclusive end positions, like Lark's."""

    __future_interface__ = 0  # `lex(text)`: the text arrives whole

    def __init__(self, conf: LexerConf) -> None:
        words: dict[str, str] = {}
        punctuation: dict[str, str] = {}
        groups: list[str] = []
        regex_terminals = [t for t in conf.terminals if not isinstance(t.pattern, PatternStr)]
        for terminal in conf.terminals:
            if isinstance(terminal.pattern, PatternStr):
                value = terminal.pattern.value
                (words if value.isidentifier() else punctuation)[value] = terminal.name
        # `sorted` is stable: equal priorities keep the grammar's order.
        for terminal in sorted(regex_terminals, key=lambda t: -t.priority):
            groups.append(f"(?P<{terminal.name}>{terminal.pattern.to_regexp()})")
        literals = sorted(punctuation, key=len, reverse=True)
        groups.append(f"(?P<{_PUNCTUATION}>{'|'.join(map(re.escape, literals))})")
        self.pattern = re.compile("|".join(groups), conf.g_regex_flags)
        self.words = words
        self.punctuation = punctuation
        self.ignore = frozenset(conf.ignore)

    def lex(self, text: str) -> Iterator[Token]:  # type: ignore[override]
        match = self.pattern.match
        words, punctuation, ignore = self.words, self.punctuation, self.ignore
        line, line_start, pos, size = 1, 0, 0, len(text)
        while pos < size:
            found = match(text, pos)
            if found is None or found.end() == pos:
                raise UnexpectedCharacters(text, pos, line, pos - line_start + 1)
            kind = found.lastgroup
            value = found.group()
            end = found.end()
            if kind == _PUNCTUATION:
                kind = punctuation[value]
            elif kind == "NAME":
                kind = words.get(value, "NAME")
            column = pos - line_start + 1
            breaks = value.count("\n")
            if breaks:
                end_line = line + breaks
                line_start = text.rindex("\n", pos, end) + 1
                end_column = end - line_start + 1
            else:
                end_line, end_column = line, column + len(value)
            if kind not in ignore:
                yield Token(kind, value, pos, line, column, end_line, end_column, end)
            line = end_line
            pos = end
