"""Data types as strings (`"float32"`, `"int64"`, `"bool"`, `"float32x4"`, `"handle"`).

A dtype is a plain string everywhere in the IR; this module parses and checks them.
A scalable vector (`"float32xvscalex4"`: 4 x vscale lanes, known only on the device,
as SVE and RVV have them) has `lanes()` 4 and `is_scalable()` true.
"""

from __future__ import annotations

import functools
import re

from tvmlite.diagnostics import did_you_mean

SCALAR_CODES = ("int", "uint", "float", "bfloat")
_DTYPE = re.compile(
    r"^(?:(bool)|(handle)|(void)|(int|uint|float|bfloat)(1|4|8|16|32|64|128)|"
    r"(float8_e4m3fn|float8_e5m2|float8_e4m3fnuz|float8_e5m2fnuz|float8_e4m3|float8_e3m4|"
    r"float8_e4m3b11fnuz|float8_e8m0fnu|float6_e2m3fn|float6_e3m2fn|float4_e2m1fn))"
    r"(?:x(vscalex)?(\d+))?$"
)
# Bit widths a code may take; others (`int7`, `float12`) are rejected. int4/uint4 are
# TVM's packed sub-byte integers, int1/uint1 its one-bit ones (binary tensor cores,
# LLVM's i1 flags), uint128 a 16-byte register (a CUDA cluster-launch response), `float8`
# its generic 8-bit float (what `R.memory.view` reinterprets bytes as): the LLVM backend
# refuses them.
_WIDTHS = {
    "int": (1, 4, 8, 16, 32, 64),
    "uint": (1, 4, 8, 16, 32, 64, 128),
    "float": (8, 16, 32, 64),
    "bfloat": (16,),
}
# Lanes are a 16-bit field in TVM's DataType (and in DLPack's), so `x65536` is no dtype.
MAX_LANES = 65535
# The largest finite value of each float dtype: a literal beyond it does not fit.
_FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
    "float8_e4m3fn": 448.0,
    "float8_e4m3fnuz": 240.0,
    "float8_e5m2": 57344.0,
    "float8_e5m2fnuz": 57344.0,
    "float8_e4m3": 240.0,
    "float8_e3m4": 15.5,
    "float8_e4m3b11fnuz": 30.0,
    "float8_e8m0fnu": 2.0**127,
    "float6_e2m3fn": 7.5,
    "float6_e3m2fn": 28.0,
    "float4_e2m1fn": 6.0,
}


@functools.lru_cache(maxsize=1024)
def _parse(dtype: str) -> tuple[str, int, int, bool] | None:
    """(code, bits, lanes, valid) of a string the pattern accepts, else None.

    Cached because the typing rules ask about the same few dtypes for every node
    of a module; a pure function of an immutable string, and bounded."""
    m = _DTYPE.match(dtype)
    if not m:
        return None
    kind = m.group(1) or m.group(2) or m.group(3) or m.group(4) or m.group(6)
    if m.group(1):
        width = 1
    elif m.group(2):
        width = 64
    elif m.group(3):
        width = 0
    elif m.group(6):
        width = int(m.group(6)[5])  # float8_..., float6_..., float4_...
    else:
        width = int(m.group(5))
    n = int(m.group(8)) if m.group(8) else 1
    valid = (width in _WIDTHS[kind] if m.group(4) else True) and 1 <= n <= MAX_LANES
    return kind, width, n, valid


# TVM 0.27's short names of dtype constructors (`T.f32(0.5)` is `T.float32(0.5)`); TVM
# prints the full name.
SHORT_NAMES = {
    "bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
}  # fmt: skip


def is_valid(dtype: str) -> bool:
    info = _parse(dtype)
    return info is not None and info[3]


