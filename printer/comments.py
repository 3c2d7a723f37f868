"""The user's comments in printed text (dsl/comments.py says where each one is kept).

Each printer writes a node's comments beside the line it prints for the node's
role: whole lines above it at its indentation, the trailing one after two spaces,
and the node's `"after"` lines after everything it prints. The file level is here:
the comments above the header, and the header itself, which is printed as import
statements when the text imported the namespaces instead of naming them in TVM's
header comments.
"""

from __future__ import annotations

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl.comments import Comments, Remark
from tvmlite.dsl.module import CLASSIC

# The namespace imports a text may have, in the order TVM prints its header.
_IMPORTS = {
    "annotations": "from __future__ import annotations",
    "TypeVar": "from typing import TypeVar",
    "I": "from tvm.script import ir as I",
    "T": "",  # tir or tirx, by dialect
    "Axis": "from tvm.tirx.layout import Axis",
    "R": "from tvm.script import relax as R",
}


def noted(line: str, remark: Remark | None) -> list[str]:
    """`line` with its comments: those above it, and the one ending it."""
    if remark is None:
        return [line]
    if remark.trailing is None:
        return [*remark.above, line]
    return [*remark.above, f"{line}  {remark.trailing}"]


def role(comments: Comments | None, name: str = "") -> Remark | None:
    """The comments of one role, checked: IR built in code may hold any string, and
    only a one-line comment cannot change the text around it."""
    found = None if comments is None else comments.get(name)
    for line in found.lines() if found is not None else ():
        if not line.startswith("#") or "\n" in line or "\r" in line:
            raise TVMLiteError(f"cannot print the comment {line!r}: a comment is one line from #")
    return found


def with_comments(lines: list[str], comments: Comments | None) -> list[str]:
    """The lines printed for a node, with its `""` comments on the first line and
    its `"after"` lines at the end."""
    if comments is None:
        return lines
    return noted(lines[0], role(comments)) + lines[1:] + after_lines(comments)


def after_lines(comments: Comments | None) -> list[str]:
    found = role(comments, "after")
    return list(found.lines()) if found is not None else []


def file_header(header: list[str], comments: Comments | None, dialect: str) -> list[str]:
    """The comments above the header, then the header: TVM's comment lines as the
    printer made them (`header`, ending in a blank line), or, for a text that
    imported the namespaces, import statements for those it used and imported."""
    top = role(comments, "top")
    out = list(top.lines()) if top is not None else []
    imports = None if comments is None else comments.imports
    if imports is None:
        return out + header
    wanted = {_alias(line) for line in header if line} | set(imports)
    for alias in _IMPORTS:
        if alias in wanted:
            out.extend(noted(_import_line(alias, dialect), role(comments, f"import {alias}")))
    return [*out, ""]


def _alias(header_line: str) -> str:
    """The name a header comment line imports (`# from ... import relax as R`: R)."""
    return header_line.rsplit(" ", 1)[-1]


def _import_line(alias: str, dialect: str) -> str:
    if alias == "T":
        return f"from tvm.script import {'tir' if dialect == CLASSIC else 'tirx'} as T"
    return _IMPORTS[alias]
