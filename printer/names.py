"""Printed names: sanitized, unique among the names in scope, released when the
scope that defined them closes (siblings reuse `i`; shadowing gives `i_1`).
The IR never stores printed names; this table decides them while printing."""

from __future__ import annotations

import keyword
import re
from typing import Any

from tvmlite.diagnostics import TVMLiteError

RESERVED = ("I", "T", "R", "cls")
_BAD = re.compile(r"[^0-9A-Za-z_]")


def sanitize(hint: str) -> str:
    name = _BAD.sub("_", hint) or "v"
    return "_" + name if name[0].isdigit() else name


def is_identifier(name: object) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def identifier(name: str, what: str) -> str:
    """`name`, which the text uses verbatim (a function name, an operator or intrinsic
    name, a keyword argument): IR built in code may hold any string there, and one
    that is not an identifier would change what the text says, so it is refused."""
    if is_identifier(name):
        return name
    raise TVMLiteError(f"cannot print {what} {name!r}: it is not a Python identifier")


def dotted_identifier(name: str, what: str) -> str:
    """`relax.nn.conv2d`: identifiers joined by dots, else refused."""
    if isinstance(name, str) and all(map(is_identifier, name.split("."))):
        return name
    raise TVMLiteError(f"cannot print {what} {name!r}: it is not a dotted name")


class NameTable:
    """Maps IR objects (by identity) to printed names, with nested frames."""

    def __init__(self, reserved: tuple[str, ...] = RESERVED) -> None:
        self._frames: list[list[Any]] = [[]]
        self._names: dict[int, str] = {}
        self._objects: dict[int, Any] = {}  # keeps ids stable while named
        self._taken: dict[str, int] = {name: 1 for name in reserved}

    def push(self) -> None:
        self._frames.append([])

    def pop(self) -> None:
        for obj in self._frames.pop():
            name = self._names.pop(id(obj))
            del self._objects[id(obj)]
            self._taken[name] -= 1
            if not self._taken[name]:
                del self._taken[name]

    @property
    def depth(self) -> int:
        """Index of the innermost frame, for `define(..., frame=depth)` later."""
        return len(self._frames) - 1

    def define(self, obj: Any, hint: str, frame: int | None = None) -> str:
        """Name `obj` in the current frame (or in the enclosing `frame`, as TVM does for
        symbolic vars, which live as long as their function); returns the existing
        name if it has one."""
        if id(obj) in self._names:
            return self._names[id(obj)]
        base = sanitize(hint)
        name, k = base, 0
        while name in self._taken:
            k += 1
            name = f"{base}_{k}"
        self._taken[name] = self._taken.get(name, 0) + 1
        self._names[id(obj)] = name
        self._objects[id(obj)] = obj
        self._frames[-1 if frame is None else frame].append(obj)
        return name

    def share(self, obj: Any, other: Any) -> str:
        """Name `obj` as `other` (already named) is named, in the current frame: two IR
        objects that the text spells as one variable."""
        name = self._names[id(other)]
        self._taken[name] += 1
        self._names[id(obj)] = name
        self._objects[id(obj)] = obj
        self._frames[-1].append(obj)
        return name

    def get(self, obj: Any) -> str | None:
        return self._names.get(id(obj))

    def is_taken(self, name: str) -> bool:
        return name in self._taken
