"""Native object code for an exported library: the object of a build (the one
its JIT loaded) with the support helpers linked in.

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


def emit_object(optimized_ir: str, machine: MachineOptions = HOST) -> bytes:
    """The object of a build's optimized code (for a library loaded from the
    cache; a fresh build has its JIT's, `JitModule.object_code`)."""
    return target.host_target_machine(machine).emit_object(target.parse_and_verify(optimized_ir))


def emit_assembly(optimized_ir: str, machine: MachineOptions = HOST) -> str:
    tm = target.host_target_machine(machine)
    return tm.emit_assembly(target.parse_and_verify(optimized_ir))
