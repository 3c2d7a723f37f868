"""The parts of Lark that are not its public API and that the front end reads.

`lalr.py` drives Lark's LALR table with its own loop and `lexer.py` compiles Lark's
terminal definitions into one regex; both read attributes Lark may rename or
reshape in any release. pyproject pins `lark` to the versions these were checked
with; `check(lark)` runs once when the parser is built, so a Lark outside that
range fails with the attribute named instead of an AttributeError (or a wrong
parse) deep inside the parser. `tests/unit/test_lark_internals.py` runs it too.
"""

from __future__ import annotations

import importlib
from operator import attrgetter
from typing import Any

from lark import Lark, __version__

TESTED = ">=1.1.9,<1.4"  # the pin in pyproject.toml; a test keeps the two equal

STATES = "parser.parser.parser.parse_table.states"  # {state: {symbol: (action, arg)}}
# Read from the `Lark` object: the LALR table and the lexer configuration.
ON_LARK = (
    STATES,
    "parser.parser.parser.parse_table.start_states",
    "parser.parser.parser.parse_table.end_states",
    "lexer_conf.terminals",
    "lexer_conf.ignore",
    "lexer_conf.g_regex_flags",
    "rules",
)
# Read from a `Rule` of the table (how a reduction shapes its children).
ON_RULE = (
    "origin.name",
    "alias",
    "expansion",
    "options.keep_all_tokens",
    "options.expand1",
    "options.empty_indices",
)
# Read from a symbol of a rule's expansion, and from a terminal one.
ON_SYMBOL = ("name", "is_term")
ON_TERMINAL_SYMBOL = ("filter_out",)
# Read from a terminal definition.
ON_TERMINAL = ("name", "priority", "pattern.to_regexp")


class LarkInternalsChanged(RuntimeError):
    """The installed Lark lacks, or has reshaped, something the front end reads."""

    def __init__(self, what: str, detail: str = "is gone") -> None:
        super().__init__(
            f"tvmlite's parser reads Lark's private {what}, which {detail} in lark "
            f"{__version__}; tvmlite is tested with lark{TESTED} (grammar/lark_internals.py)"
        )
        self.what = what


def check(lark: Lark) -> None:
    """Raise LarkInternalsChanged naming the first private attribute that is
    missing or not of the shape the parser expects. Objects of one kind are all
    made by the same Lark code, so one of each is checked (it costs well under a
    millisecond, once per process)."""
    for path in ON_LARK:
        _read(lark, path, "Lark")
    states = _read(lark, STATES, "Lark")
    if not (isinstance(states, dict) and all(isinstance(row, dict) for row in states.values())):
        raise LarkInternalsChanged(f"Lark.{STATES}", "is no longer a dict of dicts")
    actions = (action for row in states.values() for action in row.values())
    seen_shift = seen_reduce = False
    for action in actions:
        if not (isinstance(action, tuple) and len(action) == 2):
            raise LarkInternalsChanged(f"Lark.{STATES}", "no longer holds (action, arg)")
        if action[0] is Shift:
            if not isinstance(action[1], int):
                raise LarkInternalsChanged(f"Lark.{STATES}", "shifts to no state number")
            seen_shift = True
        else:
            for path in ON_RULE:
                _read(action[1], path, "Rule")
            seen_reduce = True
        if seen_shift and seen_reduce:
            break
    else:
        raise LarkInternalsChanged(f"Lark.{STATES}", "lacks shifts or reductions")
    one_of_each = {
        _read(symbol, "is_term", "Symbol"): symbol
        for rule in lark.rules
        for symbol in _read(rule, "expansion", "Rule")
    }
    for is_term, symbol in one_of_each.items():
        for path in ON_SYMBOL + (ON_TERMINAL_SYMBOL if is_term else ()):
            _read(symbol, path, "Symbol")
    for path in ON_TERMINAL:
        _read(lark.lexer_conf.terminals[0], path, "TerminalDef")


def _imported(module: str, name: str) -> Any:
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise LarkInternalsChanged(f"{module}.{name}") from None


def _read(obj: Any, path: str, owner: str) -> Any:
    try:
        return attrgetter(path)(obj)
    except AttributeError:
        raise LarkInternalsChanged(f"{owner}.{path}") from None


# The private names the parser imports, through here so that a moved one is named.
Shift = _imported("lark.parsers.lalr_analysis", "Shift")  # the action that is no reduction
PatternStr = _imported("lark.lexer", "PatternStr")  # a terminal spelled as a literal
