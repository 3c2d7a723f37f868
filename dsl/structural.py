"""Structural equality and hashing of IR, up to renaming of variables.

Two programs are equal when they have the same shape and their variables
(TIR vars, buffers, Relax vars) correspond one to one: names are ignored,
spans are ignored, everything else (dtypes, struct info, attributes, block
names, function names) counts. The walks are iterative so that deeply nested
IR never hits Python's recursion limit.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.printable import Printable

# Identity nodes: matched by correspondence, their names do not count.
_BOUND = (tir.Var, tir.Buffer, relax.Var)
_NAME_FIELDS = {"name"}


def _fields(node: Any) -> list[tuple[str, Any]]:
    """The compared fields of a dataclass node, names of bound nodes excluded."""
    return [(name, getattr(node, name)) for name in _compared(type(node))]


def _compared(cls: type) -> tuple[str, ...]:
    """The names of the compared fields of dataclass `cls` (found once per class)."""
    names = _COMPARED.get(cls)
    if names is None:
        skip_names = issubclass(cls, _BOUND)
        names = _COMPARED[cls] = tuple(
            f.name
            for f in cls.__dataclass_fields__.values()  # type: ignore[attr-defined]
            if f.compare and not (skip_names and f.name in _NAME_FIELDS)
        )
    return names


_COMPARED: dict[type, tuple[str, ...]] = {}  # per IR class: a fixed set, filled as met


def _labelled(node: Any) -> list[tuple[Any, Any]] | None:
    """The parts of a container or node to compare in order, each with its step
    on a path (a field name, an index, or `(key,)` / `(key, "key")` for a dict's
    value / key; `_path_text` spells them); None for leaves."""
    if isinstance(node, IRModule):
        return [
            ("functions", dict(node.functions)),
            ("attrs", dict(node.attrs)),
            ("global_infos", dict(node.global_infos)),
        ]
    if isinstance(node, (tuple, list)):
        return list(enumerate(node))
    if isinstance(node, dict):
        out: list[tuple[Any, Any]] = []
        for key, value in sorted(node.items(), key=lambda kv: repr(kv[0])):
            out += [((key, "key"), key), ((key,), value)]
        return out
    if hasattr(node, "__dataclass_fields__"):
        return _fields(node)
    return None


def _children(node: Any) -> list[Any] | None:
    parts = _labelled(node)
    return None if parts is None else [value for _, value in parts]


def _leaf_equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return repr(a) == repr(b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.tobytes() == b.tobytes()
        )
    return type(a) is type(b) and a == b


@dataclass(frozen=True)
class Difference:
    """Where two programs first differ: `path` from the root (`.functions['main']
    .body.seq[1].value`), the two values there and why they differ."""

    path: str
    left: Any
    right: Any
    reason: str


def structural_equal(a: Any, b: Any) -> bool:
    """True when `a` and `b` are the same program up to renaming of variables."""
    return first_difference(a, b) is None


def first_difference(a: Any, b: Any) -> Difference | None:
    """The first place, in program order, where `a` and `b` differ beyond a
    renaming of variables; None when they are structurally equal."""
    left: dict[int, Any] = {}
    right: dict[int, Any] = {}
    keep: list[Any] = []  # keeps mapped objects alive so ids stay unique
    # Each entry: the pair and its path as (parent path, step) links, spelt out
    # only for the difference reported.
    stack: list[tuple[Any, Any, Any]] = [(a, b, None)]
    while stack:
        x, y, where = stack.pop()
        if type(x) is not type(y):
            why = f"a {type(x).__name__} against a {type(y).__name__}"
            return Difference(_path_text(where), x, y, why)
        if isinstance(x, _BOUND):
            if id(x) in left or id(y) in right:
                if left.get(id(x)) is not y or right.get(id(y)) is not x:
                    why = "variables that do not correspond (each side binds another here)"
                    return Difference(_path_text(where), x, y, why)
                continue  # met before: their fields were compared then
            left[id(x)], right[id(y)] = y, x
            keep.extend((x, y))
        if isinstance(x, dict) and set(map(repr, x)) != set(map(repr, y)):
            return Difference(_path_text(where), x, y, "different keys")
        if isinstance(x, relax.Constant):
            if x != y and x.struct_info == y.struct_info:
                return Difference(_path_text(where), x, y, "constants of different data")
            if x.struct_info != y.struct_info:
                return Difference(_path_text(where), x, y, "constants of different struct info")
            continue
        xs, ys = _labelled(x), _labelled(y)
        if xs is None or ys is None:
            if not _leaf_equal(x, y):
                why = f"{_short(x)} against {_short(y)}"
                return Difference(_path_text(where), x, y, why)
            continue
        if len(xs) != len(ys):
            return Difference(_path_text(where), x, y, f"{len(xs)} parts against {len(ys)}")
        for (step, xi), (_, yi) in zip(reversed(xs), reversed(ys), strict=True):
            stack.append((xi, yi, (where, step)))
    return None


def _path_text(where: Any) -> str:
    steps: list[str] = []
    while where is not None:
        where, step = where
        if isinstance(step, int):
            steps.append(f"[{step}]")
        elif isinstance(step, tuple):
            steps.append(f"[{_key_text(step[0])}]" + (" (the key)" if len(step) == 2 else ""))
        else:
            steps.append(f".{step}")
    return "".join(reversed(steps)) or "(the whole program)"


def _key_text(key: Any) -> str:
    name = getattr(key, "name_hint", None) or getattr(key, "name", None)
    return repr(name if isinstance(name, str) else key)


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def assert_structural_equal(a: Any, b: Any) -> None:
    """Raise AssertionError naming the first difference between `a` and `b` (its
    path, what differs) and printing both sides, unless they are structurally equal."""
    found = first_difference(a, b)
    if found is None:
        return
    raise AssertionError(
        f"not structurally equal at {found.path}: {found.reason}\n"
        f"left  {found.path}: {_short(found.left, 200)}\n"
        f"right {found.path}: {_short(found.right, 200)}\n"
        f"--- left\n{_printed(a)}\n--- right\n{_printed(b)}"
    )


def _printed(node: Any) -> str:
    if isinstance(node, Printable):
        return node.script()
    return _short(node, 2000)


def structural_hash(node: Any) -> int:
    """A hash that agrees with `structural_equal`: variables hash by the order in
    which they are first met, never by name or identity."""
    digest = hashlib.blake2b(digest_size=8)
    _hash_into(digest, node, names=False)
    return int.from_bytes(digest.digest(), "little", signed=True)


def structural_key(node: Any) -> str:
    """A 256-bit hex digest of `node` for keys that outlive a process (the
    compile cache): as `structural_hash`, but variables' names count too, so two
    nodes with one key print alike (and give alike messages)."""
    digest = hashlib.blake2b(digest_size=32)
    _hash_into(digest, node, names=True)
    return digest.hexdigest()


def _hash_into(digest: Any, node: Any, names: bool) -> None:
    # `_children` inlined for the common cases, bytes gathered and hashed at once:
    # hashing walks every node.
    out: list[bytes] = []
    add = out.append
    order: dict[int, int] = {}
    keep: list[Any] = []
    stack = [node]
    while stack:
        x = stack.pop()
        cls = type(x)
        add(_tag(cls))
        if isinstance(x, _BOUND):
            if id(x) in order:
                add(b"ref%d" % order[id(x)])
                continue
            order[id(x)] = len(order)
            keep.append(x)
            if names:
                add(b"name" + repr(x.name).encode())
        if cls is relax.Constant:
            add(x.digest + repr(x.struct_info).encode())
            continue
        if cls is tuple or cls is list:
            parts: Any = x
        elif hasattr(cls, "__dataclass_fields__") and cls is not IRModule:
            parts = [getattr(x, name) for name in _compared(cls)]
        else:
            parts = _children(x)
            if parts is None:
                add(_leaf_bytes(x))
                continue
        add(b"n%d" % len(parts))
        stack.extend(reversed(parts))
    digest.update(b"".join(out))


def _tag(cls: type) -> bytes:
    tag = _TAGS.get(cls)
    if tag is None:
        tag = _TAGS[cls] = cls.__name__.encode()
    return tag


_TAGS: dict[type, bytes] = {}  # per IR class, as _COMPARED


def _leaf_bytes(x: Any) -> bytes:
    if isinstance(x, float) and math.isnan(x):
        return b"nan"
    if isinstance(x, np.ndarray):
        return str(x.dtype).encode() + repr(x.shape).encode() + x.tobytes()
    return repr(x).encode()
