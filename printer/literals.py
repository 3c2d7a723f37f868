"""Literal forms shared by the TIR and Relax printers (TVM's rules, SYNTAX.md 4.3)."""

from __future__ import annotations

import math

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def dtype_text(dtype: str) -> str:
    """`dtype`, which the text spells verbatim (`T.float32`, `"float32"`): IR built in
    code may hold any string there, and one that is not a dtype is refused."""
    if isinstance(dtype, str) and dt.is_valid(dtype):
        return dtype
    raise TVMLiteError(f"cannot print the dtype {dtype!r}: it is not a dtype (such as 'float32')")


def float_text(value: float) -> str:
    """Integral values in fixed notation with one decimal; others with 17
    significant digits, so that every double round-trips. inf/nan are not
    handled here (they print as quoted strings)."""
    if value.is_integer():
        return f"{value:.1f}"
    return f"{value:.17g}"


def is_special(value: float) -> bool:
    return math.isinf(value) or math.isnan(value)


def special_text(value: float) -> str:
    """`"inf"`, `"-inf"`, `"nan"` (quoted) for the `T.float32("inf")` form."""
    if math.isnan(value):
        return '"nan"'
    return '"inf"' if value > 0 else '"-inf"'


def string_text(value: str) -> str:
    """Double-quoted with C-style escapes."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def tuple_text(items: list[str]) -> str:
    """A Python tuple display: `()`, `(a,)`, `(a, b)`."""
    if len(items) == 1:
        return f"({items[0]},)"
    return f"({', '.join(items)})"
