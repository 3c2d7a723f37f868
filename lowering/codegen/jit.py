"""JIT compilation of a build's host module with MCJIT, linked with the objects
of its kernel units (`kernel_unit.py`) in one engine.

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
from tvmlite.lowering.codegen.kernel_unit import KernelUnit
from tvmlite.lowering.transform import stage


class JitModule:
    """Optimized, compiled and loaded code of one host module and the kernel
    units it calls. `timings` holds the milliseconds spent per stage (each also
    a `stage` of the PassContext)."""

    def __init__(
        self,
        module: ir.Module,
        units: Sequence[KernelUnit] = (),
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
        self.units = tuple(units)
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
        """Machine code of the module, loaded with the kernel units. The
        functions `glue` defines (also defined in the module, `optnone`) come
        from its object, emitted without codegen optimization: the module's
        definitions of them are left out of code generation meanwhile
        (`available_externally`), then restored, so that the module's text
        (`llvm_ir`: the cache, libraries) stays whole.

        The host's object is loaded before any other that has a GOT: the JIT
        linker computes the host's GOT-relative references (the large code
        model's) from the first GOT it holds, and a unit's calls through the
        PLT give the unit a GOT of its own."""
        names = [] if glue is None else [f.name for f in glue.functions if not f.is_declaration]
        for name in names:
            self.module.get_function(name).linkage = llvm.Linkage.available_externally
        try:
            host = target.host_target_machine(self.machine).emit_object(self.module)
        finally:
            for name in names:
                self.module.get_function(name).linkage = llvm.Linkage.external
        self.engine = llvm.create_mcjit_compiler(
            target.parse_and_verify(""), target.new_target_machine(self.machine)
        )
        objects = [host, *(unit.obj for unit in self.units)]
        if glue is not None:
            objects.append(target.glue_target_machine(self.machine).emit_object(glue))
        if self.constants.symbols:
            objects.append(self.constants.jit_object(target.host_triple()))
        for obj in objects:
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def address(self, symbol: str) -> int:
        """Where the function or global `symbol` is (KeyError if undefined)."""
        address = self.engine.get_global_value_address(symbol)
        if not address:
            raise KeyError(symbol)
        return address

    def llvm_ir(self) -> str:
        """The optimized LLVM IR, host code and kernels linked into one module
        (for `--emit llvm`, the compile cache, and debugging)."""
        from tvmlite.lowering.codegen.objects import linked_ir  # (imports this module)

        return linked_ir(str(self.module), [unit.optimized for unit in self.units])

    def assembly(self) -> str:
        from tvmlite.lowering.codegen.objects import emit_assembly

        return emit_assembly(self.llvm_ir(), self.machine)

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

        host = str(self.module)
        objects = [unit.obj for unit in self.units]
        link_library(
            host, path, self.machine, manifest, prefix, self.constants, keep_apart, objects
        )
