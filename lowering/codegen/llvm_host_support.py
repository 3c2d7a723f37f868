"""The support library of generated code: allocation, release, copy, the argument
checks and the thread pool, compiled once per process and shared by every
module built after.

Host modules only declare these functions; the JIT resolves them through the
process symbol table (`llvmlite.binding.add_symbol`). Compiling them into each
module cost more than the host code itself. An exported shared library links
`support_module()` in instead, so it stays self-contained.
"""

from __future__ import annotations

import llvmlite.binding as llvm
from llvmlite import ir

from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_frame as frame
from tvmlite.lowering.codegen import llvm_host_helpers as helpers
from tvmlite.lowering.codegen import llvm_host_program as program
from tvmlite.lowering.codegen import llvm_host_runner as runner
from tvmlite.lowering.codegen import llvm_host_steps as steps
from tvmlite.lowering.codegen import llvm_thread_pool as pool
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.target import HOST, host_triple, once

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
# Functions host code calls, with their C types.
EXPORTED: dict[str, ir.FunctionType] = {
    abi.ALLOC: ir.FunctionType(PTR, [I32, PTR, I32]),
    abi.RELEASE: ir.FunctionType(ir.VoidType(), [PTR]),
    abi.COPY: ir.FunctionType(PTR, [PTR]),
    helpers.CHECK_TENSOR: ir.FunctionType(I32, [PTR, I32, I32, I32, PTR, PTR, I64]),
    helpers.CHECK_SHAPE: ir.FunctionType(I32, [PTR, I32, PTR, PTR, I32, PTR, PTR, I64]),
    helpers.KERNEL_STATUS: ir.FunctionType(I32, [I32, PTR, I32, PTR, PTR, PTR, I64]),
    **frame.TYPES,
    steps.RUN_STEPS: steps.RUN_STEPS_TYPE,
    program.RUN_PROGRAM: program.RUN_PROGRAM_TYPE,
    pool.LAUNCH: pool.LAUNCH_TYPE,
}


def support_module() -> ir.Module:
    """The support functions as a fresh LLVM module (external linkage)."""
    module = ir.Module(name="tvmlite_support")
    abi.add_helpers(module)
    helpers.add_check_helpers(module)
    frame.add_frame_helpers(module)
    runner.add_steps_helper(module)
    program.add_program_helper(module)
    pool.ThreadPool(module, host_triple().split("-")[0]).add()
    for name in EXPORTED:
        module.globals[name].linkage = ""
    return module


@once
def support_library() -> JitModule:
    """Compiled once, kept for the life of the process (results and compiled
    modules call into it), its symbols published to the JIT linker."""
    jit = JitModule(support_module(), machine=HOST)  # shared: never a build's -mcpu
    for name in EXPORTED:
        llvm.add_symbol(name, jit.address(name))
    return jit


def declare_support(module: ir.Module) -> None:
    for name, fnty in EXPORTED.items():
        if name not in module.globals:
            fn = ir.Function(module, fnty, name)
            fn.attributes.add("nounwind")
