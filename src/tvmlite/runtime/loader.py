"""`tvmlite.load_module(path)`: a library written by `export_library`, loaded
with ctypes and called like the result of `build()`.

Loading a library runs its code (its constructors run when it is mapped), as
`ctypes.CDLL` does: only load libraries you trust. What can be checked first
is checked before the library is mapped, from its bytes (`runtime/elf.py`):
it is an ELF shared object with one manifest (`PREFIX_manifest`, the prefix
export_library gave every exported symbol), the manifest is valid, every entry
it names is `PREFIX_entry_<name>`, a function the library itself defines (never
a symbol such as libc's `abort`), and every packed function it calls is
registered.

The library's manifest carries every entry's signature, so the callables flatten
and check their arguments exactly as `build()`'s do. Packed functions are bound
from `tvmlite.register_func` by name when the library loads.

The dynamic linker keeps one copy of a library per path: loading a path whose
file changed since this process first loaded it goes through a private copy of
the bytes just checked, removed as soon as it is mapped. A library is unmapped
when its `Library` and every callable from it are gone (results own their
memory and never call back into it).
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import shutil
import tempfile
import weakref
from _ctypes import dlclose
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime import registry
from tvmlite.runtime.abi import (
    CONSTANTS,
    FASTCALL_RECORD_BYTES,
    FASTCALL_RECORDS,
    MANIFEST,
    PACKED_TABLE,
    PREFIX,
    PROFILE_COUNTERS,
    PYTHON_API,
    SHARED_FASTCALL,
    entry_symbol,
    fastcall_symbol,
    with_prefix,
)
from tvmlite.runtime.elf import STT_FUNC, STT_OBJECT, SharedObject
from tvmlite.runtime.export import write_atomic_with
from tvmlite.runtime.fastcall import API_SLOTS
from tvmlite.runtime.manifest import ABI_VERSION, signature_from_info, written_from_info
from tvmlite.runtime.module import CompiledModule

# What this process has dlopen'ed, by path: (device, inode, mtime, size) when loaded.
_LOADED: dict[str, tuple[int, int, int, int]] = {}


class Listing(Protocol):
    """The code of a library as text, when someone kept it (the compile cache)."""

    def llvm_ir(self) -> str: ...

    def assembly(self) -> str: ...

    def write_library(
        self,
        path: Path,
        manifest: dict[str, Any],
        prefix: str,
        constants: Sequence[np.ndarray] = (),
        keep_apart: Sequence[bool] = (),
    ) -> None:
        """Link the code again, as a library whose symbols carry `prefix`, with
        the bytes of `constants` (but those `keep_apart` marks)."""
        ...


class SharedLibrary:
    """The code image of a mapped library: symbols from the dynamic linker. It is
    unmapped when the image is gone (every callable holds it through its module);
    not at exit, where daemon threads or atexit handlers may still call in.
    `prefix` starts the symbols the library exports. `constants` are what its
    constants read, in the manifest's order: arrays bound to it (a library of the
    compile cache leaves the module's out), kept as long as the code, and views
    of the bytes it holds; `holds_constants` says whether it holds them all."""

    def __init__(
        self,
        path: Path,
        dll: ctypes.CDLL,
        listing: Listing | None,
        prefix: str,
        constants: Sequence[np.ndarray] = (),
        holds_constants: bool = True,
    ) -> None:
        self.path = path
        self.listing = listing
        self.prefix = prefix
        self.constants = tuple(constants)
        self.holds_constants = holds_constants
        self._dll = dll
        weakref.finalize(self, dlclose, dll._handle).atexit = False

    def address(self, symbol: str) -> int:
        try:
            return ctypes.cast(getattr(self._dll, symbol), ctypes.c_void_p).value or 0
        except AttributeError:
            raise TVMLiteError(f"{self.path}: not a library with the symbol {symbol}") from None

    def llvm_ir(self) -> str:
        if self.listing is None:
            raise TVMLiteError(f"{self.path.name}: a loaded library keeps no LLVM IR")
        return self.listing.llvm_ir()

    def assembly(self) -> str:
        if self.listing is None:
            raise TVMLiteError(f"{self.path.name}: a loaded library keeps no assembly")
        return self.listing.assembly()

    @property
    def constant_arrays(self) -> tuple[np.ndarray, ...]:
        return self.constants

    @property
    def fixed_prefix(self) -> str | None:
        return None if self.listing is not None else self.prefix

    def write_library(
        self, path: Path, manifest: dict[str, Any], prefix: str, keep_apart: Sequence[bool] = ()
    ) -> None:
        """A copy of the library's file, or (for another prefix, or when its
        constants are not all in it) its listing linked."""
        if prefix == self.prefix and self.holds_constants and not any(keep_apart):
            with open(self.path, "rb") as source:  # in pieces: it may hold gigabytes of weights
                write_atomic_with(path, lambda f: shutil.copyfileobj(source, f, 1 << 20))
        elif self.listing is not None:
            self.listing.write_library(path, manifest, prefix, self.constants, keep_apart)
        else:
            raise TVMLiteError(f"{self.path.name}: its symbols start with {self.prefix!r}")


class Library(CompiledModule):
    """Entries of a loaded library by name: `lib["main"](x, w)`. `path` is the
    file; `manifest` its JSON description. `listing` gives `llvm_ir()` and
    `assembly()` when the library came from the compile cache, and `constants`,
    in the manifest's order, the arrays of the constants such a library does not
    hold (None for those it does)."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        listing: Listing | None = None,
        constants: Sequence[np.ndarray | None] = (),
    ) -> None:
        self.path = Path(path)
        image, manifest = open_library(self.path, listing, constants)
        super().__init__(image, manifest, prefix=image.prefix)

    def _where(self) -> str:
        return self.path.name

    def __repr__(self) -> str:
        return f"<Library {self.path.name}: {', '.join(self.functions)}>"


