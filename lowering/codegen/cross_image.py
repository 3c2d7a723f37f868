"""The code of a build for another machine (`-mtriple=aarch64-linux-gnu`): the
host module optimized and the kernel units compiled for that triple, kept as
objects and IR instead of loaded, since this process cannot run them.

    ex = tvmlite.build(mod, target="llvm -mtriple=aarch64-linux-gnu")
    ex.export_library("model.so")     # linked by aarch64-linux-gnu-gcc
    ex.assembly(), ex.llvm_ir()       # AArch64 code
    ex["main"]                        # TVMLiteError: code for aarch64-linux-gnu

It is the code image (`runtime/module.py`) of the `CrossExecutable` `build`
returns for such a target: what an exported library, an object file, assembly
and LLVM IR are made of (`link.py`, `objects.py`), with every address refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llvmlite import ir

from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.constant_data import ConstantData
from tvmlite.lowering.codegen.jit import foreign_code_error
from tvmlite.lowering.codegen.kernel_unit import KernelUnit
from tvmlite.lowering.transform import stage


class CrossImage:
    """Optimized code of one host module and the kernel units it calls, for
    `machine`, another triple; `timings` holds milliseconds per stage."""

    def __init__(
        self,
        module: ir.Module,
        units: Sequence[KernelUnit],
        machine: target.MachineOptions,
        constants: ConstantData,
    ) -> None:
        self.machine = machine
        self.units = tuple(units)
        self.constants = constants
        self.timings: dict[str, float] = {}
        with stage("LLVM parse", self.timings):
            code = target.parse_and_verify(str(module), machine)
        with stage("LLVM optimization", self.timings):
            target.optimize(code, machine)
        self.host_ir = str(code)

    @property
    def triple(self) -> str:
        return target.triple_of(self.machine)

    def address(self, symbol: str) -> int:
        raise foreign_code_error(self.machine)

    def llvm_ir(self) -> str:
        """The optimized LLVM IR, host code and kernels linked into one module."""
        from tvmlite.lowering.codegen.objects import linked_ir

        return linked_ir(self.host_ir, [u.optimized for u in self.units], self.machine)

    def assembly(self) -> str:
        from tvmlite.lowering.codegen.objects import emit_assembly

        return emit_assembly(self.llvm_ir(), self.machine)

    @property
    def constant_arrays(self) -> tuple[Any, ...]:
        return self.constants.arrays

    @property
    def fixed_prefix(self) -> None:
        return None

    def write_library(
        self, path: Path, manifest: dict[str, Any], prefix: str, keep_apart: Sequence[bool] = ()
    ) -> None:
        """A self-contained shared library for the machine, linked by its cross
        compiler (`link.py`)."""
        from tvmlite.lowering.codegen.link import link_library

        objects = [unit.obj for unit in self.units]
        link_library(
            self.host_ir, path, self.machine, manifest, prefix, self.constants, keep_apart, objects
        )
