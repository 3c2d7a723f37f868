"""Native object code for an exported library: the optimized module of a build
with the support helpers linked in, emitted by the process's target machine.

The JIT resolves the support helpers from one shared copy per process; an
exported library must stand alone, so its object carries its own copy (external
names, so the C glue and a C caller see `tvmlite_alloc_tensor`). The target
machine is the host's (CPU name and features, `reloc=pic`): a library runs on
machines with the same instruction-set extensions.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm

from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.llvm_host_support import support_module


@functools.cache
def _support_text() -> str:
    """The optimized support module as text (parsed afresh for every link: `link_in`
    consumes the module it is given)."""
    module = target.parse_and_verify(str(support_module()))
    target.optimize(module)
    return str(module)


def library_module(optimized_ir: str) -> llvm.ModuleRef:
    """The optimized IR of a build, parsed, with the support functions linked in."""
    module = target.parse_and_verify(optimized_ir)
    module.link_in(target.parse_and_verify(_support_text()))
    return module


def emit_object(optimized_ir: str) -> bytes:
    """An ELF (or the host's) relocatable object of a whole build."""
    return target.host_target_machine().emit_object(library_module(optimized_ir))


def emit_assembly(optimized_ir: str) -> str:
    return target.host_target_machine().emit_assembly(target.parse_and_verify(optimized_ir))
