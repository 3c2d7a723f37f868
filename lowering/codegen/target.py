"""The host target: LLVM initialisation, the one target machine of the process,
the libraries JIT code may call into, and the O3 pipeline.

All of it is created on first use and lives as long as the process: target
machines are expensive (tens of ms) and stateless once made, and the libraries
(libm for math, libgcc_s for half-precision conversion helpers on CPUs without
native ones) must stay loaded while any compiled kernel may run.
"""

from __future__ import annotations

import ctypes.util
import functools

import llvmlite.binding as llvm

SPEED_LEVEL = 3


@functools.cache
def _initialised() -> bool:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    for name in ("m", "c", "gcc_s"):
        path = ctypes.util.find_library(name)
        if path is not None:
            llvm.load_library_permanently(path)
    return True


@functools.cache
def host_target_machine() -> llvm.TargetMachine:
    """The process's target machine, used to optimize and to emit objects."""
    return new_target_machine()


def new_target_machine() -> llvm.TargetMachine:
    """Host CPU name and features, O3, position-independent code (objects may end
    up in a shared library). An MCJIT engine takes ownership of (and frees) the
    machine it is given, so each engine gets its own from here."""
    _initialised()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=SPEED_LEVEL,
        reloc="pic",
        codemodel="jitdefault",
    )


def host_triple() -> str:
    _initialised()
    return llvm.get_process_triple()


@functools.cache
def data_layout() -> str:
    """Computed once: each `target_data` access makes an LLVM object whose disposal
    is unsafe to repeat."""
    return str(host_target_machine().target_data)


def optimize(module: llvm.ModuleRef) -> None:
    """Run the new pass manager's O3 pipeline tuned for the host machine."""
    tm = host_target_machine()
    options = llvm.create_pipeline_tuning_options(speed_level=SPEED_LEVEL)
    options.loop_vectorization = True
    options.slp_vectorization = True
    # Automatic unrolling fully unrolls every small constant-trip loop and triples
    # compile time; `T.unroll` loops carry a pragma the unroller still honours.
    options.loop_unrolling = False
    builder = llvm.create_pass_builder(tm, options)
    manager = builder.getModulePassManager()
    manager.run(module, builder)


def parse_and_verify(text: str) -> llvm.ModuleRef:
    """An llvmlite.ir module's text as an LLVM module with the host layout."""
    _initialised()
    module = llvm.parse_assembly(text)
    module.triple = host_triple()
    module.data_layout = data_layout()
    module.verify()
    return module