def _constants_apart(
    path: Path, manifest: dict[str, Any], arrays: Sequence[np.ndarray | None]
) -> list[np.ndarray | None]:
    """Per constant of the manifest, the array to bind (None: the library holds
    its bytes), checked against the manifest."""
    records = manifest["constants"]
    apart = [k for k, r in enumerate(records) if not r["embedded"]]
    if apart and len(arrays) != len(records):
        raise TVMLiteError(
            f"{path}: {len(apart)} of the library's constants are not in it (a library of "
            "the compile cache, whose constants are the module's): it cannot be loaded alone"
        )
    bound: list[np.ndarray | None] = [None] * len(records)
    for k in apart:
        array = arrays[k]
        if array is None or array.nbytes != records[k]["nbytes"] or not array.flags.c_contiguous:
            raise TVMLiteError(
                f"{path}: constant {k} needs a contiguous array of {records[k]['nbytes']} bytes"
            )
        bound[k] = array
    return bound


def bind_constants(
    table: int, arrays: Sequence[np.ndarray | None], sizes: Sequence[int]
) -> tuple[np.ndarray, ...]:
    """Point the DLTensors of a loaded library's constant table (at address
    `table`) at `arrays` (None: the library holds that one's bytes); returns
    what each constant reads: its array, or a view of the library's bytes."""
    pointers = (ctypes.c_void_p * len(arrays)).from_address(table)
    read = []
    for k, array in enumerate(arrays):
        header = pointers[k]
        if not header:
            raise TVMLiteError(f"the library's constant {k} has no DLTensor")
        data = ctypes.c_void_p.from_address(header)  # the DLTensor's `data`
        if array is not None:
            data.value = array.ctypes.data
            read.append(array)
        elif sizes[k]:
            if not data.value:
                raise TVMLiteError(f"the library's constant {k} has no data")
            view = (ctypes.c_uint8 * sizes[k]).from_address(data.value)
            read.append(np.ctypeslib.as_array(view))
        else:
            read.append(np.zeros(0, np.uint8))
    return tuple(read)


def load_module(path: str | os.PathLike) -> Library:
    """Load a library written by `Executable.export_library`.

    Loading runs the library's code (like `ctypes.CDLL`): only load libraries
    you trust. Before mapping it, tvmlite checks from the file's bytes that it
    is a tvmlite library whose entries are its own `PREFIX_entry_*` functions
    and whose packed functions are registered; a file that fails is refused
    with a `TVMLiteError` and never mapped."""
    return Library(path)


