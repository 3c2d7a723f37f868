"""Native fast calls of compiled entries from Python (as numba does it): the
runtime half.

A ctypes call of an entry costs tens of microseconds: Python-side checks,
DLTensor structs built field by field, ctypes marshalling and DLPack import of
each result. A fast-call wrapper does the same work in compiled code: CPython
calls it directly as a builtin function (`METH_FASTCALL`), it reads NumPy's
array structs, calls the entry, and makes the result arrays itself. Arguments
it does not take go to the Python path, so behaviour (conversions, error
messages) is the Python path's in every case.

Code generation emits a wrapper next to every entry whose signature
`wrapper_spec` accepts (`lowering/codegen/llvm_fastcall.py`), into the JIT
module and into exported libraries alike. A wrapper holds no address of this
process: it reads the CPython and NumPy functions it calls from the module's
table `tvmlite_python_api`, in `API_SLOTS` order, which the loader fills
(`fill_api_table`). So loading a library compiles nothing.

Wrappers are used only when the process looks as expected: 64-bit, NumPy's
C-API table found, the struct offsets the wrapper reads verified on live
objects, and NumPy's own DLPack capsule destructor found and seen to release a
block (`api_table`). Otherwise callers keep the ctypes path.

Result arrays own their blocks through a capsule with NumPy's destructor (the
one `np.from_dlpack` gives imported arrays), which calls the block's deleter.
It is NumPy's code, not the module's, so a result may outlive the library
that made it.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.runtime import dlpack
from tvmlite.runtime.abi import (
    FASTCALL_RECORD_BYTES,
    FASTCALL_RECORDS,
    SHARED_FASTCALL,
    with_prefix,
)

METH_FASTCALL = 0x80
# Indices in NumPy's C-API table (numpy/__multiarray_api.h, stable since 1.x).
ARRAY_TYPE, DESCR_FROM_TYPE, NEW_FROM_DESCR, SET_BASE_OBJECT = 2, 45, 94, 282
# PyArrayObject and PyArray_Descr field offsets (NumPy's stable C ABI; 64-bit),
# checked against live objects before any wrapper is used.
OB_TYPE, AR_DATA, AR_ND, AR_DIMS, AR_DESCR, AR_FLAGS = 8, 16, 24, 32, 56, 64
DESCR_BYTEORDER, DESCR_TYPE_NUM = 26, 28
TUPLE_SIZE, TUPLE_ITEMS = 16, 24  # offsetof(PyTupleObject, ob_size / ob_item)
CAPSULE_POINTER = 16  # offsetof(PyCapsule, pointer)
C_CONTIGUOUS_ALIGNED = 0x1 | 0x100
WRITEABLE = 0x400  # also asked of arrays a parameter written in place gets
CARRAY_WRITEABLE = 0x1 | 0x100 | 0x400
# What the table `tvmlite_python_api` holds, in order: CPython and NumPy functions,
# then data (NumPy's array type, the error class, the result capsules' name and
# destructor).
API_SLOTS = (
    "save_thread",
    "restore_thread",
    "set_error",
    "vectorcall",
    "descr_from_type",
    "new_from_descr",
    "set_base",
    "capsule_new",
    "decref",
    "tuple_new",
    "array_type",
    "error_class",
    "capsule_name",
    "capsule_destructor",
    "clear_error",
    "vectorcall_method",
    "exception_matches",
    "type_lookup",
    "capsule_is_valid",
    "capsule_pointer",
    "capsule_set_name",
    "type_error",
    "dlpack_method",
    "dlpack_kwnames",
    "dlpack_max_version",
    "exchange_attribute",
    "versioned_name",
    "legacy_name",
    "used_versioned_name",
    "used_legacy_name",
    "exchange_type",
    "exchange_dltensor",
)
# The last two are the one DLPack producer type whose tensors a module's wrappers
# read themselves (through that type's C exchange API, `serve_producer`): empty
# when loaded, set from Python the first time such a producer is passed. Other
# producers the wrappers ask for a capsule (`__dlpack__(max_version=...)`, the
# slots before): the objects and names those slots point to live as long as this
# module (the capsule names must outlive every capsule renamed with them).
EXCHANGE_TYPE, EXCHANGE_DLTENSOR = (
    API_SLOTS.index("exchange_type"),
    API_SLOTS.index("exchange_dltensor"),
)
# The C exchange API (dlpack.h, DLPackExchangeAPI, version 1.2 on): a capsule on
# the producer's type; after the header (version, previous API) come five function
# pointers, of which the fourth fills a caller's DLTensor (no ownership moves).
EXCHANGE_CAPSULE = b"dlpack_exchange_api"
EXCHANGE_DLTENSOR_OFFSET = 16 + 3 * 8

# Private prototypes: setting restype/argtypes on the shared `ctypes.pythonapi`
# attributes would race with (and change the result type for) other callers.
_CAPSULE_POINTER = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_CAPSULE_NAME = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi)
)
_CAPSULE_DESTRUCTOR = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object)(
    ("PyCapsule_GetDestructor", ctypes.pythonapi)
)
_CAPSULE_NEW = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
)(("PyCapsule_New", ctypes.pythonapi))
_NEW_BUILTIN = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.py_object, ctypes.py_object
)(("PyCFunction_NewEx", ctypes.pythonapi))
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# What the wrappers pass to and compare with (module constants: they live as long
# as the process has this module).
_DLPACK_METHOD = "__dlpack__"
_DLPACK_KWNAMES = ("max_version",)
_DLPACK_MAX_VERSION = (dlpack.DLPACK_MAJOR, dlpack.DLPACK_MINOR)
_EXCHANGE_ATTRIBUTE = "__dlpack_c_exchange_api__"
_CAPSULE_NAMES = {
    "versioned_name": b"dltensor_versioned",
    "legacy_name": b"dltensor",
    "used_versioned_name": b"used_dltensor_versioned",
    "used_legacy_name": b"used_dltensor",
}


# ------------------------------------------------------------ which entries


@dataclass(frozen=True)
class ParamSpec:
    ndim: int
    dtype: str
    type_nums: tuple[int, ...]  # NumPy type numbers of the dtype (int64 has two)
    written: bool = False  # an in-place call writes it: read-only tensors are refused

    @property
    def flags(self) -> int:
        """The NumPy array flags an argument must have."""
        return C_CONTIGUOUS_ALIGNED | (WRITEABLE if self.written else 0)


@dataclass(frozen=True)
class WrapperSpec:
    """What a wrapper checks and makes: its parameters, the NumPy type numbers
    of its results, and whether they come back as a tuple."""

    params: tuple[ParamSpec, ...]
    out_type_nums: tuple[int, ...]
    as_tuple: bool


def wrapper_spec(
    params: Sequence[relax.Var], ret: relax.StructInfo, written: frozenset[int] = frozenset()
) -> WrapperSpec | None:
    """The wrapper of an entry (which writes the parameters at `written` in
    place), or None when its signature has anything but tensors of known dtype
    and rank (those keep the Python path)."""
    specs = []
    for k, p in enumerate(params):
        s = p.struct_info
        if not isinstance(s, relax.TensorStructInfo) or not _plain(s):
            return None
        specs.append(ParamSpec(s.ndim, s.dtype, type_nums(s.dtype), k in written))
    fields = ret.fields if isinstance(ret, relax.TupleStructInfo) else (ret,)
    outs = []
    for f in fields:
        if not isinstance(f, relax.TensorStructInfo) or not _plain(f):
            return None
        outs.append(np.dtype(f.dtype).num)
    if not outs:
        return None
    return WrapperSpec(tuple(specs), tuple(outs), isinstance(ret, relax.TupleStructInfo))


def _plain(s: relax.TensorStructInfo) -> bool:
    if s.ndim < 0 or s.dtype == "void":
        return False
    try:
        return np.dtype(s.dtype).kind in "biuf" and np.dtype(s.dtype).itemsize <= 8
    except TypeError:
        return False


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


# ------------------------------------------------------------ the API table


def _address(fn: Any) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


def _numpy_api() -> dict[str, int] | None:
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


def _python_api() -> dict[str, int] | None:
    """Addresses of the CPython entries and objects wrappers use, or None when
    this interpreter lacks one."""
    api = ctypes.pythonapi
    try:
        return _python_values(api)
    except AttributeError:  # an interpreter without `_PyType_Lookup`, say
        return None


def _python_values(api: Any) -> dict[str, int]:
    return {
        "save_thread": _address(api.PyEval_SaveThread),
        "restore_thread": _address(api.PyEval_RestoreThread),
        "set_error": _address(api.PyErr_SetString),
        "vectorcall": _address(api.PyObject_Vectorcall),
        "capsule_new": _address(api.PyCapsule_New),
        "decref": _address(api.Py_DecRef),
        "tuple_new": _address(api.PyTuple_New),
        "error_class": id(TVMLiteError),  # a module-level class: lives as long as we do
        "clear_error": _address(api.PyErr_Clear),
        "vectorcall_method": _address(api.PyObject_VectorcallMethod),
        "exception_matches": _address(api.PyErr_ExceptionMatches),
        "type_lookup": _address(api._PyType_Lookup),  # borrowed or NULL, never an error
        "capsule_is_valid": _address(api.PyCapsule_IsValid),
        "capsule_pointer": _address(api.PyCapsule_GetPointer),
        "capsule_set_name": _address(api.PyCapsule_SetName),
        "type_error": id(TypeError),
        "dlpack_method": id(_DLPACK_METHOD),
        "dlpack_kwnames": id(_DLPACK_KWNAMES),
        "dlpack_max_version": id(_DLPACK_MAX_VERSION),
        "exchange_attribute": id(_EXCHANGE_ATTRIBUTE),
        **{slot: _bytes_address(name) for slot, name in _CAPSULE_NAMES.items()},
        "exchange_type": 0,
        "exchange_dltensor": 0,
    }


def _bytes_address(data: bytes) -> int:
    """Where the characters of `data` are (a NUL-terminated C string)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0


