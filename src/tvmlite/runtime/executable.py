"""The result of `tvmlite.build`: compiled functions by name.

    ex = tvmlite.build(mod)
    y = ex["main"](x, w)              # graph function: arrays in, arrays/tuples out
    ex["add"](a, b, out)              # public prim function: destination-passing

Graph functions run as native code (docs/abi.md); Python only converts the
arguments to DLTensors (no copy) and the owned result blocks to NumPy arrays (no
copy; NumPy frees them), or the fast-call wrapper compiled with them does both.
The code generator (`lowering/codegen/generate.py`) makes an Executable from
the JIT's code image and the module's manifest; everything else is the
protocol every compiled module shares (`module.py`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from tvmlite.runtime.abi import PREFIX
from tvmlite.runtime.module import CodeImage, CompiledModule


class Executable(CompiledModule):
    """Natively compiled functions of one IRModule, loaded by the JIT. `functions`
    lists the public ones; `timings` holds milliseconds per stage of the build;
    `llvm_ir()` / `assembly()` show the optimized code. Packed functions may be
    registered after the build: missing ones are looked up before each call.
    A build the compile cache serves is an Executable too, over the cached library.
    `source` names the file the module was parsed from, for messages and the repr."""

    source: str | None = None

    def _where(self) -> str:
        return self.source or "this executable"

    def __repr__(self) -> str:
        origin = f" from {self.source}" if self.source else ""
        return f"<Executable {', '.join(self.functions)}{origin}>"


class CrossExecutable(CompiledModule):
    """The functions of one IRModule compiled for another machine (a target with
    `-mtriple`, lowering/codegen/cross_image.py): `export_library` links them
    for that machine, `llvm_ir()` / `assembly()` show its code; calling one, or
    timing or profiling it, raises TVMLiteError naming the triple."""

    source: str | None = None

    def __init__(
        self, image: CodeImage, manifest: dict[str, Any], public_kernels: Collection[str] = ()
    ) -> None:
        # Nothing is bound: the code is never loaded in this process.
        self.image = image
        self.manifest = manifest
        self.prefix = PREFIX
        self.timings: dict[str, float] = {}
        self.profiled_build = None
        self._profiled = None
        self.packed_names = manifest["packed"]
        self._table = None
        self._missing: set[str] = set()
        self._entries = {}
        self._private: set[str] = set()
        public = [n for n, info in manifest["functions"].items() if info.get("public", True)]
        self._names = [*public, *sorted(public_kernels)] or list(manifest["functions"])

    @property
    def functions(self) -> list[str]:
        return list(self._names)

    def __getitem__(self, name: str) -> Any:
        if name in self._names:
            self.image.address(name)  # raises: the code is for another machine
        return super().__getitem__(name)

    def _profiled_module(self) -> CompiledModule:
        self.image.address("profile")  # raises, as calling does
        return self

    def _where(self) -> str:
        return self.source or "this cross-compiled executable"

    def __repr__(self) -> str:
        triple = getattr(self.image, "triple", "another machine")
        return f"<CrossExecutable {', '.join(self.functions)} for {triple}>"
