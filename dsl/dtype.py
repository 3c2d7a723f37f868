"""Data types as strings (`"float32"`, `"int64"`, `"bool"`, `"float32x4"`, `"handle"`).

A dtype is a plain string everywhere in the IR; this module parses and checks them.
"""

from __future__ import annotations

import re

SCALAR_CODES = ("int", "uint", "float", "bfloat")
_DTYPE = re.compile(
    r"^(?:(bool)|(handle)|(void)|(int|uint|float|bfloat)(8|16|32|64)|"
    r"(float8_e4m3fn|float8_e5m2|float8_e4m3fnuz|float8_e5m2fnuz|float4_e2m1fn))(?:x(\d+))?$"
)
# Bit widths a code may take; others (`float8`, `int7`) are rejected.
_WIDTHS = {"int": (8, 16, 32, 64), "uint": (8, 16, 32, 64), "float": (16, 32, 64), "bfloat": (16,)}


def is_valid(dtype: str) -> bool:
    m = _DTYPE.match(dtype)
    if not m:
        return False
    if m.group(4):
        return int(m.group(5)) in _WIDTHS[m.group(4)]
    return True


def code(dtype: str) -> str:
    """`int`, `uint`, `float`, `bfloat`, `bool`, `handle`, `void` or an fp8/fp4 name."""
    m = _DTYPE.match(dtype)
    if not m:
        raise ValueError(f"bad dtype {dtype!r}")
    return m.group(1) or m.group(2) or m.group(3) or m.group(4) or m.group(6)


def bits(dtype: str) -> int:
    m = _DTYPE.match(dtype)
    if not m:
        raise ValueError(f"bad dtype {dtype!r}")
    if m.group(1):
        return 1
    if m.group(2):
        return 64
    if m.group(3):
        return 0
    if m.group(6):
        return 4 if m.group(6).startswith("float4") else 8
    return int(m.group(5))


def lanes(dtype: str) -> int:
    m = _DTYPE.match(dtype)
    return int(m.group(7)) if m and m.group(7) else 1


def element_of(dtype: str) -> str:
    """The scalar dtype of a vector dtype (`float32x4` -> `float32`)."""
    return dtype.split("x")[0] if lanes(dtype) > 1 else dtype


def with_lanes(dtype: str, n: int) -> str:
    base = element_of(dtype)
    return base if n == 1 else f"{base}x{n}"


def is_float(dtype: str) -> bool:
    return code(dtype) in ("float", "bfloat") or code(dtype).startswith("float")


def is_int(dtype: str) -> bool:
    return code(dtype) == "int"


def is_uint(dtype: str) -> bool:
    return code(dtype) == "uint"


def is_bool(dtype: str) -> bool:
    return code(dtype) == "bool"


def is_integer_like(dtype: str) -> bool:
    """int, uint or bool: the types integer arithmetic applies to."""
    return code(dtype) in ("int", "uint", "bool")
