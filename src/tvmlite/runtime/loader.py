"""`tvmlite.load_module(path)`: a library written by `export_library`, loaded
with ctypes and called like the result of `build()`.

The library's manifest carries every entry's signature, so the callables flatten
and check their arguments exactly as `build()`'s do. Packed functions are bound
from `tvmlite.register_func` by name when the library loads: a name that is not
registered is an error now, not in the middle of a later call.

The dynamic linker keeps one copy of a library per path: loading a path whose
file changed since this process first loaded it goes through a private copy,
so a rebuilt library is never silently replaced by the stale one.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.codegen.manifest import ABI_VERSION, signature_from_info
from tvmlite.runtime import registry
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
        self._dll = _open(self.path)
        self.manifest = read_manifest(self._dll, self.path)
        self.packed_names: list[str] = list(self.manifest.get("packed", []))
        self._installed = self._bind_packed()
        self._entries: dict[str, GraphFunction] = {}
        self._private: set[str] = set()
        for name, info in self.manifest["functions"].items():
            params, ret = signature_from_info(info)
            address = _symbol(self._dll, info["symbol"], self.path)
            self._entries[name] = GraphFunction(self, name, params, ret, address)
            if not info.get("public", True):
                self._private.add(name)

    def _bind_packed(self) -> list[Any]:
        if not self.packed_names:
            return []
        missing = [
            n for n in self.packed_names if registry.get_global_func(n, allow_missing=True) is None
        ]
        if missing:
            names = ", ".join(f"'{n}'" for n in missing)
            raise TVMLiteError(
                f"{self.path}: the library calls packed function(s) {names}, which are not "
                "registered: register them (tvmlite.register_func) before loading it"
            )
        count = len(self.packed_names)
        address = _symbol(self._dll, PACKED_TABLE, self.path)
        table = (ctypes.c_void_p * count).from_address(address)
        installed = []
        for index, name in enumerate(self.packed_names):
            found = registry.get_global_func(name)
            assert found is not None
            table[index] = found.address
            installed.append(found)  # the trampolines the table points to stay alive
        return installed

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
    """Load a library written by `Executable.export_library`."""
    return Library(path)


def _open(path: Path) -> ctypes.CDLL:
    try:
        st = path.stat()
    except OSError as err:
        raise TVMLiteError(f"{path}: cannot load: {err.strerror or err}") from None
    key = str(path.resolve())
    stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    target = key
    if _LOADED.setdefault(key, stamp) != stamp:
        target = _private_copy(path)
    try:
        return ctypes.CDLL(target)
    except OSError as err:
        raise TVMLiteError(f"{path}: cannot load the library: {err}") from None


def _private_copy(path: Path) -> str:
    fd, copy = tempfile.mkstemp(prefix=f"tvmlite-{path.stem}-", suffix=".so")
    os.close(fd)
    shutil.copyfile(path, copy)
    return copy  # left in the temp dir: the mapping outlives any cleanup we could do


def read_manifest(dll: ctypes.CDLL, path: Path) -> dict[str, Any]:
    address = _symbol(dll, MANIFEST, path, what="a tvmlite library (no manifest)")
    raw = ctypes.string_at(address)
    try:
        manifest = json.loads(raw.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise TVMLiteError(f"{path}: the library's manifest is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get("abi") != ABI_VERSION:
        found = manifest.get("abi") if isinstance(manifest, dict) else None
        raise TVMLiteError(f"{path}: library ABI {found!r}, this tvmlite reads {ABI_VERSION}")
    if not isinstance(manifest.get("functions"), dict):
        raise TVMLiteError(f"{path}: the library's manifest lists no functions")
    return manifest


def _symbol(dll: ctypes.CDLL, name: str, path: Path, what: str | None = None) -> int:
    try:
        return ctypes.cast(getattr(dll, name), ctypes.c_void_p).value or 0
    except AttributeError:
        detail = what or f"a library without the symbol {name}"
        raise TVMLiteError(f"{path}: not {detail}") from None
