"""Compiled kernels in the compile cache: one entry per distinct kernel unit
(`codegen/kernel_unit.py`), so that a build whose module changed compiles only
the kernels that changed, and a kernel shared by builds is compiled and stored
once.

An entry is `<key>.o` (the unit's object) and `<key>.json` (format, kind
"kernel", key, SHA-256 of the object, its optimized LLVM IR, and the HMAC
of all of it), written and trusted as a build's
entry is (`entries.py`), and evicted with them by the same size cap. The key is
a digest of the unit's IR text, the machine and the compiler (`unit_key`).
"""

from __future__ import annotations

import hashlib
import json

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.cache.directory import CacheRoot, open_root
from tvmlite.lowering.cache.entries import FORMAT, compiler_digest, sealed_fields
from tvmlite.lowering.cache.size import mark_used
from tvmlite.lowering.codegen.kernel_unit import KernelSource, KernelUnit
from tvmlite.lowering.codegen.target import MachineOptions, checked_machine, triple_of
from tvmlite.runtime.export import write_atomic

KIND = "kernel"


class KernelCache:
    """The kernel entries of one cache directory."""

    def __init__(self, root: CacheRoot) -> None:
        self.root = root

    def load(self, source: KernelSource, machine: MachineOptions) -> KernelUnit | None:
        """The unit of `source` for `machine`, or None if absent or not to be trusted."""
        key = unit_key(source, machine)
        meta = self.metadata(key)
        obj = self.root.read(f"{key}.o")
        if meta is None or obj is None or meta["sha256"] != hashlib.sha256(obj).hexdigest():
            return None
        mark_used(self.root.path, key)
        return KernelUnit(source.symbol, source.can_fail, obj, meta["llvm_ir"])

    def metadata(self, key: str) -> dict[str, object] | None:
        data = self.root.read(f"{key}.json")
        try:
            meta = json.loads(data) if data is not None else None
        except ValueError:
            return None
        valid = (
            isinstance(meta, dict)
            and meta.get("format") == FORMAT
            and meta.get("kind") == KIND
            and meta.get("key") == key
            and isinstance(meta.get("sha256"), str)
            and isinstance(meta.get("llvm_ir"), str)
            and self.root.verify(sealed_fields(meta), meta.get("mac"))
        )
        return meta if valid else None

    def save(self, source: KernelSource, machine: MachineOptions, unit: KernelUnit) -> None:
        """Store `unit`, compiled from `source` for `machine` (the object first: a
        reader sees whole files only, and metadata only over its object). A cache
        that cannot be written is skipped."""
        key = unit_key(source, machine)
        meta: dict[str, object] = {
            "format": FORMAT,
            "kind": KIND,
            "key": key,
            "sha256": hashlib.sha256(unit.obj).hexdigest(),
            "llvm_ir": unit.optimized,
        }
        meta["mac"] = self.root.seal(sealed_fields(meta))
        try:
            write_atomic(self.root.path / f"{key}.o", unit.obj)
            write_atomic(self.root.path / f"{key}.json", json.dumps(meta))
        except (OSError, TVMLiteError):
            return


def unit_key(source: KernelSource, machine: MachineOptions) -> str:
    """The entry name of a unit: a digest of its IR, the machine (the CPU and
    features it resolves to) and the compiler (`compiler_digest`: tvmlite's
    sources, which hold the optimization pipeline, llvmlite and LLVM)."""
    digest = hashlib.sha256()
    resolved = repr(checked_machine(machine))
    parts = (KIND, compiler_digest(), triple_of(machine), resolved, repr(machine))
    for part in (*parts, source.text):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:40]


def kernel_cache() -> KernelCache | None:
    """The kernel entries of the configured cache directory (None: caching off,
    or a directory that cannot be written or trusted)."""
    root = open_root(create=True)
    return None if root is None else KernelCache(root)
