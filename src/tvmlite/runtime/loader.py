"""`tvmlite.load_module(path)`: a library written by `export_library`, loaded
with ctypes and called like the result of `build()`.

Loading a library runs its code (its constructors run when it is mapped), as
`ctypes.CDLL` does: only load libraries you trust. What can be checked first
is checked before the library is mapped, from its bytes (`runtime/elf.py`):
it is an ELF shared object with a `tvmlite_manifest`, the manifest is valid,
every entry it names is `tvmlite_entry_<name>`, a function the library itself
defines (never a symbol such as libc's `abort`), and every packed function it
calls is registered.

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
import os
import tempfile
import weakref
from _ctypes import dlclose
from pathlib import Path
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.codegen.manifest import ABI_VERSION, entry_symbol, signature_from_info
from tvmlite.runtime import registry
from tvmlite.runtime.elf import STT_FUNC, STT_OBJECT, SharedObject
from tvmlite.runtime.graph_call import GraphFunction

MANIFEST, PACKED_TABLE = "tvmlite_manifest", "tvmlite_packed_funcs"
# What this process has dlopen'ed, by path: (device, inode, mtime, size) when loaded.
_LOADED: dict[str, tuple[int, int, int, int]] = {}


class Library:
    """Entries of a loaded library by name: `lib["main"](x, w)`. `path` is the
    file; `manifest` its JSON description; `llvm_ir_text` the optimized IR when
    the library came from the compile cache (None otherwise)."""

    def __init__(self, path: str | os.PathLike, *, llvm_ir_text: str | None = None) -> None:
        self.path = Path(path)
        self.llvm_ir_text = llvm_ir_text
        self.timings: dict[str, float] = {}
        data, stamp = _read(self.path)
        image = SharedObject(data, self.path)
        self.manifest = read_manifest(image)
        signatures = {
            name: _signature(self.path, name, info)
            for name, info in self.manifest["functions"].items()
        }
        self.packed_names: list[str] = self.manifest["packed"]
        found = [registry.get_global_func(n, allow_missing=True) for n in self.packed_names]
        missing = [n for n, f in zip(self.packed_names, found, strict=True) if f is None]
        if missing:
            names = ", ".join(f"'{n}'" for n in missing)
            raise TVMLiteError(
                f"{self.path}: the library calls packed function(s) {names}, which are not "
                "registered: register them (tvmlite.register_func) before loading it"
            )
        # Checked: map it (this runs its constructors).
        self._dll = _open(self.path, data, stamp)
        # Not at exit: daemon threads or atexit handlers may still be calling in.
        weakref.finalize(self, dlclose, self._dll._handle).atexit = False
        self._installed = self._bind_packed(found)
        self._entries: dict[str, GraphFunction] = {}
        self._private: set[str] = set()
        for name, info in self.manifest["functions"].items():
            params, ret = signatures[name]
            address = _symbol(self._dll, info["symbol"], self.path)
            self._entries[name] = GraphFunction(self, name, params, ret, address)
            if not info.get("public", True):
                self._private.add(name)

    def _bind_packed(self, found: list[Any]) -> list[Any]:
        if not found:
            return []
        address = _symbol(self._dll, PACKED_TABLE, self.path)
        table = (ctypes.c_void_p * len(found)).from_address(address)
        for index, packed in enumerate(found):
            table[index] = packed.address
        return found  # the trampolines the table points to stay alive

    # The interface build()'s Executable has.

    @property
    def functions(self) -> list[str]:
        public = [n for n in self._entries if n not in self._private]
        return public or list(self._entries)

    def __getitem__(self, name: str) -> GraphFunction:
        found = self._entries.get(name)
        if found is None or name not in self.functions:
            known = ", ".join(self.functions) or "none"
            reason = "is private" if found is not None else "does not exist"
            raise TVMLiteError(f"function '{name}' {reason} in {self.path.name} (public: {known})")
        return found

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __repr__(self) -> str:
        return f"<Library {self.path.name}: {', '.join(self.functions)}>"

    @property
    def has_missing_packed(self) -> bool:
        return False  # bound at load time

    def resolve_packed(self) -> None:
        """Nothing to do: every packed function was bound when the library loaded."""

    @property
    def total_ms(self) -> float:
        return sum(self.timings.values())

    def llvm_ir(self) -> str:
        if self.llvm_ir_text is None:
            raise TVMLiteError(f"{self.path.name}: a loaded library keeps no LLVM IR")
        return self.llvm_ir_text

    def assembly(self) -> str:
        from tvmlite.lowering.codegen.objects import emit_assembly

        return emit_assembly(self.llvm_ir())

    def export_library(self, path: str | os.PathLike) -> Path:
        """Copy this library (and write its header) to `path`."""
        from tvmlite.runtime.c_header import render_header
        from tvmlite.runtime.export import guard_of, header_path, write_atomic

        out = Path(path)
        write_atomic(out, self.path.read_bytes())
        write_atomic(header_path(out), render_header(self.manifest, out.name, guard_of(out)))
        return out


def load_module(path: str | os.PathLike) -> Library:
    """Load a library written by `Executable.export_library`.

    Loading runs the library's code (like `ctypes.CDLL`): only load libraries
    you trust. Before mapping it, tvmlite checks from the file's bytes that it
    is a tvmlite library whose entries are its own `tvmlite_entry_*` functions
    and whose packed functions are registered; a file that fails is refused
    with a `TVMLiteError` and never mapped."""
    return Library(path)


def _read(path: Path) -> tuple[bytes, tuple[int, int, int, int]]:
    """The file's bytes and its identity (device, inode, mtime, size)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
    except OSError as err:
        raise TVMLiteError(f"{path}: cannot load: {err.strerror or err}") from None
    return data, (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def _open(path: Path, data: bytes, stamp: tuple[int, int, int, int]) -> ctypes.CDLL:
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


def read_manifest(image: SharedObject) -> dict[str, Any]:
    """The manifest of the library `image`, checked against its symbol table."""
    path = image.path
    try:
        manifest = json.loads(image.cstring(MANIFEST).decode())
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
        if symbol != entry_symbol(name):
            raise TVMLiteError(
                f"{path}: the manifest binds function '{name}' to {symbol!r}, "
                f"not its entry {entry_symbol(name)}"
            )
        _require(image, symbol, STT_FUNC, 0)
    packed = manifest.setdefault("packed", [])
    if not isinstance(packed, list) or not all(isinstance(n, str) for n in packed):
        raise TVMLiteError(f"{path}: the manifest's packed functions are not a list of names")
    if packed:
        _require(image, PACKED_TABLE, STT_OBJECT, len(packed) * ctypes.sizeof(ctypes.c_void_p))
    return manifest


def _require(image: SharedObject, name: str, kind: int, size: int) -> None:
    """`name` must be a function (or an object of `size` bytes) the library defines."""
    symbol = image.symbols.get(name)
    if symbol is None or symbol.kind != kind or symbol.size < size:
        what = "function" if kind == STT_FUNC else f"table of {size} bytes"
        raise TVMLiteError(f"{image.path}: the library does not define the {what} {name}")


def _signature(path: Path, name: str, info: dict[str, Any]) -> tuple[list[Any], Any]:
    try:
        return signature_from_info(info)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise TVMLiteError(f"{path}: the manifest's signature of '{name}' is malformed") from None


def _symbol(dll: ctypes.CDLL, name: str, path: Path) -> int:
    try:
        return ctypes.cast(getattr(dll, name), ctypes.c_void_p).value or 0
    except AttributeError:
        raise TVMLiteError(f"{path}: not a library with the symbol {name}") from None
