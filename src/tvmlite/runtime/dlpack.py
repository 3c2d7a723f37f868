"""DLPack structs in ctypes, NumPy arrays as DLTensors (zero-copy), and owned
DLManagedTensorVersioned blocks back as NumPy arrays (zero-copy too: NumPy calls
the deleter when the array is collected; versioned, so the arrays are writable).

Blocks made on the Python side (results of packed functions) use the same
layout as the ones compiled code makes (header, shape, data at 64 bytes) and
libc `free` as the deleter, so the two are interchangeable (whoever releases a
block calls its own deleter) and need no JIT code alive.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime.scalars import describe

HEADER, ALIGN, KDL_CPU, TENSOR_OFFSET = 80, 64, 1, 32
DLPACK_MAJOR, DLPACK_MINOR = 1, 0  # the version of the blocks made here, and asked for
_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}
_KINDS = {0: "i", 1: "u", 2: "f", 6: "b"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


_LIBC = ctypes.CDLL(None)
_ALIGNED_ALLOC = _LIBC.aligned_alloc
_ALIGNED_ALLOC.restype = ctypes.c_void_p
_ALIGNED_ALLOC.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
FREE_ADDRESS = ctypes.cast(_LIBC.free, ctypes.c_void_p).value
_CAPSULE_NEW = ctypes.pythonapi.PyCapsule_New
_CAPSULE_NEW.restype = ctypes.py_object
_CAPSULE_NEW.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def dl_dtype(dtype: np.dtype) -> tuple[int, int] | None:
    """(code, bits) of a NumPy dtype, or None when DLPack has no equivalent here."""
    code = _CODES.get(dtype.kind)
    if code is None or dtype.byteorder == ">":
        return None
    return code, dtype.itemsize * 8


def numpy_dtype(code: int, bits: int, lanes: int) -> np.dtype:
    kind = _KINDS.get(code)
    if kind is None or lanes != 1:
        raise TVMLiteError(
            f"DLPack dtype (code {code}, bits {bits}, lanes {lanes}) has no NumPy equivalent"
        )
    return np.dtype("bool") if kind == "b" else np.dtype(f"{kind}{bits // 8}")


def as_array(arg: Any, where: str) -> np.ndarray:
    """`arg` as a NumPy array: itself, or what its `__dlpack__` exports (zero-copy;
    torch, JAX, CuPy on the CPU, ...). `where` starts the error message."""
    if isinstance(arg, np.ndarray):
        return arg
    if not _producer(arg):
        raise TVMLiteError(
            f"{where}: expected a tensor (numpy.ndarray or an object with __dlpack__), "
            f"got {describe(arg)}"
        )
    try:
        return np.from_dlpack(arg)
    except Exception as err:  # noqa: BLE001 - whatever the producer raised, located
        raise TVMLiteError(f"{where}: cannot import via DLPack: {_reason(err)}") from err


def _reason(err: Exception) -> str:
    """What a producer's exception says: its message, or its class when it has none."""
    return str(err) or type(err).__name__


def _producer(arg: Any) -> bool:
    """Whether `arg` exports a tensor through DLPack (NumPy scalars are values)."""
    return hasattr(arg, "__dlpack__") and not isinstance(arg, np.generic)


def fill_tensor(t: DLTensor, arr: np.ndarray, keep: list[Any]) -> None:
    """Describe `arr` in `t` without copying; `keep` holds the shape/stride arrays."""
    code, bits = _CODES[arr.dtype.kind], arr.dtype.itemsize * 8
    t.data = arr.__array_interface__["data"][0]
    t.device = DLDevice(KDL_CPU, 0)
    t.ndim = arr.ndim
    t.dtype = DLDataType(code, bits, 1)
    shape = (ctypes.c_int64 * max(1, arr.ndim))(*arr.shape)
    keep.append(shape)
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    if not arr.flags.c_contiguous:
        steps = [s // arr.itemsize for s in arr.strides]
        strides = (ctypes.c_int64 * max(1, arr.ndim))(*steps)
        keep.append(strides)
        t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0


class _Capsule:
    """The producer side of `np.from_dlpack` for one owned block."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (KDL_CPU, 0)


def take_managed(address: int) -> np.ndarray:
    """A NumPy array over an owned DLManagedTensorVersioned; NumPy frees it when done."""
    capsule = _CAPSULE_NEW(address, b"dltensor_versioned", None)
    return np.from_dlpack(_Capsule(capsule))


def release_managed(address: int) -> None:
    """Call a block's deleter (for results a caller will not use)."""
    if not address:
        return
    managed = DLManagedTensorVersioned.from_address(address)
    if managed.deleter:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(managed.deleter)(address)


def view_tensor(address: int) -> np.ndarray:
    """A writable NumPy view of a compact DLTensor someone else owns."""
    t = DLTensor.from_address(address)
    dtype = numpy_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    shape = tuple(t.shape[k] for k in range(t.ndim))
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count == 0 or not t.data:
        return np.zeros(shape, dtype)
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(t.data + t.byte_offset)
    return np.frombuffer(raw, dtype).reshape(shape)


def new_managed(arr: np.ndarray) -> int:
    """Copy `arr` into a fresh block with the layout compiled code uses."""
    if dl_dtype(arr.dtype) is None:
        raise TVMLiteError(f"dtype {arr.dtype} cannot be returned to compiled code")
    if not arr.flags.c_contiguous:
        arr = arr.copy()  # (ascontiguousarray would make a 0-d array 1-d)
    head = -(-(HEADER + arr.ndim * 8) // ALIGN) * ALIGN
    data_bytes = -(-arr.nbytes // ALIGN) * ALIGN
    block = _ALIGNED_ALLOC(ALIGN, head + data_bytes)
    if not block:
        raise MemoryError("out of memory returning a tensor to compiled code")
    shape, data = block + HEADER, block + head
    (ctypes.c_int64 * max(1, arr.ndim)).from_address(shape)[: arr.ndim] = arr.shape
    ctypes.memmove(data, arr.__array_interface__["data"][0], arr.nbytes)
    managed = DLManagedTensorVersioned.from_address(block)
    code, bits = _CODES[arr.dtype.kind], arr.dtype.itemsize * 8
    managed.version = DLPackVersion(DLPACK_MAJOR, DLPACK_MINOR)
    managed.manager_ctx = None
    managed.deleter = FREE_ADDRESS
    managed.flags = 0
    managed.dl_tensor = DLTensor(
        data, DLDevice(KDL_CPU, 0), arr.ndim, DLDataType(code, bits, 1),
        ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)), None, 0,
    )  # fmt: skip
    return block
