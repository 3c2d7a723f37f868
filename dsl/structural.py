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
from typing import Any

import numpy as np

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule

# Identity nodes: matched by correspondence, their names do not count.
_BOUND = (tir.Var, tir.Buffer, relax.Var)
_NAME_FIELDS = {"name"}


def _fields(node: Any) -> list[tuple[str, Any]]:
    """The compared fields of a dataclass node, names of bound nodes excluded."""
    skip_names = isinstance(node, _BOUND)
    return [
        (f.name, getattr(node, f.name))
        for f in node.__dataclass_fields__.values()
        if f.compare and not (skip_names and f.name in _NAME_FIELDS)
    ]


def _children(node: Any) -> list[Any] | None:
    """The parts of a container or node to compare in order; None for leaves."""
    if isinstance(node, IRModule):
        return [dict(node.functions), dict(node.attrs), dict(node.global_infos)]
    if isinstance(node, (tuple, list)):
        return list(node)
    if isinstance(node, dict):
        return [item for pair in sorted(node.items(), key=lambda kv: repr(kv[0])) for item in pair]
    if hasattr(node, "__dataclass_fields__"):
        return [value for _, value in _fields(node)]
    return None


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


def structural_equal(a: Any, b: Any) -> bool:
    """True when `a` and `b` are the same program up to renaming of variables."""
    left: dict[int, Any] = {}
    right: dict[int, Any] = {}
    keep: list[Any] = []  # keeps mapped objects alive so ids stay unique
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, _BOUND):
            if id(x) in left or id(y) in right:
                if left.get(id(x)) is not y or right.get(id(y)) is not x:
                    return False
                continue
            left[id(x)], right[id(y)] = y, x
            keep.extend((x, y))
        if isinstance(x, dict) and set(map(repr, x)) != set(map(repr, y)):
            return False
        if isinstance(x, relax.Constant):
            if not _leaf_equal(x.data, y.data):
                return False
            continue
        xs, ys = _children(x), _children(y)
        if xs is None or ys is None:
            if not _leaf_equal(x, y):
                return False
            continue
        if len(xs) != len(ys):
            return False
        stack.extend(zip(reversed(xs), reversed(ys), strict=True))
    return True


def structural_hash(node: Any) -> int:
    """A hash that agrees with `structural_equal`: variables hash by the order in
    which they are first met, never by name or identity."""
    digest = hashlib.blake2b(digest_size=8)
    order: dict[int, int] = {}
    keep: list[Any] = []
    stack = [node]
    while stack:
        x = stack.pop()
        digest.update(type(x).__name__.encode())
        if isinstance(x, _BOUND):
            if id(x) in order:
                digest.update(b"ref%d" % order[id(x)])
                continue
            order[id(x)] = len(order)
            keep.append(x)
        if isinstance(x, relax.Constant):
            digest.update(str(x.data.dtype).encode() + repr(x.data.shape).encode())
            digest.update(x.data.tobytes())
            continue
        parts = _children(x)
        if parts is None:
            digest.update(_leaf_bytes(x))
            continue
        digest.update(b"n%d" % len(parts))
        stack.extend(reversed(parts))
    return int.from_bytes(digest.digest(), "little", signed=True)


def _leaf_bytes(x: Any) -> bytes:
    if isinstance(x, float) and math.isnan(x):
        return b"nan"
    if isinstance(x, np.ndarray):
        return str(x.dtype).encode() + repr(x.shape).encode() + x.tobytes()
    return repr(x).encode()
