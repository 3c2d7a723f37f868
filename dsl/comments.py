"""Comments a user wrote, as data of the node they belong to.

DESIGN.md: "Text a user wrote is never lost". The grammar hands every comment of a
text to the syntax statement it sits next to (`grammar/comments.py`), the parsers
move it onto the IR node that statement becomes, and the printer writes it back
beside the line it prints for that node. Structural equality and hashing ignore
comments (`compare=False` wherever a node holds them), so a commented text and
the same text without comments parse to equal IR.

A node's comments are keyed by the *role* of the printed line they belong to:

- `""`: the node's first line (for a function, its decorator): the comments on
  their own lines above it, and the one ending it (`x = 1  # like this`).
- `"after"`: comments on their own lines after the node, at its indentation (how
  a body's last comments are kept: on its last statement).
- lines the printer writes for a compound node: `"def"` / `"class"` (after the
  decorator), `"else"`, and the block and function headers: `"axis:<i>"`,
  `"where"`, `"reads"`, `"writes"`, `"attr"`, `"alloc:<i>"`, `"match:<i>"`,
  `"init"`, `"func_attr"`, `"root"` (the `# with T.block("root"):` line),
  `"output"` (`R.output(...)`), `"module_attrs"`, `"global_infos"`, `"end"` (the
  end of a module class with no function).
- file level, on the module (or on the lone function a text holds): `"top"`
  (above the import header), `"import <alias>"` (an import line), and `imports`,
  the namespaces the text imported with real import statements (the header is
  then printed as imports, not as comments).

Comments nothing can hold where they stand (inside a multi-line expression) are
reported by the grammar (`Lost`), and `tvms fmt` refuses to rewrite such a file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import Span

# Comment lines the printer writes itself: they are its output, not the user's.
HEADER_LINES = frozenset(
    {
        "# from typing import TypeVar",
        "# from tvm.script import ir as I",
        "# from tvm.script import tir as T",
        "# from tvm.script import tirx as T",
        "# from tvm.tirx.layout import Axis",
        "# from tvm.script import relax as R",
    }
)
ROOT_MARKERS = ('# with T.block("root"):', '# with T.sblock("root"):')
# The last line of a text whose constants went to the metadata table.
METADATA_FOOTER = "# Metadata omitted. Use show_meta=True in script() method to show it."


@dataclass(frozen=True, slots=True)
class Remark:
    """The comments of one printed line: whole lines above it, and the one ending
    it. Texts are kept as written, from the `#` to the end of the line."""

    above: tuple[str, ...] = ()
    trailing: str | None = None

    def lines(self) -> tuple[str, ...]:
        """All of it as whole lines (for a line that cannot end in a comment)."""
        return self.above if self.trailing is None else (*self.above, self.trailing)

    def __add__(self, other: Remark) -> Remark:
        """`self` then `other`, for one line: a second trailing comment goes above."""
        if self.trailing is not None and other.trailing is not None:
            return Remark((*self.above, self.trailing, *other.above), other.trailing)
        return Remark((*self.above, *other.above), self.trailing or other.trailing)


@dataclass(frozen=True, slots=True)
class Comments:
    """The comments of one node: `(role, Remark)` pairs in the order of the text.
    `imports` is set on a file's top node only (see the module docstring).

    `declared` is the layout of the text around the node rather than a comment: the
    free vars declared just above its line (`i = T.int32()` inside a body). The
    printer declares them there again when that line still holds all their uses:
    where a text placed a declaration is a choice TVM's printer made with more
    than the text says (a use in a node it does not print)."""

    roles: tuple[tuple[str, Remark], ...] = ()
    imports: tuple[str, ...] | None = None
    declared: tuple[str, ...] = ()

    def get(self, role: str) -> Remark | None:
        for key, remark in self.roles:
            if key == role:
                return remark
        return None

    def with_role(self, role: str, remark: Remark | None) -> Comments:
        """These comments with `remark` added to `role` (after what it holds)."""
        if remark is None:
            return self
        old = self.get(role)
        if old is None:
            return dataclasses.replace(self, roles=(*self.roles, (role, remark)))
        roles = tuple((k, old + remark if k == role else r) for k, r in self.roles)
        return dataclasses.replace(self, roles=roles)

    def replaced(self, role: str, remark: Remark) -> Comments | None:
        """These comments with `role` holding `remark` instead (None when empty)."""
        if not remark.above and remark.trailing is None:
            return self.without(role)
        roles = tuple((k, remark if k == role else r) for k, r in self.roles)
        return dataclasses.replace(self, roles=roles)

    def without(self, *roles: str) -> Comments | None:
        """These comments less `roles` (None when nothing is left)."""
        kept = tuple(pair for pair in self.roles if pair[0] not in roles)
        if not kept and self.imports is None and not self.declared:
            return None
        return dataclasses.replace(self, roles=kept)


def add(comments: Comments | None, role: str, more: Remark | None) -> Comments | None:
    """`comments` with `more` added to `role`, for a node that may have none yet."""
    if more is None:
        return comments
    return (comments or Comments()).with_role(role, more)


def merged(comments: Comments | None, more: Comments | None) -> Comments | None:
    """`comments` with every role of `more` added (and its `imports`, if any)."""
    if more is None:
        return comments
    for role, remark in more.roles:
        comments = add(comments, role, remark)
    if more.imports is not None:
        comments = dataclasses.replace(comments or Comments(), imports=more.imports)
    return declaring(comments, more.declared)


def declaring(comments: Comments | None, names: tuple[str, ...]) -> Comments | None:
    """`comments` with the free vars `names` declared above the node's line too."""
    if not names:
        return comments
    base = comments or Comments()
    return dataclasses.replace(base, declared=(*base.declared, *names))