def _numpy_capsule() -> dict[str, int] | None:
    """The name and destructor NumPy gives the capsule that owns an imported
    DLPack block, or None. Found on an array `np.from_dlpack` made, then seen to
    call a block's deleter when a capsule of that name dies."""
    probe = dlpack.take_managed(dlpack.new_managed(np.zeros(1, np.int8)))
    base = probe.base
    if type(base).__name__ != "PyCapsule":
        return None
    name, destructor = _CAPSULE_NAME(base), _CAPSULE_DESTRUCTOR(base)
    if not name or not destructor:
        return None
    released: list[int] = []
    deleter = _DELETER(lambda block: released.append(block or 0))
    block = dlpack.DLManagedTensorVersioned()
    block.deleter = _address(deleter)
    address = ctypes.addressof(block)
    capsule = _CAPSULE_NEW(address, name, destructor)
    del capsule  # its destructor runs now
    if released != [address]:
        return None
    return {"capsule_name": name, "capsule_destructor": destructor}


def _layout_ok() -> bool:
    """Do the offsets the wrappers read match this NumPy? Checked on live objects."""
    arr = np.zeros((3, 5), dtype=np.float32)

    def read(obj: Any, offset: int, kind: Any) -> Any:
        return kind.from_address(id(obj) + offset).value

    dims = read(arr, AR_DIMS, ctypes.c_void_p)
    descr = read(arr, AR_DESCR, ctypes.c_void_p)
    flags = read(arr, AR_FLAGS, ctypes.c_int32)
    marker = ctypes.c_int8()
    holder = _CAPSULE_NEW(ctypes.addressof(marker), None, None)
    pair = (arr, holder)
    return (
        read(holder, CAPSULE_POINTER, ctypes.c_void_p) == ctypes.addressof(marker)
        and read(pair, TUPLE_ITEMS, ctypes.c_void_p) == id(arr)
        and read(pair, TUPLE_ITEMS + 8, ctypes.c_void_p) == id(holder)
        and read(arr, OB_TYPE, ctypes.c_void_p) == id(np.ndarray)
        and read(arr, AR_DATA, ctypes.c_void_p) == arr.ctypes.data
        and read(arr, AR_ND, ctypes.c_int32) == 2
        and dims is not None
        and list((ctypes.c_int64 * 2).from_address(dims)) == [3, 5]
        and descr == id(arr.dtype)
        and read(arr.dtype, DESCR_TYPE_NUM, ctypes.c_int32) == arr.dtype.num
        and read(arr.dtype, DESCR_BYTEORDER, ctypes.c_char) == b"="
        and flags & 0x101 == 0x101
        and not read(arr[:, ::2], AR_FLAGS, ctypes.c_int32) & 1
    )


