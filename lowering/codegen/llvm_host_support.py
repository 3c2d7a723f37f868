"""The support library of generated code: allocation, release, copy, the argument
checks and the thread pool, compiled once per process and shared by every
module built after.

Host modules only declare these functions; the JIT links them with this
library of its own (`JitModule(..., libraries=...)`). Compiling them into each
module cost more than the host code itself. An exported shared library links
`support_module()` in instead, so it stays self-contained.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Protocol

from llvmlite import ir

from tvmlite.lowering.codegen import llvm_block_cache as block_cache
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_frame as frame
from tvmlite.lowering.codegen import llvm_host_helpers as helpers
from tvmlite.lowering.codegen import llvm_host_program as program
from tvmlite.lowering.codegen import llvm_host_runner as runner
from tvmlite.lowering.codegen import llvm_host_steps as steps
from tvmlite.lowering.codegen import llvm_thread_pool as pool
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.target import HOST, MachineOptions, arch_of
from tvmlite.runtime.abi import BLOCK_HOOKS, with_prefix
from tvmlite.runtime.module import CompiledModule

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


def support_module(*, cached: bool = False, machine: MachineOptions = HOST) -> ir.Module:
    """The support functions as a fresh LLVM module (external linkage) for the
    architecture of `machine` (the thread pool's system calls differ); `cached`
    allocates through the block cache (the JIT's copy, which outlives every block)."""
    module = ir.Module(name="tvmlite_support")
    if cached:
        block_cache.BlockCache(module).add()
    abi.add_helpers(module)
    helpers.add_check_helpers(module)
    frame.add_frame_helpers(module)
    runner.add_steps_helper(module)
    program.add_program_helper(module)
    pool.ThreadPool(module, arch_of(machine)).add()
    for name in EXPORTED:
        module.globals[name].linkage = ""
    return module


class SupportStore(Protocol):
    """Where the support helpers' object is kept between processes (the compile
    cache: `lowering/cache/kernels.py`)."""

    def load_support(self) -> bytes | None: ...

    def save_support(self, obj: bytes) -> None: ...


class _SupportLibrary:
    """The support helpers' library of the JIT, made once per process and kept
    for its life (results and compiled modules call into it): the library other
    libraries of the JIT are linked with. The first call given a `store` takes
    the helpers' object from it when it has one (else stores the one made): a
    process then does not compile them again."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.library: JitModule | None = None

    def __call__(self, store: SupportStore | None = None) -> JitModule:
        with self.lock:
            if self.library is None:
                self.library = _make_support(store)
            return self.library


def _make_support(store: SupportStore | None) -> JitModule:
    # Imported here: the cache package imports this module.
    from tvmlite.lowering.cache.size import size_from_env

    code = None if store is None else store.load_support()
    # shared: never a build's -mcpu
    jit = JitModule(support_module(cached=True), machine=HOST, code=code)
    if store is not None and code is None:
        store.save_support(jit.host_object)
    limit = ctypes.c_int64.from_address(jit.address(block_cache.LIMIT))
    limit.value = size_from_env(block_cache.ENV, block_cache.DEFAULT_LIMIT)
    return jit


support_library = _SupportLibrary()


def declare_support(module: ir.Module) -> None:
    for name, fnty in EXPORTED.items():
        if name not in module.globals:
            fn = ir.Function(module, fnty, name)
            fn.attributes.add("nounwind")


def use_block_cache(library: CompiledModule) -> None:
    """Make a loaded library allocate through this process's block cache (the
    JIT's, which outlives every block it hands out) by filling its hooks: give
    first, so a thread that sees take sees give too."""
    jit = support_library()
    where = library.image.address(with_prefix(BLOCK_HOOKS, library.prefix))
    hooks = (ctypes.c_void_p * 2).from_address(where)
    hooks[1] = jit.address(abi.BLOCK_GIVE)
    hooks[0] = jit.address(abi.BLOCK_TAKE)


def cached_bytes() -> int:
    """The bytes the JIT's block cache holds now (docs/memory.md)."""
    address = support_library().address(block_cache.HELD)
    return ctypes.CFUNCTYPE(ctypes.c_int64)(address)()
