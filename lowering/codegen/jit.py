"""JIT compilation of a build's host module, linked with the objects of its
kernel units (`kernel_unit.py`) by ORC's JITLink.

A `JitModule` is one library of the process's JIT (`_linker`): the host's
object, the units' and the glue's linked together, the constants' symbols
defined as their arrays' addresses, calling the C library and the libraries it
was given (the support helpers). It
owns the library's resource tracker, and the tracker owns the machine code:
whoever holds a function address must hold the `JitModule` too (the runtime's
callables do, through their module), otherwise garbage collection would unmap
code still in use. It is the code image (`runtime/module.py`) of the
Executable `build` returns: a `BuildImage` (`build_image.py`: IR, assembly,
exported libraries) that is loaded and says where its symbols are.

JITLink, not MCJIT's RuntimeDyld: units are small-code-model objects, whose
code reaches its constants, GOT and PLT stubs by 32-bit PC-relative offsets.
JITLink gives each object its own GOT and stubs and maps all of an object's
sections in one block, wherever the system puts it; RuntimeDyld maps code and
data apart, which a fragmented address space can put more than 2 GB apart (its
linker then aborts the process: `tests/lowering/test_jit_placement.py`), and
resolves every object's GOT-relative offsets against one GOT.

Code made once per process (the support helpers, the fast-call destructor, BLAS
trampolines) goes through `target.once`: its address is published (to other
libraries of the JIT, the registry, result arrays), so a second copy compiled
by a thread that lost a race, then dropped, would leave those addresses
pointing at unmapped code. llvmlite serialises its own C calls, so compiling
from several threads at once is safe.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import llvmlite.binding as llvm
from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.build_image import BuildImage
from tvmlite.lowering.codegen.constant_data import ConstantData
from tvmlite.lowering.codegen.kernel_unit import KernelUnit
from tvmlite.lowering.transform import stage

_library_names = itertools.count()  # a library's name is never used again


@target.once
def _linker() -> llvm.LLJIT:
    """The process's JIT, linking objects with JITLink."""
    target.resolves("malloc")  # LLVM's native target set up, libm and libgcc_s loaded
    return llvm.create_lljit_compiler(use_jit_link=True)


def foreign_code_error(machine: target.MachineOptions) -> TVMLiteError:
    """Why code for `machine`, another triple, does not run here, naming both."""
    return TVMLiteError(
        f"cannot run code compiled for {target.triple_of(machine)} in this process "
        f"({target.host_triple()}): a build for another machine is cross-compiled; "
        "export it (export_library, tvms build -o OUT.so|.o|.s|.ll) and run it there"
    )


class JitModule(BuildImage):
    """Optimized, compiled and loaded code of one host module and the kernel
    units it calls, which may call the C library and the exported functions of
    `libraries` (other JitModules, kept as long as this one)."""

    def __init__(
        self,
        module: ir.Module,
        units: Sequence[KernelUnit] = (),
        *,
        optimize: bool = True,
        machine: target.MachineOptions | None = None,
        glue: ir.Module | None = None,
        constants: ConstantData | None = None,
        libraries: Sequence[JitModule] = (),
        code: bytes | None = None,
    ) -> None:
        # The machine code is for: the caller's, else the current target's.
        machine = target.current_options() if machine is None else machine
        if not target.runs_here(machine):
            raise foreign_code_error(machine)
        constants = ConstantData() if constants is None else constants
        # `code`: the module's object, made before (`object_code`): not made again.
        self._code_given = code
        super().__init__(module, units, machine, constants, optimize=optimize and code is None)
        self.libraries = tuple(libraries)
        self.name = f"tvmlite_{next(_library_names)}"
        glue_code = None
        if glue is not None:
            with stage("LLVM parse", self.timings):
                glue_code = target.parse_and_verify(str(glue), machine)
        with stage("machine code", self.timings):
            self._code = self._link(self._objects(glue_code))

    def _objects(self, glue: llvm.ModuleRef | None) -> list[bytes]:
        """The objects of the library: the host's, the units' and the glue's. The
        functions `glue` defines (also defined in the module,
        `optnone`) come from its object, emitted without codegen optimization:
        the module's definitions of them are left out of code generation
        meanwhile (`available_externally`), then restored, so that the module's
        text (`llvm_ir`: the cache, libraries) stays whole."""
        names = [] if glue is None else [f.name for f in glue.functions if not f.is_declaration]
        for name in names:
            self.module.get_function(name).linkage = llvm.Linkage.available_externally
        try:
            host = self._code_given or target.host_target_machine(self.machine).emit_object(
                self.module
            )
        finally:
            for name in names:
                self.module.get_function(name).linkage = llvm.Linkage.external
        self.host_object = host  # what `code` takes again (the support helpers' store)
        objects = [host, *(unit.obj for unit in self.units)]
        if glue is not None:
            objects.append(target.glue_target_machine(self.machine).emit_object(glue))
        return objects

    def _link(self, objects: Sequence[bytes]) -> llvm.ResourceTracker:
        """`objects` linked as this library of the JIT, loaded; its tracker knows
        the address of every symbol the host module defines and of every kernel."""
        builder = llvm.JITLibraryBuilder()
        for obj in objects:
            builder.add_object_img(obj)
        for symbol, address in self.constants.addresses().items():
            builder.import_symbol(symbol, address)  # the arrays, read where they are
        for library in self.libraries:
            builder.add_jit_library(library.name)
        builder.add_current_process()
        local = (llvm.Linkage.internal, llvm.Linkage.private)
        for value in (*self.module.functions, *self.module.global_variables):
            if not (value.is_declaration or value.linkage in local or value.name[:5] == "llvm."):
                builder.export_symbol(value.name)
        for unit in self.units:
            builder.export_symbol(unit.symbol)
        try:
            return builder.link(_linker(), self.name)
        except RuntimeError as err:  # an undefined symbol, a relocation out of range
            raise TVMLiteError(f"cannot link the compiled code: {err}") from None

    def address(self, symbol: str) -> int:
        """Where the function or global `symbol` is (KeyError if undefined)."""
        address = self._code[symbol]  # KeyError for a symbol the library does not define
        if not address:
            raise KeyError(symbol)
        return address
