"""The syntax tree of `.tvms` text: the Python subset the grammar accepts.

The grammar's transformer builds these nodes directly (no Lark trees survive the
grammar boundary). They say nothing about meaning: `dsl/parse/` turns them into
IR, resolving names against the `I`/`T`/`R` namespaces and its scopes. Nothing
here is ever evaluated. Statements carry the comments written around them
(`comments`, set by `grammar/comments.py`), which the parsers move onto the IR.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tvmlite.diagnostics import Span
from tvmlite.dsl.comments import Comments, Lost, Note

SPAN = field(default=None, compare=False, repr=False)
COMMENTS = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Node:
    """Base of syntax nodes; every subclass has a `span`."""


# ---------------------------------------------------------------- expressions


@dataclass(slots=True)
class Name(Node):
    id: str
    span: Span | None = SPAN


@dataclass(slots=True)
class Attribute(Node):
    """`value.attr`; `dotted()` gives `"T.axis.remap"` for a chain of names."""

    value: Node
    attr: str
    span: Span | None = SPAN


@dataclass(slots=True)
class Constant(Node):
    """int, float, str, bool or None. Negative numbers are `UnaryOp("-", ...)`."""

    value: int | float | str | bool | None
    span: Span | None = SPAN


@dataclass(slots=True)
class Keyword(Node):
    name: str
    value: Node
    span: Span | None = SPAN


@dataclass(slots=True)
class Call(Node):
    func: Node
    args: tuple[Node, ...]
    keywords: tuple[Keyword, ...] = ()
    span: Span | None = SPAN


@dataclass(slots=True)
class Slice(Node):
    """`start:stop:step` inside a subscript; parts may be None."""

    start: Node | None
    stop: Node | None
    step: Node | None = None
    span: Span | None = SPAN


@dataclass(slots=True)
class Subscript(Node):
    """`value[i, j]` has `indices == (i, j)`; `value[()]` has `()`. A single index
    written with a trailing comma (`value[i,]`) is the same as `value[i]`."""

    value: Node
    indices: tuple[Node, ...]
    span: Span | None = SPAN


@dataclass(slots=True)
class UnaryOp(Node):
    """op: `-`, `+`, `~`, `not`."""

    op: str
    operand: Node
    span: Span | None = SPAN


@dataclass(slots=True)
class BinOp(Node):
    """op: `+ - * / // % ** << >> & | ^ @`."""

    op: str
    left: Node
    right: Node
    span: Span | None = SPAN


@dataclass(slots=True)
class BoolOp(Node):
    """op: `and` / `or`; left-associative pairs."""

    op: str
    left: Node
    right: Node
    span: Span | None = SPAN


@dataclass(slots=True)
class Compare(Node):
    """`a < b <= c` is `Compare(a, ("<", "<="), (b, c))`; ops include `==`, `!=`,
    `in`, `not in`, `is`, `is not`."""

    left: Node
    ops: tuple[str, ...]
    comparators: tuple[Node, ...]
    span: Span | None = SPAN


@dataclass(slots=True)
class IfExp(Node):
    """`body if test else orelse`."""

    test: Node
    body: Node
    orelse: Node
    span: Span | None = SPAN


@dataclass(slots=True)
class Tuple(Node):
    """`(a, b)`, `(a,)`, `()`, or a bare `a, b` (`parenthesized` False)."""

    elts: tuple[Node, ...]
    parenthesized: bool = True
    span: Span | None = SPAN


@dataclass(slots=True)
class List(Node):
    elts: tuple[Node, ...]
    span: Span | None = SPAN


@dataclass(slots=True)
class Dict(Node):
    keys: tuple[Node, ...]
    values: tuple[Node, ...]
    span: Span | None = SPAN


@dataclass(slots=True)
class Lambda(Node):
    """Parsed so that it can be rejected with a clear message where it is not allowed."""

    params: tuple[str, ...]
    body: Node
    span: Span | None = SPAN


# ---------------------------------------------------------------- statements


@dataclass(slots=True)
class ExprStmt(Node):
    value: Node
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Assign(Node):
    """`a = v`, `a, b = v` (target a `Tuple`), `a = b = v` (several targets)."""

    targets: tuple[Node, ...]
    value: Node
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class AnnAssign(Node):
    """`x: ann = v` or a bare `x: ann` (value None)."""

    target: Node
    annotation: Node
    value: Node | None
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class AugAssign(Node):
    """`x += v`: parsed so it can be rejected or lowered with a located message."""

    target: Node
    op: str
    value: Node
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class For(Node):
    target: Node
    iter: Node
    body: tuple[Node, ...]
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class While(Node):
    test: Node
    body: tuple[Node, ...]
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class If(Node):
    """`elif` chains arrive as an `If` alone in `orelse`."""

    test: Node
    body: tuple[Node, ...]
    orelse: tuple[Node, ...] = ()
    span: Span | None = SPAN
    # the `else` keyword (None without one, or for an `elif`)
    else_span: Span | None = field(default=None, compare=False, repr=False)
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class WithItem(Node):
    context: Node
    target: Node | None = None
    span: Span | None = SPAN


@dataclass(slots=True)
class With(Node):
    items: tuple[WithItem, ...]
    body: tuple[Node, ...]
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Assert(Node):
    test: Node
    msg: Node | None = None
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Return(Node):
    value: Node | None = None
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Pass(Node):
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Break(Node):
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Continue(Node):
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Import(Node):
    """`import x` / `from x import y as z`: only `from __future__ import annotations`
    is meaningful; the rest is rejected by the parser with this span."""

    module: str
    names: tuple[tuple[str, str | None], ...] = ()
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Param(Node):
    name: str
    annotation: Node | None = None
    default: Node | None = None
    span: Span | None = SPAN


@dataclass(slots=True)
class FunctionDef(Node):
    """`type_params` holds PEP 695 names (`def f[n, m](...)`)."""

    name: str
    params: tuple[Param, ...]
    returns: Node | None
    body: tuple[Node, ...]
    decorators: tuple[Node, ...] = ()
    type_params: tuple[str, ...] = ()
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class ClassDef(Node):
    name: str
    bases: tuple[Node, ...]
    body: tuple[Stmt, ...]
    decorators: tuple[Node, ...] = ()
    span: Span | None = SPAN
    comments: Comments | None = COMMENTS


@dataclass(slots=True)
class Module(Node):
    body: tuple[Stmt, ...]
    span: Span | None = SPAN
    # every comment of the text, and those no statement could take (grammar/comments.py)
    notes: tuple[Note, ...] = field(default=(), compare=False, repr=False)
    lost: tuple[Lost, ...] = field(default=(), compare=False, repr=False)


# A statement: what a module, a class or a block holds; each keeps its comments.
Stmt = (
    ExprStmt
    | Assign
    | AnnAssign
    | AugAssign
    | For
    | While
    | If
    | With
    | Assert
    | Return
    | Pass
    | Break
    | Continue
    | Import
    | FunctionDef
    | ClassDef
)


def dotted(node: Node) -> str | None:
    """`T.axis.remap` for a chain of attributes over a name, else None."""
    if type(node) is Attribute and type(node.value) is Name:
        return f"{node.value.id}.{node.attr}"  # `R.add`: the common case, on every call
    parts: list[str] = []
    while isinstance(node, Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
