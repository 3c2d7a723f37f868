"""Compiled kernels in the compile cache: one entry per distinct kernel unit
(`codegen/kernel_unit.py`), so that a build whose module changed compiles only
the kernels that changed, and a kernel shared by builds is compiled and stored
once.

An entry is `<key>.o` (the unit's object) and `<key>.json` (its sealed
metadata, `sealed.py`: kind "kernel", the object's SHA-256, its optimized LLVM
IR, its symbol, whether it can fail), trusted as a build's entry is, and
evicted with them by the same size cap. The key is a digest of what the unit is
compiled from, the machine and the compiler (`unit_key`): its LLVM IR text, or,
when the build lowered incrementally, its lowered function's content key and
name, so a cached kernel's IR is not even made.
"""

from __future__ import annotations

import hashlib

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.cache.directory import CacheRoot, open_root
from tvmlite.lowering.cache.entries import compiler_digest
from tvmlite.lowering.cache.sealed import load_data, save_data
from tvmlite.lowering.cache.size import mark_used
from tvmlite.lowering.codegen.kernel_unit import KernelUnit
from tvmlite.lowering.codegen.target import HOST, MachineOptions, checked_machine, triple_of

KIND = "kernel"
SUPPORT = "support"  # the support helpers' object (llvm_host_support.py), one per host
SUFFIX = ".o"
FIELDS = {"llvm_ir": str, "symbol": str, "can_fail": bool}


class KernelCache:
    """The kernel entries of one cache directory."""

    def __init__(self, root: CacheRoot) -> None:
        self.root = root

    def load(self, source: str, machine: MachineOptions, symbol: str) -> KernelUnit | None:
        """The unit compiled from `source` for `machine`, defining `symbol`, or
        None if absent or not to be trusted."""
        key = unit_key(source, machine)
        found = load_data(self.root, key, SUFFIX, KIND, FIELDS)
        if found is None or found[1]["symbol"] != symbol:
            return None
        obj, meta = found
        mark_used(self.root.path, key)
        return KernelUnit(symbol, meta["can_fail"], obj, meta["llvm_ir"])

    def save(self, source: str, machine: MachineOptions, unit: KernelUnit) -> None:
        """Store `unit`, compiled from `source` for `machine`. A cache that cannot
        be written is skipped."""
        key = unit_key(source, machine)
        fields = {"llvm_ir": unit.optimized, "symbol": unit.symbol, "can_fail": unit.can_fail}
        try:
            save_data(self.root, key, SUFFIX, KIND, unit.obj, fields)
        except (OSError, TVMLiteError):
            return

    def load_support(self) -> bytes | None:
        """The support helpers' object for this host and compiler, if stored."""
        key = unit_key(SUPPORT, HOST)
        found = load_data(self.root, key, SUFFIX, SUPPORT, {})
        if found is not None:
            mark_used(self.root.path, key)
        return None if found is None else found[0]

    def save_support(self, obj: bytes) -> None:
        try:
            save_data(self.root, unit_key(SUPPORT, HOST), SUFFIX, SUPPORT, obj, {})
        except (OSError, TVMLiteError):
            return


def unit_key(source: str, machine: MachineOptions) -> str:
    """The entry name of a unit: a digest of what it is compiled from (its IR, or
    its lowered function's content key and name), the machine (the CPU and
    features it resolves to) and the compiler (`compiler_digest`: tvmlite's
    sources, which hold the code generator and optimization pipeline, llvmlite
    and LLVM)."""
    digest = hashlib.sha256()
    resolved = repr(checked_machine(machine))
    parts = (KIND, compiler_digest(), triple_of(machine), resolved, repr(machine))
    for part in (*parts, source):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:40]


def kernel_cache() -> KernelCache | None:
    """The kernel entries of the configured cache directory (None: caching off,
    or a directory that cannot be written or trusted)."""
    root = open_root(create=True)
    return None if root is None else KernelCache(root)
