"""The code of a build for another machine (`-mtriple=aarch64-linux-gnu`): the
host module optimized and the kernel units compiled for that triple, kept as
objects and IR instead of loaded, since this process cannot run them.

    ex = tvmlite.build(mod, target="llvm -mtriple=aarch64-linux-gnu")
    ex.export_library("model.so")     # linked by aarch64-linux-gnu-gcc
    ex.assembly(), ex.llvm_ir()       # AArch64 code
    ex["main"]                        # TVMLiteError: code for aarch64-linux-gnu

It is the code image (`runtime/module.py`) of the `CrossExecutable` `build`
returns for such a target: a `BuildImage` (`build_image.py`: what an exported
library, an object file, assembly and LLVM IR are made of), every address refused.
"""

from __future__ import annotations

from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.build_image import BuildImage
from tvmlite.lowering.codegen.jit import foreign_code_error


class CrossImage(BuildImage):
    """Optimized code of one host module and the kernel units it calls, for
    `machine`, another triple: linked into a library by the machine's cross
    compiler (`link.py`), never loaded."""

    @property
    def triple(self) -> str:
        return target.triple_of(self.machine)

    def address(self, symbol: str) -> int:
        raise foreign_code_error(self.machine)