def unknown(text: str) -> str:
    """The message for `text`, which is not a dtype, with the closest dtypes of
    as many lanes (`flaot32x4`: float32x4)."""
    lanes = re.search(r"x\d+$", text)
    suffix = lanes.group(0) if lanes else ""
    close = did_you_mean(text, [s + suffix for s in scalar_names()])
    return f"unknown dtype '{text}'" + close


def scalar_names() -> list[str]:
    """The scalar dtypes, as names to suggest."""
    scalars = ["bool", "handle", *(f"{c}{w}" for c, ws in _WIDTHS.items() for w in ws)]
    return scalars + [name for name in _FLOAT_MAX if "_" in name]


def code(dtype: str) -> str:
    """`int`, `uint`, `float`, `bfloat`, `bool`, `handle`, `void` or an fp8/fp4 name."""
    info = _parse(dtype)
    if info is None:
        raise ValueError(f"bad dtype {dtype!r}")
    return info[0]


def bits(dtype: str) -> int:
    info = _parse(dtype)
    if info is None:
        raise ValueError(f"bad dtype {dtype!r}")
    return info[1]


def lanes(dtype: str) -> int:
    info = _parse(dtype)
    return info[2] if info is not None else 1


def is_scalable(dtype: str) -> bool:
    """A vector of vscale x lanes (`float32xvscalex4`)."""
    return "xvscalex" in dtype


def element_of(dtype: str) -> str:
    """The scalar dtype of a vector dtype (`float32x4` -> `float32`)."""
    return dtype.split("x")[0] if lanes(dtype) > 1 or is_scalable(dtype) else dtype


def with_lanes(dtype: str, n: int, scalable: bool = False) -> str:
    base = element_of(dtype)
    if scalable:
        return f"{base}xvscalex{n}"
    return base if n == 1 else f"{base}x{n}"


def like_lanes(dtype: str, other: str) -> str:
    """`dtype`'s element with the lanes of `other`, fixed or scalable."""
    return with_lanes(dtype, lanes(other), is_scalable(other))


def is_float(dtype: str) -> bool:
    kind = code(dtype)
    return kind in ("float", "bfloat") or kind.startswith("float")


def is_int(dtype: str) -> bool:
    return code(dtype) == "int"


def is_uint(dtype: str) -> bool:
    return code(dtype) == "uint"


def is_bool(dtype: str) -> bool:
    return code(dtype) == "bool"


def is_integer_like(dtype: str) -> bool:
    """int, uint or bool: the types integer arithmetic applies to."""
    return code(dtype) in ("int", "uint", "bool")


@functools.lru_cache(maxsize=64)
def int_range(dtype: str) -> tuple[int, int] | None:
    """(lowest, highest) value of a scalar int, uint or bool dtype; None for others."""
    info = _parse(dtype)
    if info is None or info[2] != 1 or info[0] not in ("int", "uint", "bool"):
        return None
    kind, width = info[0], info[1]
    if kind == "int":
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def limits(dtype: str) -> tuple[float, float] | None:
    """(lowest, highest) finite value of a scalar dtype (ints for integer dtypes);
    None for others."""
    bounds = int_range(dtype)
    if bounds is not None:
        return bounds
    big = _FLOAT_MAX.get(dtype)
    return None if big is None else (-big, big)


def range_error(dtype: str, value: float) -> str | None:
    """Why `value` cannot be an immediate of scalar `dtype`, or None when it can.
    Floats may be inf or nan (TVM allows both), but not finite beyond the dtype's range."""
    bounds = int_range(dtype)
    if bounds is not None:
        if isinstance(value, float):
            return f"{dtype} expects an integer, got {value!r}"
        if not bounds[0] <= value <= bounds[1]:
            return f"value {value} is out of range for {dtype} ({bounds[0]} to {bounds[1]})"
        return None
    big = _FLOAT_MAX.get(dtype)
    if big is not None and abs(value) > big and abs(value) != float("inf"):
        return f"value {value} is out of range for {dtype} (largest finite: {big})"
    return None
