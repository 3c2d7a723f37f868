"""LLVM code generation for lowered prim functions (llvmlite.ir, ORC JITLink)."""

from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.llvm_kernel import build_kernel
from tvmlite.lowering.codegen.target import host_target_machine

__all__ = ["JitModule", "build_kernel", "host_target_machine"]