def attached(node: Any, comments: Comments | None) -> Any:
    """A frozen IR node (statement, binding, block) carrying `comments` too."""
    if comments is None:
        return node
    return dataclasses.replace(node, comments=merged(node.comments, comments))


@dataclass(frozen=True, slots=True)
class Note:
    """One comment of a text, where it stands (what `tvms fmt` checks it kept)."""

    span: Span
    text: str


@dataclass(frozen=True, slots=True)
class Lost:
    """A comment no node can hold where it stands, and why."""

    note: Note
    reason: str


def loose(comments: Comments | None) -> tuple[str, ...]:
    """Every comment of a statement that becomes no node of its own (a declaration,
    `pass`), as whole lines in text order: they go above the next statement."""
    if comments is None:
        return ()
    return tuple(line for _, remark in comments.roles for line in remark.lines())


def carried(lines: tuple[str, ...], comments: Comments | None) -> Comments | None:
    """`comments` with `lines` (from statements before it, see `loose`) above its
    first line."""
    if not lines:
        return comments
    head = Remark(lines)
    if comments is None:
        return Comments((("", head),))
    old = comments.get("")
    if old is None:
        return dataclasses.replace(comments, roles=(("", head), *comments.roles))
    roles = tuple((k, head + r if k == "" else r) for k, r in comments.roles)
    return dataclasses.replace(comments, roles=roles)


def printed_header_off(remark: Remark) -> Remark:
    """`remark` less the header comment lines that end it: the printer writes TVM's
    header again above a nested function (a user's copy earlier on stays)."""
    above = list(remark.above)
    while above and above[-1] in HEADER_LINES:
        above.pop()
    return Remark(tuple(above), remark.trailing)


def footer_off(comments: Comments | None) -> Comments | None:
    """A file's comments less the metadata footer that ends them: the printer
    writes it again when the module still has constants in the table."""
    after = None if comments is None else comments.get("after")
    if after is None or after.trailing is not None or after.above[-1:] != (METADATA_FOOTER,):
        return comments
    return comments.replaced("after", Remark(after.above[:-1]))  # type: ignore[union-attr]


def take_head(node: object) -> Remark | None:
    """Take the `""` comments off a syntax statement whose line the printer writes as
    part of another node (a block's `T.reads`, a function's `T.func_attr`): the
    caller gives them to that node; the rest stays with the statement."""
    comments: Comments | None = getattr(node, "comments", None)
    head = None if comments is None else comments.get("")
    if head is not None:
        node.comments = comments.without("")  # type: ignore[attr-defined, union-attr]
    return head
