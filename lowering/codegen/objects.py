"""Native object code for an exported library: the optimized module of a build
and the support helpers, emitted by the process's target machine.

The JIT resolves the support helpers from one shared copy per process; an
exported library must stand alone, so it carries its own copy, optimized once
per process and emitted next to each build's object. The symbols the library
exports are renamed to carry its prefix (`tvmlite_entry_main` becomes
`mlp_entry_main`) and every other definition is hidden: two libraries in one
program each call their own kernels, helpers and thread pool. The target
machine is the build's (its triple, CPU name and features, `reloc=pic`): a
library runs on machines of that architecture with the same instruction-set
extensions.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import llvmlite.binding as llvm

from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.llvm_host_support import support_module
from tvmlite.lowering.codegen.target import HOST, MachineOptions


@functools.cache
def _support_ir(machine: MachineOptions = HOST) -> str:
    """The support functions, optimized once per process and machine."""
    module = target.parse_and_verify(str(support_module(machine=machine)), machine)
    target.optimize(module, machine)
    return str(module)


def library_objects(
    optimized_ir: str, machine: MachineOptions, exports: Mapping[str, str]
) -> list[bytes]:
    """Relocatable objects of the build's code (its host module, or all of it
    linked) and the support helpers, for the machine the build's code was
    optimized for; `exports` maps each symbol the library exports to its name
    there. Kernel units are objects already, their symbols hidden."""
    module = target.parse_and_verify(optimized_ir, machine)
    _publish(module, exports)
    renamed = tuple(sorted((n, exports[n]) for n in _support_definitions(machine) if n in exports))
    return [
        target.host_target_machine(machine).emit_object(module),
        _support_object(machine, renamed),
    ]


@functools.cache
def _support_definitions(machine: MachineOptions) -> frozenset[str]:
    module = target.parse_and_verify(_support_ir(machine), machine)
    values = (*module.functions, *module.global_variables)
    return frozenset(v.name for v in values if not v.is_declaration)


@functools.cache
def _support_object(machine: MachineOptions, renamed: tuple[tuple[str, str], ...]) -> bytes:
    """The support helpers' object, the helpers a library exports `renamed`
    (symbol, name in the library), every other definition hidden: the same bytes
    for every library of one machine and prefix, emitted once per process."""
    module = target.parse_and_verify(_support_ir(machine), machine)
    _publish(module, dict(renamed))
    return target.host_target_machine(machine).emit_object(module)


def linked_ir(host_ir: str, kernel_irs: Sequence[str], machine: MachineOptions = HOST) -> str:
    """One module of a build's optimized host module and kernel units (for
    `machine`), linked."""
    module = target.parse_and_verify(host_ir, machine)
    for text in kernel_irs:
        module.link_in(target.parse_and_verify(text, machine))
    return str(module)


def _publish(module: llvm.ModuleRef, exports: Mapping[str, str]) -> None:
    """Rename the exported symbols; hide every other definition."""
    for value in (*module.functions, *module.global_variables):
        public = exports.get(value.name)
        if public is not None:
            value.name = public
        elif not value.is_declaration and value.linkage == llvm.Linkage.external:
            value.visibility = "hidden"


def emit_object(optimized_ir: str, machine: MachineOptions = HOST) -> bytes:
    """The build's own code as one object, its symbols as compiled."""
    module = target.parse_and_verify(optimized_ir, machine)
    return target.host_target_machine(machine).emit_object(module)


def emit_assembly(optimized_ir: str, machine: MachineOptions = HOST) -> str:
    tm = target.host_target_machine(machine)
    return tm.emit_assembly(target.parse_and_verify(optimized_ir, machine))