def open_library(
    path: Path, listing: Listing | None = None, constants: Sequence[np.ndarray | None] = ()
) -> tuple[SharedLibrary, dict[str, Any]]:
    """Check the library at `path` from its bytes, then map it and bind the
    `constants` it does not hold (Library's): its image and its manifest."""
    data, stamp = _read(path)
    image = SharedObject(data, path)
    prefix, manifest = read_manifest(image)
    missing = [n for n in manifest["packed"] if not registry.get_global_func(n, True)]
    if missing:
        raise TVMLiteError(_unregistered(path, missing, prefix))
    bound = _constants_apart(path, manifest, constants)
    records = manifest["constants"]
    if records:
        _require(image, with_prefix(CONSTANTS, prefix), STT_OBJECT, 8 * len(records))
    # Checked: map it (this runs its constructors).
    code = SharedLibrary(path, _open(path, data, stamp), listing, prefix)
    if records:
        table = code.address(with_prefix(CONSTANTS, prefix))
        code.constants = bind_constants(table, bound, [r["nbytes"] for r in records])
        code.holds_constants = all(r["embedded"] for r in records)
    return code, manifest


def _unregistered(path: Path, names: list[str], prefix: str) -> str:
    """How to provide the packed functions `names` a library calls, from Python
    and from C."""
    listed = ", ".join(f"'{n}'" for n in names)
    first = json.dumps(names[0])
    return (
        f"{path}: the library calls packed function(s) {listed}, which are not registered. "
        f"From Python, register each before loading the library: tvmlite.register_func("
        f"{first}, f), f taking and returning NumPy arrays (tvms run cannot: load it from "
        f"Python); from C, bind each before the first call: {prefix}bind_packed({first}, fn), "
        f"fn a tvmlite_packed_fn ({path.with_suffix('.h').name}, docs/abi.md)"
    )


def _read(path: Path) -> tuple[bytes | mmap.mmap, tuple[int, int, int, int]]:
    """The file's bytes, mapped (a library with a model's weights is read only
    where it is checked), and its identity (device, inode, mtime, size)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if st.st_size else b""
    except OSError as err:
        raise TVMLiteError(f"{path}: cannot load: {err.strerror or err}") from None
    return data, (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def _open(path: Path, data: bytes | mmap.mmap, stamp: tuple[int, int, int, int]) -> ctypes.CDLL:
    """dlopen `path`, or a private copy of `data` when this process already
    mapped another file at that path (the linker would hand back the old one)."""
    key = str(path.resolve())
    if _LOADED.setdefault(key, stamp) == stamp:
        return _dlopen(key, path)
    fd, copy = tempfile.mkstemp(prefix=f"tvmlite-{path.stem}-", suffix=".so")  # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return _dlopen(copy, path)
    finally:
        os.unlink(copy)  # the mapping stays valid without a name


def _dlopen(target: str, path: Path) -> ctypes.CDLL:
    try:
        return ctypes.CDLL(target)
    except OSError as err:
        raise TVMLiteError(f"{path}: cannot load the library: {err}") from None


def library_prefix(image: SharedObject) -> str:
    """The prefix of the library's symbols: the one its manifest is named with."""
    suffix = MANIFEST.removeprefix(PREFIX)
    found = [n for n, s in image.symbols.items() if n.endswith(suffix) and s.kind == STT_OBJECT]
    if len(found) != 1:
        why = f"{len(found)} manifests ({', '.join(sorted(found))})" if found else "no manifest"
        raise image.error(f"{why} in its symbol table (one {MANIFEST}, or PREFIX_{suffix})")
    return found[0].removesuffix(suffix)


