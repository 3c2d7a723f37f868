"""Which dialect a text is written in, and which constructs a dialect cannot spell.

A text's dialect is read from its tokens (`grammar.tokenize`), so that only code
decides it: a `T.sblock` inside a comment or a string does not. First the header
TVM prints (`# from tvm.script import tirx as T`) or the imports of a file written
as Python, then any spelling only TVM 0.27 uses (corpus/SPELLINGS.md); a text
with neither is classic.

TVM 0.27 added statements the classic spelling has no words for: the flat
mutable binding (`x: T.float32 = v`, a `Bind`) and the statement-level
`T.alloc_buffer`. Printed in classic they come back as a let and a block
allocation, which compute the same thing but are different IR. Nor can classic
say `s_tir=True` of a function without blocks (classic derives the flag from the
blocks), nor tirx buffer layouts, nor a string's struct info (`I.StringType()`,
an `R.Object` in classic). Everything else converts both ways without loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import CLASSIC, TVM027
from tvmlite.dsl.tir_layout import DEFAULT_LAYOUT
from tvmlite.dsl.walk import walk
from tvmlite.grammar.indenter import CLOSING, NEWLINE, OPENING

if TYPE_CHECKING:
    from tvmlite.grammar.lexer import Tok

# Header lines, as comments TVM prints or as imports; the first one found decides.
HEADERS = {
    "# from tvm.script import tirx as T": TVM027,
    "# from tvm.tirx.layout import Axis": TVM027,
    "# from typing import TypeVar": TVM027,
    "# from tvm.script import tir as T": CLASSIC,
    "from tvm.script import tirx as T": TVM027,
    "from tvm.script import tir as T": CLASSIC,
}
# Every spelling only 0.27 has contains one of these: a text without any is classic
# without looking at its tokens (most classic texts), and a parse pays nothing.
HINTS_027 = (
    "T.sblock", "out_ty", "ty_args", "s_tir", "TypeVar", "T.let", "tirx.", "R.Any", "I.StringType",
    "ir.GenericConst",
)  # fmt: skip
KEYWORDS_027 = frozenset({"out_ty", "ty_args", "s_tir"})  # as keyword arguments
# (token, token after it) pairs that may spell 0.27: `out_ty=`, `TypeVar(`, `T.let[`, `"tirx.":`
PAIRS_027 = frozenset(
    {
        ("NAME", "EQUAL"),
        ("NAME", "LPAR"),
        ("DOTTED_NAME", "LSQB"),
        ("STRING", "COLON"),
        ("STRING", "RSQB"),
    }
)


def detect_dialect(text: str, tokens: Sequence[Tok]) -> str:
    """`tvm-0.27` or `classic` for `text`, read from its `tokens`."""
    header = _header(tokens)
    if header is not None:
        return header
    if not any(hint in text for hint in HINTS_027):
        return CLASSIC
    return TVM027 if _spells_027(tokens) else CLASSIC


def _header(tokens: Sequence[Tok]) -> str | None:
    """The dialect the leading comments and imports name, if they name one."""
    words: list[str] = []  # the import statement being read
    for token in tokens:
        if token.type != NEWLINE:
            if not words and token.type not in ("FROM", "IMPORT"):
                return None  # the first statement that is no import ends the header
            words.append(token.value)
            continue
        if words:
            found = HEADERS.get(" ".join(words))
            if found is not None:
                return found
            words = []
        for line in token.value.split("\n"):
            found = HEADERS.get(" ".join(line.split())) if "#" in line else None
            if found is not None:
                return found
    return None


def _spells_027(tokens: Sequence[Tok]) -> bool:
    """Whether code (not a comment, not inside a string) uses a 0.27-only spelling:
    `T.sblock...`, `R.Any`, `I.StringType`, `out_ty=` / `ty_args=` / `s_tir=` as keyword arguments,
    `TypeVar(`, `T.let[`, a `"tirx.*"` dict key, or the metadata key `"ir.GenericConst"`."""
    depth = 0  # of brackets: keyword arguments are inside some
    previous: Tok | None = None
    for token in tokens:
        kind = token.type
        if kind in OPENING:
            depth += 1
        elif kind in CLOSING:
            depth -= 1
        if kind == "DOTTED_NAME" and (
            token.value.startswith("T.sblock") or token.value in ("R.Any", "I.StringType")
        ):
            return True
        if previous is not None and (previous.type, kind) in PAIRS_027:
            last = previous.value
            if kind == "EQUAL" and depth > 0 and last in KEYWORDS_027:
                return True
            if kind == "LPAR" and last == "TypeVar" or kind == "LSQB" and last == "T.let":
                return True
            if kind == "COLON" and last.lstrip("rRuU")[1:].startswith("tirx."):
                return True
            if kind == "RSQB" and last.lstrip("rRuU")[1:-1] == "ir.GenericConst":
                return True  # metadata["ir.GenericConst"][i]: 0.27's key of a constant
        previous = token
    return False


def tvm027_only(root: Any) -> list[str]:
    """Descriptions of the constructs under `root` that classic cannot spell."""
    found: list[str] = []
    for node in walk(root):
        if isinstance(node, tir.Bind):
            found.append(f"flat binding of '{node.var.name}' (classic has only lets)")
        elif isinstance(node, tir.Buffer) and (
            node.layout != DEFAULT_LAYOUT or node.allocated_addr
        ):
            found.append(f"tirx layout or allocated_addr of buffer '{node.name}'")
        elif isinstance(node, tir.AttrStmt) and node.key == tir.HINT:
            found.append("T.hint (a tirx directive)")
        elif isinstance(node, tir.ScopeIdDef):
            found.append(f"tirx scope id T.{node.kind}")
        elif isinstance(node, tir.AllocBuffer) and node.form == "alloc_buffer":
            found.append(f"statement-level T.alloc_buffer of '{node.buffer.name}'")
        elif isinstance(node, tir.Call) and node.pointee is not None:
            found.append(f"T.{node.op} typed T.handle(...).ty (classic has no typed handles)")
        elif isinstance(node, tir.Call) and node.op in _LOGICAL_BITWISE and node.dtype == "bool":
            found.append(f"T.{node.op} of bools (classic reads `&`, `|` as and, or)")
        elif isinstance(node, tir.PrimFunc) and node.s_tir and not _has_block(node.body):
            found.append("s_tir=True on a function without blocks")
        elif isinstance(node, relax.StringStructInfo):
            found.append("a string struct info (I.StringType(); classic has R.Object)")
        if isinstance(node, tir.PrimFunc | tir.For | tir.Block | tir.AllocBuffer):
            pairs = node.attrs if isinstance(node, tir.PrimFunc) else node.annotations
            for key, value in pairs:
                if isinstance(value, tir.IntImm) and value.dtype == "bool":
                    found.append(f"typed bool T.bool(...) of attribute '{key}'")
    return found


_LOGICAL_BITWISE = ("bitwise_and", "bitwise_or")


def _has_block(stmt: tir.Stmt) -> bool:
    return any(isinstance(node, tir.Block) for node in walk(stmt))
