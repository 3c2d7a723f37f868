"""TIR dtypes as LLVM types, in registers and in memory, and typed constants.

Bool is `i1` in registers but one byte in memory and at the call boundary (NumPy's
`bool_` is a byte). float16 is LLVM `half`; constants are rounded to half first,
because LLVM rejects a half literal that is not exactly representable.
"""

from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
_FLOATS = {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}


def _scalar(elem: str, memory: bool) -> ir.Type:
    code = dt.code(elem)
    if code == "bool":
        return I8 if memory else I1
    if code in ("int", "uint") and 8 <= dt.bits(elem) <= 64:  # int4: two to a byte
        return ir.IntType(dt.bits(elem))
    if code == "float" and dt.bits(elem) in _FLOATS:
        return _FLOATS[dt.bits(elem)]
    if code == "handle":
        return PTR
    raise TVMLiteError(f"the LLVM backend does not support dtype {elem}")


def check_fixed(dtype: str) -> None:
    """Refuses a scalable vector dtype: LLVM types here have a lane count fixed at build."""
    if dt.is_scalable(dtype):  # vscale is the device's (SVE, RVV): unknown when compiling
        raise TVMLiteError(f"the LLVM backend does not support scalable vector dtype {dtype}")


def value_type(dtype: str) -> ir.Type:
    """Type of an SSA value of `dtype` (bool is i1; vectors are <n x T>)."""
    check_fixed(dtype)
    scalar = _scalar(dt.element_of(dtype), memory=False)
    n = dt.lanes(dtype)
    return scalar if n == 1 else ir.VectorType(scalar, n)


def memory_type(dtype: str) -> ir.Type:
    """Type of an element of `dtype` in a buffer (bool is i8)."""
    check_fixed(dtype)
    scalar = _scalar(dt.element_of(dtype), memory=True)
    n = dt.lanes(dtype)
    return scalar if n == 1 else ir.VectorType(scalar, n)


def abi_type(dtype: str) -> ir.Type:
    """Type of a scalar parameter at the call boundary: bool is a byte and half is
    passed as float (ctypes has neither i1 nor half)."""
    if dtype == "float16":
        return _FLOATS[32]
    return memory_type(dtype)


def byte_size(dtype: str) -> int:
    return max(1, dt.bits(dt.element_of(dtype)) // 8) * dt.lanes(dtype)


def constant(dtype: str, value: float | int) -> ir.Constant:
    """A constant of `dtype` (splatted across lanes for vector dtypes)."""
    if type(value) is int:  # indices, sizes, statuses: most constants; shared
        return _int_constant(dtype, value)
    return _constant(dtype, value)


@functools.lru_cache(maxsize=4096)
def _int_constant(dtype: str, value: int) -> ir.Constant:
    return _constant(dtype, value)


def _constant(dtype: str, value: float | int) -> ir.Constant:
    elem = dt.element_of(dtype)
    scalar_type = _scalar(elem, memory=False)
    if dt.is_float(elem):
        with np.errstate(over="ignore"):  # beyond float16's range is inf, as IEEE rounds
            number = float(np.float16(value)) if elem == "float16" else float(value)
        scalar = ir.Constant(scalar_type, number)
    elif dt.is_bool(elem):
        scalar = ir.Constant(scalar_type, 1 if value else 0)
    else:
        bits = dt.bits(elem)
        scalar = ir.Constant(scalar_type, int(value) & ((1 << bits) - 1))
    n = dt.lanes(dtype)
    return scalar if n == 1 else ir.Constant(ir.VectorType(scalar_type, n), [scalar] * n)


def loop_hint(module: ir.Module, key: str, *values: ir.Value) -> ir.MDValue:
    """Loop metadata `key` (e.g. "llvm.loop.unroll.full") for a loop's back edge:
    a node that refers to itself, as LLVM requires."""
    hint = module.add_metadata([ir.MetaDataString(module, key), *values])
    node = ir.MDValue(module, [], name=str(len(module.metadata)))
    node.operands = (node, hint)
    return node