@functools.cache
def api_table() -> tuple[int, ...] | None:
    """The values of `API_SLOTS` in this process, or None when wrappers cannot
    be used here (computed once; two threads computing it at once agree)."""
    if sys.maxsize != 2**63 - 1:
        return None
    numpy_api = _numpy_api()
    if numpy_api is None or not _layout_ok():
        return None
    capsule, python_api = _numpy_capsule(), _python_api()
    if capsule is None or python_api is None:
        return None
    values = {**numpy_api, **python_api, **capsule}
    return tuple(values[slot] for slot in API_SLOTS)


def fill_api_table(address: int) -> bool:
    """Write the API table of a loaded module at `address`; False (and the table
    left empty, the wrappers unused) when wrappers cannot be used here."""
    values = api_table()
    if values is None:
        return False
    (ctypes.c_void_p * len(API_SLOTS)).from_address(address)[:] = values
    return True


# ------------------------------------------------------------ producers the wrappers read

# Producer type -> the address of its exchange API's DLTensor function, 0 when the
# type has none usable here. Holding the type keeps it alive while a table names it.
_EXCHANGE: dict[type, int] = {}
_DLTENSOR_FROM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)


def serve_producer(table_address: int, args: tuple[Any, ...]) -> bool:
    """Let the wrappers of the module whose API table is at `table_address` read
    the first producer type among `args` that has a usable C exchange API; True
    when one was newly set (the caller then calls the wrapper again). A module
    serves one such type, the first it sees; others keep the Python path."""
    table = (ctypes.c_void_p * len(API_SLOTS)).from_address(table_address)
    if table[EXCHANGE_TYPE]:
        return False
    for arg in args:
        if type(arg) is np.ndarray:
            continue
        function = _exchange_function(arg)
        if function:
            table[EXCHANGE_DLTENSOR] = function  # before the type: a wrapper tests the type
            table[EXCHANGE_TYPE] = id(type(arg))
            return True
    return False


