"""Our LALR(1) loop over the parse table Lark computes for `tvms.lark`.

Lark stays the grammar compiler and table generator (and caches the tables on disk),
but its parser feeds tokens one method call at a time, looks actions up through
`Rule` objects (whose hashing and equality run Python code) and wraps every callback
in two or three layers (child filter, single-child expansion, tree building for
`_rules`). Here the table is converted once into a list of dicts of small ints and
every rule into one function that builds its node, so that the whole parse is one
loop with all lookups in local variables. The rules' shapes are Lark's own: the same
children reach the same `SyntaxBuilder` methods as under Lark's inline transformer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lark import Lark
from lark.exceptions import UnexpectedToken

from tvmlite.grammar.builder import SyntaxBuilder
from tvmlite.grammar.lark_internals import Shift
from tvmlite.grammar.lexer import DeferredError, Tok

if TYPE_CHECKING:
    from lark.grammar import Rule

END = "$END"
DOTTED_NAME = "DOTTED_NAME"

Build = Callable[[list[Any]], Any]
# What a reduction does: pop `size` values, push `build(values)` (or keep the one value
# when `build` is None: a `?rule` passing its only child through), then go to the state
# the table gives for `origin`.
Reduction = tuple[int, str, Build | None]


class LalrParser:
    """The parse table of a `Lark` object, driven by one loop.

    In `actions[state]`, a terminal maps to the state to shift to (>= 0) or to `~i` to
    reduce by `reductions[i]`, and a nonterminal to the state to go to after reducing it.
    """

    def __init__(self, lark: Lark, builder: SyntaxBuilder, dot: str) -> None:
        table = lark.parser.parser.parser.parse_table
        index: dict[Rule, int] = {}
        self.reductions: list[Reduction] = []
        self.actions: list[dict[str, int]] = [{} for _ in range(len(table.states))]
        for state, row in table.states.items():
            for symbol, (action, target) in row.items():
                if action is Shift:
                    self.actions[state][symbol] = target
                    continue
                if target not in index:
                    index[target] = len(self.reductions)
                    self.reductions.append(_reduction(target, builder))
                self.actions[state][symbol] = ~index[target]
        self.start_states: dict[str, int] = dict(table.start_states)
        self.end_states: dict[str, int] = dict(table.end_states)
        self.dot = dot

    def parse(self, tokens: list[Tok], start: str) -> Any:
        """The value the builder makes of `tokens` (which must not contain `$END`)."""
        states = [self.start_states[start]]
        values: list[Any] = []
        self._shift_reduce(tokens, states, values)
        if tokens:
            last = tokens[-1]
            end = Tok(END, "", last.start_pos, last.line, last.column, last.end_line,
                      last.end_column, last.end_pos)  # fmt: skip
        else:
            end = Tok(END, "")
        end_state = self.end_states[start]
        while True:
            action = self.actions[states[-1]].get(END)
            if action is None:
                raise self._unexpected(end, states)
            assert action < 0, "the table never shifts the end of input"
            size, origin, build = self.reductions[~action]
            if size:
                children = values[-size:]
                del values[-size:]
                del states[-size:]
            else:
                children = []
            values.append(children[0] if build is None else build(children))
            states.append(self.actions[states[-1]][origin])
            if states[-1] == end_state:
                return values[-1]

    def _shift_reduce(self, tokens: list[Tok], states: list[int], values: list[Any]) -> None:
        """Feeds `tokens` to the automaton. The hot loop of the whole front end."""
        actions, reductions = self.actions, self.reductions
        state = states[-1]
        for token in tokens:
            kind = token.type
            while True:
                try:
                    action = actions[state][kind]
                except KeyError:
                    if kind != DOTTED_NAME:
                        raise self._unexpected(token, states) from None
                    # Where the grammar takes a NAME but no DOTTED_NAME, it takes the
                    # parts one by one (or fails at one of them, as it should).
                    self._shift_reduce(self._parts(token), states, values)
                    state = states[-1]
                    break
                if action >= 0:
                    states.append(action)
                    values.append(token)
                    state = action
                    break
                size, origin, build = reductions[~action]
                if build is None:
                    state = states[-1] = actions[states[-2]][origin]
                    continue
                if size:
                    children = values[-size:]
                    del values[-size:]
                    del states[-size:]
                else:
                    children = []
                values.append(build(children))
                state = actions[states[-1]][origin]
                states.append(state)

    def _parts(self, dotted: Tok) -> list[Tok]:
        """The NAME and `.` tokens a DOTTED_NAME stands for (on one line, by its regex)."""
        parts: list[Tok] = []
        pos, line, column = dotted.start_pos, dotted.line, dotted.column
        for i, name in enumerate(dotted.value.split(".")):
            if i:
                parts.append(Tok(self.dot, ".", pos, line, column, line, column + 1, pos + 1))
                pos, column = pos + 1, column + 1
            width = len(name)
            parts.append(Tok("NAME", name, pos, line, column, line, column + width, pos + width))
            pos, column = pos + width, column + width
        return parts

    def _unexpected(self, token: Tok, states: list[int]) -> Exception:
        """The error for `token` in the current state: what the lexer or layout found
        there, or Lark's `UnexpectedToken` with the terminals the state accepts."""
        if isinstance(token, DeferredError):
            return token.error
        expected = {symbol for symbol in self.actions[states[-1]] if symbol.isupper()}
        return UnexpectedToken(token, expected)


