"""Native object code for an exported library: the optimized module of a build
with the support helpers linked in, emitted by the process's target machine.

The JIT resolves the support helpers from one shared copy per process; an
exported library must stand alone, so its object carries its own copy (external
names, so the C glue and a C caller see `tvmlite_alloc_tensor`); it is emitted
once per process and linked next to each build's object. The target
machine is the host's (CPU name and features, `reloc=pic`): a library runs on
machines with the same instruction-set extensions.
"""

from __future__ import annotations

import functools

from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.llvm_host_support import support_module
from tvmlite.lowering.codegen.target import HOST, MachineOptions


@functools.cache
def support_object(machine: MachineOptions = HOST) -> bytes:
    """The support functions as an object, emitted once per process and machine."""
    module = target.parse_and_verify(str(support_module()))
    target.optimize(module, machine)
    return target.host_target_machine(machine).emit_object(module)


def emit_objects(optimized_ir: str, machine: MachineOptions = HOST) -> list[bytes]:
    """Relocatable objects of a whole build (its code, then the support helpers),
    for the machine the build's code was optimized for."""
    tm = target.host_target_machine(machine)
    return [tm.emit_object(target.parse_and_verify(optimized_ir)), support_object(machine)]


def emit_assembly(optimized_ir: str, machine: MachineOptions = HOST) -> str:
    tm = target.host_target_machine(machine)
    return tm.emit_assembly(target.parse_and_verify(optimized_ir))


class OptimizedIR:
    """The text of a library's optimized LLVM IR, kept by the compile cache: the
    `llvm_ir()` and `assembly()` a loaded library offers (runtime/loader.py)."""

    def __init__(self, text: str, machine: MachineOptions = HOST) -> None:
        self.text = text
        self.machine = machine

    def llvm_ir(self) -> str:
        return self.text

    def assembly(self) -> str:
        return emit_assembly(self.text, self.machine)
