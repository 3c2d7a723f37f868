"""Native fast calls of compiled entries from Python (as numba does it).

A ctypes call of an entry costs tens of microseconds: Python-side checks,
DLTensor structs built field by field, ctypes marshalling and DLPack import of
each result. A fast-call wrapper does the same work in compiled code
(`fastcall_ir.py`): CPython calls it directly as a builtin function
(`METH_FASTCALL`), it reads NumPy's array structs, calls the entry, and makes the
result arrays itself. Arguments it does not handle go to the Python path, so
behaviour (conversions, error messages) is the Python path's in every case.

Wrappers exist only when the process looks as expected: 64-bit, NumPy's
C-API table found, and the struct offsets the wrapper reads verified on live
objects (`layout_ok`). Otherwise callers keep the ctypes path.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.lowering.codegen.target import once
from tvmlite.runtime import fastcall_ir as fir

METH_FASTCALL = 0x80
# Indices in NumPy's C-API table (numpy/__multiarray_api.h, stable since 1.x).
ARRAY_TYPE, DESCR_FROM_TYPE, NEW_FROM_DESCR, SET_BASE_OBJECT = 2, 45, 94, 282
_NAMES = itertools.count()
# Private prototypes: setting restype/argtypes on the shared `ctypes.pythonapi`
# attributes would race with (and change the result type for) other callers.
_CAPSULE_POINTER = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_NEW_BUILTIN = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p
)(("PyCFunction_NewEx", ctypes.pythonapi))


class PyMethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


def _address(fn: Any) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


@functools.cache
def numpy_api() -> dict[str, int] | None:
    """Addresses of the NumPy C-API entries wrappers call, or None."""
    try:
        from numpy._core import _multiarray_umath as multiarray
    except ImportError:  # NumPy 1.x
        from numpy.core import _multiarray_umath as multiarray  # type: ignore[no-redef]
    capsule = getattr(multiarray, "_ARRAY_API", None)
    if capsule is None:
        return None
    table_address = _CAPSULE_POINTER(capsule, None)
    if not table_address:
        return None
    table = (ctypes.c_void_p * (SET_BASE_OBJECT + 1)).from_address(table_address)
    if table[ARRAY_TYPE] != id(np.ndarray):
        return None
    return {
        "array_type": table[ARRAY_TYPE],
        "descr_from_type": table[DESCR_FROM_TYPE],
        "new_from_descr": table[NEW_FROM_DESCR],
        "set_base": table[SET_BASE_OBJECT],
    }


@functools.cache
def python_api() -> dict[str, int]:
    api = ctypes.pythonapi
    return {
        "save_thread": _address(api.PyEval_SaveThread),
        "restore_thread": _address(api.PyEval_RestoreThread),
        "set_error": _address(api.PyErr_SetString),
        "vectorcall": _address(api.PyObject_Vectorcall),
        "capsule_new": _address(api.PyCapsule_New),
        "capsule_pointer": _address(api.PyCapsule_GetPointer),
        "decref": _address(api.Py_DecRef),
        "tuple_new": _address(api.PyTuple_New),
        "error_class": id(TVMLiteError),  # a module-level class: lives as long as we do
    }


@once
def _destructor() -> Any:
    """The capsule destructor of result arrays: one JIT module kept for the life of
    the process (a result may outlive every executable)."""
    from tvmlite.lowering.codegen.jit import JitModule
    from tvmlite.lowering.codegen.target import HOST

    return JitModule(fir.destructor_module(python_api()["capsule_pointer"]), machine=HOST)


@functools.cache
def layout_ok() -> bool:
    """Do the offsets the wrappers read match this NumPy? Checked on live objects."""
    if sys.maxsize != 2**63 - 1 or numpy_api() is None:
        return False
    arr = np.zeros((3, 5), dtype=np.float32)

    def read(obj: Any, offset: int, kind: Any) -> Any:
        return kind.from_address(id(obj) + offset).value

    dims = read(arr, fir.AR_DIMS, ctypes.c_void_p)
    descr = read(arr, fir.AR_DESCR, ctypes.c_void_p)
    flags = read(arr, fir.AR_FLAGS, ctypes.c_int32)
    return (
        read(arr, fir.OB_TYPE, ctypes.c_void_p) == id(np.ndarray)
        and read(arr, fir.AR_DATA, ctypes.c_void_p) == arr.ctypes.data
        and read(arr, fir.AR_ND, ctypes.c_int32) == 2
        and dims is not None
        and list((ctypes.c_int64 * 2).from_address(dims)) == [3, 5]
        and descr == id(arr.dtype)
        and read(arr.dtype, fir.DESCR_TYPE_NUM, ctypes.c_int32) == arr.dtype.num
        and read(arr.dtype, fir.DESCR_BYTEORDER, ctypes.c_char) == b"="
        and flags & 0x101 == 0x101
        and not read(arr[:, ::2], fir.AR_FLAGS, ctypes.c_int32) & 1
    )


def type_nums(dtype: str) -> tuple[int, ...]:
    """NumPy type numbers of `dtype`, canonical first (int64 is both `l` and `q`)."""
    want = np.dtype(dtype)
    nums = {want.num}
    nums.update(np.dtype(c).num for c in np.typecodes["All"] if _same(c, want))
    return (want.num, *sorted(nums - {want.num}))


def _same(code: str, want: np.dtype) -> bool:
    try:
        return np.dtype(code) == want
    except TypeError:
        return False


def wrapper_spec(
    params: tuple[relax.Var, ...], ret: relax.StructInfo, address: int
) -> fir.WrapperSpec | None:
    """The spec of a wrapper for an entry, or None when the signature has anything
    but tensors of known dtype and rank (those keep the Python path)."""
    from tvmlite.lowering.codegen.llvm_host_abi import packed_dtype

    specs = []
    for p in params:
        s = p.struct_info
        if not _plain_tensor(s):
            return None
        assert isinstance(s, relax.TensorStructInfo)
        specs.append(fir.ParamSpec(s.ndim, type_nums(s.dtype), packed_dtype(s.dtype)))
    fields = ret.fields if isinstance(ret, relax.TupleStructInfo) else (ret,)
    if not fields or not all(_plain_tensor(f) for f in fields):
        return None
    outs = tuple(np.dtype(f.dtype).num for f in fields)  # type: ignore[attr-defined]
    api = numpy_api()
    assert api is not None
    destructor = _destructor().address(fir.DESTRUCTOR)
    addresses = {**api, **python_api(), "entry": address, "destructor": destructor}
    return fir.WrapperSpec(tuple(specs), outs, isinstance(ret, relax.TupleStructInfo), addresses)


def _plain_tensor(s: relax.StructInfo) -> bool:
    if not isinstance(s, relax.TensorStructInfo) or s.ndim < 0 or s.dtype == "void":
        return False
    try:
        return np.dtype(s.dtype).kind in "biuf" and np.dtype(s.dtype).itemsize <= 8
    except TypeError:
        return False


class FastCall:
    """A compiled wrapper turned into a builtin function. Holds the JIT code, the
    PyMethodDef CPython points to, and (through the builtin's `self`) the
    Python fallback."""

    def __init__(self, spec: fir.WrapperSpec, fallback: Callable[..., Any], name: str) -> None:
        from tvmlite.lowering.codegen.jit import JitModule
        from tvmlite.lowering.codegen.target import HOST

        symbol = f"tvmlite_fastcall_{next(_NAMES)}"
        self.jit = JitModule(fir.wrapper_module(spec, symbol), machine=HOST)
        self.name = name.encode()
        self.method = PyMethodDef(self.name, self.jit.address(symbol), METH_FASTCALL, None)
        new = ctypes.pythonapi.PyCFunction_NewEx
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]
        self.function = new(ctypes.addressof(self.method), fallback, None)


def make_fast(
    params: tuple[relax.Var, ...], ret: relax.StructInfo, address: int,
    fallback: Callable[..., Any], name: str,
) -> FastCall | None:  # fmt: skip
    """A fast call of the entry at `address`, or None when not possible here."""
    if not layout_ok():
        return None
    spec = wrapper_spec(params, ret, address)
    return None if spec is None else FastCall(spec, fallback, name)
