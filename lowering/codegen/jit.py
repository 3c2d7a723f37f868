"""JIT compilation of an llvmlite.ir module with MCJIT.

A `JitModule` owns its execution engine, and the engine owns the machine code:
whoever holds a function address must hold the `JitModule` too (the runtime's
callables do, through their module), otherwise garbage collection would unmap
code still in use. It is the code image (`runtime/module.py`) of the
Executable `build` returns.

Code made once per process (the support helpers, the fast-call destructor, BLAS
trampolines) goes through `target.once`: its address is published (to the JIT
linker, the registry, result arrays), so a second copy compiled by a thread
that lost a race, then dropped, would leave those addresses pointing at
unmapped code. llvmlite serialises its own C calls, so compiling from several
threads at once is safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir

from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.constant_data import ConstantData
from tvmlite.lowering.transform import stage


class JitModule:
    """Optimized, compiled and loaded code of one LLVM module. `timings` holds the
    milliseconds spent per stage (each also a `stage` of the PassContext)."""

    def __init__(
        self,
        module: ir.Module,
        *,
        optimize: bool = True,
        machine: target.MachineOptions | None = None,
        glue: ir.Module | None = None,
        constants: ConstantData | None = None,
    ) -> None:
        # The machine code is for: the caller's, else the current target's.
        self.machine = target.current_options() if machine is None else machine
        # The arrays the code reads in place (constant_data.py): kept as long as it.
        self.constants = ConstantData() if constants is None else constants
        self.timings: dict[str, float] = {}
        with stage("LLVM parse", self.timings):
            self.module = target.parse_and_verify(str(module))
            glue_code = None if glue is None else target.parse_and_verify(str(glue))
        if optimize:
            with stage("LLVM optimization", self.timings):
                target.optimize(self.module, self.machine)
        with stage("machine code", self.timings):
            self._compile(glue_code)

    def _compile(self, glue: llvm.ModuleRef | None) -> None:
        """Machine code of the module, loaded. The functions `glue` defines (also
        defined in the module, `optnone`) come from its object, emitted without
        codegen optimization: the module's definitions of them are left out of
        code generation meanwhile (`available_externally`), then restored, so
        that the module's text (`llvm_ir`: the cache, libraries) stays whole."""
        names = [] if glue is None else [f.name for f in glue.functions if not f.is_declaration]
        for name in names:
            self.module.get_function(name).linkage = llvm.Linkage.available_externally
        self.engine = llvm.create_mcjit_compiler(
            self.module, target.new_target_machine(self.machine)
        )
        if glue is not None:
            obj = target.glue_target_machine(self.machine).emit_object(glue)
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        if self.constants.symbols:
            obj = self.constants.jit_object(target.host_triple())
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()
        self.engine.run_static_constructors()
        for name in names:
            self.module.get_function(name).linkage = llvm.Linkage.external

    def address(self, symbol: str) -> int:
        """Where the function or global `symbol` is (KeyError if undefined)."""
        address = self.engine.get_global_value_address(symbol)
        if not address:
            raise KeyError(symbol)
        return address

    def llvm_ir(self) -> str:
        """The optimized LLVM IR (for `--emit llvm` and debugging)."""
        return str(self.module)

    def assembly(self) -> str:
        return target.host_target_machine(self.machine).emit_assembly(self.module)

    @property
    def constant_arrays(self) -> tuple[Any, ...]:
        """The arrays of the code's constants, in the manifest's order."""
        return self.constants.arrays

    @property
    def fixed_prefix(self) -> None:
        return None  # the IR links with any prefix

    def write_library(
        self, path: Path, manifest: dict[str, Any], prefix: str, keep_apart: Sequence[bool] = ()
    ) -> None:
        """The code as a self-contained shared library (`codegen/link.py`); the
        constants `keep_apart` marks are bound when it is loaded instead."""
        # Imported here: linking needs the support helpers, which import this module.
        from tvmlite.lowering.codegen.link import link_library

        link_library(
            self.llvm_ir(), path, self.machine, manifest, prefix, self.constants, keep_apart
        )