def _exchange_function(arg: Any) -> int:
    cls = type(arg)
    found = _EXCHANGE.get(cls)
    if found is None:
        found = _probe_exchange(arg)
        if found is not None:
            _EXCHANGE[cls] = found
    return found or 0


def _probe_exchange(arg: Any) -> int | None:
    """The DLTensor function of `type(arg)`'s exchange API, checked on `arg`: it
    must describe the memory `np.from_dlpack` finds. 0 when the type has no usable
    API; None when `arg` cannot tell (it does not import: ask again next time)."""
    try:
        capsule = getattr(type(arg), "__dlpack_c_exchange_api__", None)
        if capsule is None or type(capsule).__name__ != "PyCapsule":
            return 0
        api = _CAPSULE_POINTER(capsule, EXCHANGE_CAPSULE)
        major, minor = (ctypes.c_uint32 * 2).from_address(api)
        if major != 1 or minor < 2:
            return 0
        function = ctypes.c_void_p.from_address(api + EXCHANGE_DLTENSOR_OFFSET).value
        if not function:
            return 0
        tensor = dlpack.DLTensor()
        if _DLTENSOR_FROM(function)(arg, ctypes.addressof(tensor)) != 0:
            return 0
    except Exception:  # noqa: BLE001 - a producer's API that misbehaves is not used
        return 0
    try:
        array = np.from_dlpack(arg)
    except Exception:  # noqa: BLE001 - this one does not import; another may
        return None
    if not array.size:  # no memory to compare
        return None
    same = (
        tensor.device.device_type == dlpack.KDL_CPU
        and (tensor.data or 0) + tensor.byte_offset == array.__array_interface__["data"][0]
        and tuple(tensor.shape[k] for k in range(tensor.ndim)) == array.shape
    )
    return function if same else 0


