"""Code generation of a lowered IRModule (what `tvmlite.lower` returns): one
LLVM module holding every prim function as a kernel, every graph function as
a host entry (with its CPython fast-call wrapper when its signature takes one),
and the tables and manifest a loader reads (runtime/abi.py).

    code = generate_llvm(lowered)       # llvmlite.ir module, manifest, kernel ABI
    jit = compile_llvm(code)            # LLVM optimization, machine code
    ex = link(jit, code)                # the Executable `build` returns

Each step runs as a `stage` of the current PassContext, so `--time-passes`
shows code generation, LLVM's optimization, machine code and linking as lines
of their own.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.codegen.constant_data import ConstantData, manifest_entries
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.llvm_fastcall import add_fast_calls
from tvmlite.lowering.codegen.llvm_host_module import build_host_module
from tvmlite.lowering.codegen.llvm_host_support import support_library
from tvmlite.lowering.codegen.llvm_profile import PROFILE_KEY
from tvmlite.lowering.codegen.memory_plan import written_params
from tvmlite.lowering.tir.signature import kernel_signature
from tvmlite.lowering.transform import PassContext, stage
from tvmlite.runtime.abi import KernelSignature
from tvmlite.runtime.executable import Executable
from tvmlite.runtime.manifest import manifest_info


@dataclass(frozen=True)
class GeneratedCode:
    """An LLVM module and what its loader must know: the manifest of the graph
    functions, each kernel's calling convention, which kernels are public, and
    the arrays of the constants the module declares (`constant_data.py`)."""

    module: ir.Module
    glue: ir.Module | None  # entries defined in `module` too, compiled apart (jit.py)
    constants: ConstantData
    manifest: dict[str, Any]
    kernels: dict[str, KernelSignature]
    public_kernels: frozenset[str]
    timings: dict[str, float]


def generate_llvm(mod: IRModule, public: Collection[str] | None = None) -> GeneratedCode:
    """The LLVM module of a lowered `mod`. Prim functions are public when they
    have a `global_symbol` (or are named in `public`)."""
    timings: dict[str, float] = {}
    with stage("codegen", timings):
        prims = {k: f for k, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}
        graphs = {k: f for k, f in mod.functions.items() if isinstance(f, relax.Function)}
        kernels = {name: (f, _signature(name, f)) for name, f in prims.items()}
        profile = PassContext.current().get(PROFILE_KEY) is True
        host = build_host_module(kernels, graphs, profile)
        written = {name: written_params(f) for name, f in graphs.items()}
        fast = add_fast_calls(host.module, graphs, written)
    shown = {
        name
        for name, f in prims.items()
        if f.attr("global_symbol") is not None or (public is not None and name in public)
    }
    manifest = manifest_info(graphs, host.packed, fast, written)
    manifest["constants"] = manifest_entries(host.constants)
    if host.profile is not None:
        manifest["profile"] = host.profile
    return GeneratedCode(
        host.module,
        host.glue,
        host.constants,
        manifest,
        {name: sig for name, (_, sig) in kernels.items()},
        frozenset(shown),
        timings,
    )


def _signature(name: str, func: tir.PrimFunc) -> KernelSignature:
    try:
        return kernel_signature(func, name, func.body)
    except TVMLiteError as err:
        raise TVMLiteError(f"cannot compile prim function '{name}': {err}") from None


def compile_llvm(code: GeneratedCode, *, optimize: bool = True) -> JitModule:
    """Optimized machine code of `code`, loaded in this process (for the current
    `machine_options`). Host code calls the support helpers, compiled once per
    process before the first module that needs them."""
    with stage("support library (once per process)"):
        support_library()
    return JitModule(code.module, optimize=optimize, glue=code.glue, constants=code.constants)


def link(jit: JitModule, code: GeneratedCode) -> Executable:
    """The Executable of compiled code: tables filled, callables made."""
    timings = {**code.timings, **jit.timings}
    with stage("link", timings):
        executable = Executable(jit, code.manifest, code.kernels, code.public_kernels)
    executable.timings = timings
    return executable
