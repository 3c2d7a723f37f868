"""The code one build made: its host module, optimized for a machine, and the
kernel units the host calls (`kernel_unit.py`), with the arrays of the
constants they read (`constant_data.py`).

What a code image (`runtime/module.py`) offers besides addresses is the same
whether the code is loaded here or was cross-compiled for another machine: its
LLVM IR (host and kernels linked into one module), its assembly, its constants,
and a self-contained shared library linked from the host's optimized IR and the
units' objects (`link.py`). `BuildImage` is that, once; the JIT's library
(`jit.JitModule`) adds loading and addresses, the cross-compiled build's image
(`cross_image.CrossImage`) refuses addresses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llvmlite import ir

from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.constant_data import ConstantData
from tvmlite.lowering.codegen.kernel_unit import KernelUnit
from tvmlite.lowering.transform import stage


class BuildImage:
    """A host module parsed and (unless `optimize` is False) optimized for
    `machine`, with the kernel units it calls and the arrays of its constants.
    `timings` holds the milliseconds spent per stage (each also a `stage` of the
    PassContext)."""

    def __init__(
        self,
        module: ir.Module,
        units: Sequence[KernelUnit],
        machine: target.MachineOptions,
        constants: ConstantData,
        *,
        optimize: bool = True,
    ) -> None:
        self.machine = machine
        self.units = tuple(units)
        # The arrays the code reads in place: kept as long as it.
        self.constants = constants
        self.timings: dict[str, float] = {}
        with stage("LLVM parse", self.timings):
            self.module = target.parse_and_verify(str(module), machine)
        if optimize:
            with stage("LLVM optimization", self.timings):
                target.optimize(self.module, machine)

    def llvm_ir(self) -> str:
        """The optimized LLVM IR, host code and kernels linked into one module
        (for `--emit llvm`, the compile cache, and debugging)."""
        from tvmlite.lowering.codegen.objects import linked_ir  # (imports jit.py)

        return linked_ir(str(self.module), [u.optimized for u in self.units], self.machine)

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
        """The code as a self-contained shared library for its machine, linked by
        the machine's C compiler (`link.py`); the constants `keep_apart` marks
        are bound when it is loaded instead."""
        # Imported here: linking needs the support helpers, which import jit.py.
        from tvmlite.lowering.codegen.link import link_library

        objects = [unit.obj for unit in self.units]
        link_library(
            str(self.module),
            path,
            self.machine,
            manifest,
            prefix,
            self.constants,
            keep_apart,
            objects,
        )