# ------------------------------------------------------------ wrappers as builtins


def served(info: Mapping[str, Any]) -> bool:
    """Does the manifest record `info` of a graph function name a wrapper?"""
    return "fastcall" in info or "fastcall_record" in info


def addresses(image: Any, info: Mapping[str, Any], prefix: str) -> tuple[int, int]:
    """The wrapper serving the function of manifest record `info` in `image` (a
    code image with symbols spelt with `prefix`) and, when that is the module's
    shared wrapper, the function's record; (0, 0) when none serves it."""
    if "fastcall" in info:
        return image.address(info["fastcall"]), 0
    index = info.get("fastcall_record")
    if index is None:
        return 0, 0
    records = image.address(with_prefix(FASTCALL_RECORDS, prefix))
    wrapper = image.address(with_prefix(SHARED_FASTCALL, prefix))
    return wrapper, records + index * FASTCALL_RECORD_BYTES


class PyMethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


def fast_builtin(
    address: int,
    fallback: Callable[..., Any],
    name: str,
    record: int = 0,
    convert: Callable[[np.ndarray], Any] | None = None,
) -> Any:
    """The compiled wrapper at `address` as a builtin function. Its `self` is the
    tuple (fallback[, convert]), or, for the shared wrapper of a large module
    (`record` given), (fallback, a capsule of the function's record's
    address[, convert]); the wrapper hands every result array to `convert` when
    given. The caller holds the module whose code the wrapper is."""
    owner: tuple[Any, ...] = (fallback,)
    if record:
        owner += (_CAPSULE_NEW(record, None, None),)
    if convert is not None:
        owner += (convert,)
    definition, at = _method_definition(address, name)
    return _NEW_BUILTIN(at, owner, definition)


def _method_definition(address: int, name: str) -> tuple[bytearray, int]:
    """A PyMethodDef of the wrapper at `address`, followed by its name, in one
    bytearray, and where the definition is; the builtin holds the bytearray in
    its module slot.

    CPython reads a builtin's definition as long as the builtin exists, its
    deallocation included, and releases the module slot after the last read.
    The memory must also survive the garbage collector's teardown of a cycle
    holding the builtin (a callable and its builtin are one): the collector
    clears the objects of such a cycle one by one, and clearing a ctypes object
    frees its buffer at once, also while the builtin holding it is still to be
    freed; the builtin's deallocation would then read freed memory and release
    whatever was written there since as an object (a segmentation fault in the
    collector). A bytearray holds no objects: the collector never clears it,
    and its bytes stay where they are (it is never resized)."""
    size = ctypes.sizeof(PyMethodDef)
    text = name.encode() + b"\0"
    block = bytearray(size + len(text))
    block[size:] = text
    at = ctypes.addressof(ctypes.c_char.from_buffer(block))  # (the view is let go here)
    method = PyMethodDef.from_buffer(block)
    method.ml_name, method.ml_meth, method.ml_flags = at + size, address, METH_FASTCALL
    del method  # a view of `block`, which is not resizable while one exists
    return block, at