def read_manifest(image: SharedObject) -> tuple[str, dict[str, Any]]:
    """The prefix of the library `image` and its manifest, checked against its
    symbol table."""
    path = image.path
    prefix = library_prefix(image)
    try:
        manifest = json.loads(image.cstring(with_prefix(MANIFEST, prefix)).decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise TVMLiteError(f"{path}: the library's manifest is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get("abi") != ABI_VERSION:
        found = manifest.get("abi") if isinstance(manifest, dict) else None
        raise TVMLiteError(f"{path}: library ABI {found!r}, this tvmlite reads {ABI_VERSION}")
    functions = manifest.get("functions")
    if not isinstance(functions, dict):
        raise TVMLiteError(f"{path}: the library's manifest lists no functions")
    for name, info in functions.items():
        symbol = info.get("symbol") if isinstance(info, dict) else None
        if symbol != entry_symbol(name, prefix):
            raise TVMLiteError(
                f"{path}: the manifest binds function '{name}' to {symbol!r}, "
                f"not its entry {entry_symbol(name, prefix)}"
            )
        _require(image, symbol, STT_FUNC, 0)
        _signature(path, name, info)
        _fast_call(image, name, info, prefix)
    packed = manifest.setdefault("packed", [])
    if not isinstance(packed, list) or not all(isinstance(n, str) for n in packed):
        raise TVMLiteError(f"{path}: the manifest's packed functions are not a list of names")
    if packed:
        size = len(packed) * ctypes.sizeof(ctypes.c_void_p)
        _require(image, with_prefix(PACKED_TABLE, prefix), STT_OBJECT, size)
    constants = manifest.setdefault("constants", [])
    if not isinstance(constants, list) or not all(_is_constant_record(c) for c in constants):
        raise TVMLiteError(f"{path}: the manifest's constants are malformed")
    if "profile" in manifest:  # a profiled build's counters (runtime/profiling.py)
        rows = manifest["profile"]
        if not isinstance(rows, list) or not all(_is_profile_row(r) for r in rows):
            raise TVMLiteError(f"{path}: the manifest's profile counters are malformed")
        _require(image, with_prefix(PROFILE_COUNTERS, prefix), STT_OBJECT, 16 * len(rows))
    return prefix, manifest


def _is_profile_row(row: object) -> bool:
    """[name, "kernel" | "packed"]: what one pair of counters counts."""
    return (
        isinstance(row, list)
        and len(row) == 2
        and isinstance(row[0], str)
        and row[1] in ("kernel", "packed")
    )


def _is_constant_record(record: object) -> bool:
    """{"nbytes": N, "embedded": bool}: a constant's size, and whether its bytes
    are in the library (codegen/constant_data.py)."""
    return (
        isinstance(record, dict)
        and type(record.get("nbytes")) is int
        and record["nbytes"] >= 0
        and isinstance(record.get("embedded"), bool)
    )


def _fast_call(image: SharedObject, name: str, info: dict[str, Any], prefix: str) -> None:
    """The wrapper a function's manifest record names must be the library's own:
    its `PREFIX_fastcall_NAME`, or a record in the table of the shared one."""
    wrapper, record = info.get("fastcall"), info.get("fastcall_record")
    if wrapper is None and record is None:
        return
    if wrapper is not None and wrapper != fastcall_symbol(name, prefix):
        raise TVMLiteError(
            f"{image.path}: the manifest binds the fast call of '{name}' to {wrapper!r}, "
            f"not {fastcall_symbol(name, prefix)}"
        )
    if wrapper is not None:
        _require(image, wrapper, STT_FUNC, 0)
    if record is not None:
        if type(record) is not int or record < 0:
            raise TVMLiteError(
                f"{image.path}: the manifest's fast-call record of '{name}' is {record!r}, "
                "not an index"
            )
        _require(image, with_prefix(SHARED_FASTCALL, prefix), STT_FUNC, 0)
        size = (record + 1) * FASTCALL_RECORD_BYTES
        _require(image, with_prefix(FASTCALL_RECORDS, prefix), STT_OBJECT, size)
    _require(image, with_prefix(PYTHON_API, prefix), STT_OBJECT, len(API_SLOTS) * 8)


def _require(image: SharedObject, name: str, kind: int, size: int) -> None:
    """`name` must be a function (or an object of `size` bytes) the library defines."""
    symbol = image.symbols.get(name)
    if symbol is None or symbol.kind != kind or symbol.size < size:
        what = "function" if kind == STT_FUNC else f"table of {size} bytes"
        raise TVMLiteError(f"{image.path}: the library does not define the {what} {name}")


def _signature(path: Path, name: str, info: dict[str, Any]) -> None:
    try:
        signature_from_info(info)
        written_from_info(info)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise TVMLiteError(f"{path}: the manifest's signature of '{name}' is malformed") from None