def _reduction(rule: Rule, builder: SyntaxBuilder) -> Reduction:
    """What reducing by `rule` does, with Lark's rules for shaping the children.

    Anonymous tokens (`"("`, `","`) are filtered out; `[optional]` parts that are absent
    become None; the children of `_rules` and of Lark's helper rules for repetitions are
    spliced into their parent; a `?rule` with one child is that child; everything else
    goes to the builder method named by the rule's alias or name.
    """
    options = rule.options
    assert not options.keep_all_tokens, "no rule of tvms.lark keeps its anonymous tokens"
    expansion = rule.expansion
    size = len(expansion)
    placeholders = _placeholders(options.empty_indices, size)
    # `plan`: for each child the builder sees, the index of the value it comes from (None
    # for an absent optional part) and whether that value is a list to splice in.
    plan: list[tuple[int | None, bool]] = []
    for i, symbol in enumerate(expansion):
        plan += [(None, False)] * placeholders[i]
        if not (symbol.is_term and symbol.filter_out):
            plan.append((i, not symbol.is_term and symbol.name.startswith("_")))
    plan += [(None, False)] * placeholders[size]

    origin = rule.origin.name
    name = rule.alias or origin
    single_child = options.expand1 and not rule.alias
    if single_child and size == 1 and plan == [(0, False)]:
        return size, origin, None
    shape = None if plan == [(i, False) for i in range(size)] else _shaper(plan)
    if name.startswith("_"):  # spliced into the parent: the children list is the value
        return size, origin, shape or _as_is
    method: Build | None = getattr(builder, name, None)
    if method is None:
        raise TypeError(f"SyntaxBuilder has no method for the rule {name!r}")
    if single_child:
        return size, origin, _single_child_or(method, shape or _as_is)
    if shape is None:
        return size, origin, method
    return size, origin, _shaped(method, shape)


def _placeholders(empty_indices: list[bool] | None, size: int) -> list[int]:
    """How many Nones go before each symbol of the expansion (and after the last)."""
    if not empty_indices:
        return [0] * (size + 1)
    flags = "".join(str(int(flag)) for flag in empty_indices)
    return [len(ones) for ones in flags.split("0")]


def _shaper(plan: list[tuple[int | None, bool]]) -> Build:
    """The function that turns a rule's values into the children the builder sees.

    The common shapes get a function of their own: every reduction pays for this call.
    """
    splices = [splice for _, splice in plan]
    indices = [i for i, _ in plan]
    if None not in indices and not any(splices):
        if len(indices) == 1:
            (only,) = indices
            return lambda values: [values[only]]
        if len(indices) == 2:
            first, second = indices
            return lambda values: [values[first], values[second]]
        return lambda values: [values[i] for i in indices]
    if None not in indices and splices == [True] + [False] * (len(plan) - 1):
        # Left recursion (`__items: __items "," item`) keeps growing one list.
        head, *rest = indices
        if len(rest) == 1:
            (item,) = rest

            def append(values: list[Any]) -> list[Any]:
                children = values[head]
                children.append(values[item])
                return children

            return append

    def shape(values: list[Any]) -> list[Any]:
        children: list[Any] = []
        for i, splice in plan:
            if i is None:
                children.append(None)
            elif not splice:
                children.append(values[i])
            elif children:
                children += values[i]
            else:
                children = values[i]  # as above
        return children

    return shape


def _as_is(values: list[Any]) -> list[Any]:
    return values


def _shaped(method: Build, shape: Build) -> Build:
    return lambda values: method(shape(values))


def _single_child_or(method: Build, shape: Build) -> Build:
    def build(values: list[Any]) -> Any:
        children = shape(values)
        return children[0] if len(children) == 1 else method(children)

    return build
