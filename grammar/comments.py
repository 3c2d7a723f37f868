"""Comments: found in the newline tokens, then given to the statements they belong to.

The lexer keeps comments inside `_NEWLINE` tokens (tvms.lark), so the parser never
sees them; `grammar/indenter.py` hands each newline token that holds a `#` to
`scan`, which knows whether it ends a line of code (a trailing comment), stands on
its own line, or sits inside brackets (inside an expression). After the parse,
`attach` walks the statements in text order beside the comments and sets each
statement's `comments` (roles as in dsl/comments.py):

- a comment on its own line goes *above* the next statement of the same body, or,
  after the last statement of a body and indented deeper than the statement that
  owns the body, *after* that last statement (as Python's own formatters do);
- a trailing comment ends the statement (or the header: `for ...:  # here`, the
  decorator line, `else:`) whose line it ends;
- a comment inside brackets has no place in text the printer writes on one line:
  it is recorded as lost, with its location, for `tvms fmt` to refuse.

The walk is iterative (statements may nest thousands deep before the parser's
nesting limit rejects them) and stops once every comment has its place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tvmlite.diagnostics import Source, Span
from tvmlite.dsl.comments import Comments, Lost, Note, Remark
from tvmlite.grammar import syntax as S
from tvmlite.grammar.lexer import Tok

OWN, TRAILING, INNER = "own", "trailing", "inner"
INSIDE_EXPRESSION = (
    "it is inside an expression, which is printed on one line (move it above the statement)"
)
_NEVER = 1 << 60  # a line after every line


@dataclass(frozen=True, slots=True)
class Found:
    """One comment of the text: where it is, what it says, and what precedes it."""

    line: int
    column: int
    text: str
    kind: str  # OWN, TRAILING or INNER


def scan(newline: Tok, after_code: bool, inside_brackets: bool, out: list[Found]) -> None:
    """The comments of one newline token. `after_code`: a token of code ends on the
    line where the newline token starts (its first comment is then a trailing one).
    Texts lose their trailing blanks, which the printer would not keep either."""
    for k, part in enumerate(newline.value.split("\n")):
        hash_at = part.find("#")
        if hash_at < 0:
            continue
        text = part[hash_at:].rstrip()
        if k == 0:
            line, column = newline.line, newline.column + hash_at
            kind = INNER if inside_brackets else TRAILING if after_code else OWN
        else:
            line, column = newline.line + k, hash_at + 1
            kind = INNER if inside_brackets else OWN
        out.append(Found(line, column, text, kind))


def attach(module: S.Module, found: list[Found], source: Source) -> None:
    """Set the `comments` of the statements of `module`, and its `notes` and `lost`."""
    attacher = _Attacher(found, source)
    attacher.run(module)
    module.notes = tuple(Note(attacher.span(c), c.text) for c in found)
    module.lost = tuple(attacher.lost)


@dataclass
class _Draft:
    """Comments collected for one statement, by role: lines above, and trailing."""

    node: S.Node
    roles: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def add(self, role: str, text: str, trailing: bool = False) -> None:
        above, ending = self.roles.setdefault(role, ([], []))
        (ending if trailing else above).append(text)


@dataclass
class _Suite:
    """A body being walked: its statements, the column of the statement that owns
    it (0 for the module) and the first line after the body."""

    stmts: tuple[S.Node, ...]
    column: int
    limit: int
    index: int = 0


class _Attacher:
    def __init__(self, found: list[Found], source: Source) -> None:
        self.found = found
        self.next = 0  # index of the first comment not yet placed
        self.source = source
        self.drafts: dict[int, _Draft] = {}
        self.lost: list[Lost] = []

    # ------------------------------------------------------------ the walk

    def run(self, module: S.Module) -> None:
        # A work list of bodies, and of `else:` lines to place between two bodies.
        work: list[_Suite | tuple[S.If, int]] = [_Suite(module.body, 0, _NEVER)]
        while work and self.next < len(self.found):
            item = work[-1]
            if isinstance(item, tuple):
                work.pop()
                self.else_line(*item)
                continue
            if item.index == len(item.stmts):
                work.pop()
                self.end_of(item)
                continue
            stmt = item.stmts[item.index]
            item.index += 1
            follows = _first_line(item.stmts[item.index]) if item.index < len(item.stmts) else None
            limit = item.limit if follows is None else follows
            self.above(stmt)
            if self.peek_line() >= limit:
                continue  # nothing inside this statement nor after it in this body
            self.header(stmt, follows)
            work.extend(reversed(self.suites(stmt, limit)))
        while self.next < len(self.found):  # only what no statement could take
            self.lose(self.take(), "no statement follows it")
        for draft in self.drafts.values():
            roles = tuple(
                (role, Remark(tuple(above), trailing[-1] if trailing else None))
                for role, (above, trailing) in draft.roles.items()
            )
            draft.node.comments = Comments(roles)  # type: ignore[attr-defined]

    def suites(self, stmt: S.Node, limit: int) -> list[_Suite | tuple[S.If, int]]:
        """The bodies of a compound statement, in text order."""
        column = stmt.span.column
        if isinstance(stmt, (S.For, S.While, S.With, S.FunctionDef, S.ClassDef)):
            return [_Suite(stmt.body, column, limit)]
        if not isinstance(stmt, S.If):
            return []
        if not stmt.orelse:
            return [_Suite(stmt.body, column, limit)]
        if stmt.else_span is None:  # `elif`: the next `if` stands where `else` would
            return [
                _Suite(stmt.body, column, _first_line(stmt.orelse[0])),
                _Suite(stmt.orelse, column, limit),
            ]
        else_line = stmt.else_span.line
        return [
            _Suite(stmt.body, column, else_line),
            (stmt, else_line),
            _Suite(stmt.orelse, column, limit),
        ]

    # ------------------------------------------------------------ placing

    def peek_line(self) -> int:
        return self.found[self.next].line if self.next < len(self.found) else _NEVER

    def take(self) -> Found:
        comment = self.found[self.next]
        self.next += 1
        return comment

    def above(self, stmt: S.Node, role: str = "", line: int | None = None) -> None:
        """Own-line comments before the statement's first line (or before `line`, its
        `role` line) go above it."""
        first = _first_line(stmt) if line is None else line
        while self.peek_line() < first:
            comment = self.take()
            if comment.kind == OWN:
                self.draft(stmt).add(role, comment.text)
            else:
                self.lose(comment, INSIDE_EXPRESSION)

    def header(self, stmt: S.Node, follows: int | None) -> None:
        """Comments on the statement's own lines: its decorators, its header (up to
        its body) or, for a simple statement, all of it."""
        decorators = getattr(stmt, "decorators", ())
        role = "class" if isinstance(stmt, S.ClassDef) else "def"
        if decorators:
            first_end = decorators[0].span.end_line
            while self.peek_line() < stmt.span.line:
                comment = self.take()
                if comment.kind == OWN:
                    self.draft(stmt).add(role, comment.text)
                elif comment.kind == TRAILING and comment.line == first_end:
                    self.draft(stmt).add("", comment.text, trailing=True)
                else:
                    self.lose(comment, "a decorator line after the first cannot end in a comment")
        body = getattr(stmt, "body", None)
        if body:
            if not isinstance(stmt, (S.FunctionDef, S.ClassDef)) or not decorators:
                role = ""
            self.header_trailing(stmt, role, _first_line(body[0]))
            return
        last = stmt.span.end_line
        shared = follows is not None and follows <= last  # `a = 1; b = 2  # c`
        while self.peek_line() <= last:
            comment = self.found[self.next]
            if comment.kind == TRAILING and comment.line == last:
                if shared:
                    return  # the last statement of the line takes it
                self.draft(stmt).add("", self.take().text, trailing=True)
            else:
                self.lose(self.take(), INSIDE_EXPRESSION)

    def header_trailing(self, node: S.Node, role: str, body_line: int) -> None:
        """The comment ending a header (`for ...:`, `else:`), before its body."""
        while self.peek_line() < body_line and self.found[self.next].kind != OWN:
            comment = self.take()
            if comment.kind == TRAILING:
                self.draft(node).add(role, comment.text, trailing=True)
            else:
                self.lose(comment, INSIDE_EXPRESSION)

    def else_line(self, stmt: S.If, line: int) -> None:
        """Comments above `else:` (not taken by the body before it) and ending it."""
        self.above(stmt, "else", line)
        self.header_trailing(stmt, "else", _first_line(stmt.orelse[0]))

    def end_of(self, suite: _Suite) -> None:
        """Own-line comments after a body's last statement, indented deeper than its
        owner, until the next line of code, go after that statement."""
        while suite.stmts and self.peek_line() < suite.limit:
            comment = self.found[self.next]
            if comment.kind != OWN or comment.column <= suite.column:
                return
            self.draft(suite.stmts[-1]).add("after", self.take().text)

    # ------------------------------------------------------------ results

    def draft(self, node: S.Node) -> _Draft:
        draft = self.drafts.get(id(node))
        if draft is None:
            draft = self.drafts[id(node)] = _Draft(node)
        return draft

    def span(self, comment: Found) -> Span:
        end = comment.column + len(comment.text)
        return Span(self.source, comment.line, comment.column, comment.line, end)

    def lose(self, comment: Found, reason: str) -> None:
        self.lost.append(Lost(Note(self.span(comment), comment.text), reason))


def _first_line(stmt: S.Node) -> int:
    decorators = getattr(stmt, "decorators", ())
    return decorators[0].span.line if decorators else stmt.span.line  # type: ignore[union-attr]
