"""Code generation of a lowered IRModule (what `tvmlite.lower` returns): every
prim function as a compiled kernel unit of its own (`kernel_unit.py`, compiled
once per distinct kernel, in parallel, or loaded from the compile cache:
`kernel_build.py`), and one LLVM module of host code declaring them: every graph
function as a host entry (with its CPython fast-call wrapper when its signature
takes one), and the tables and manifest a loader reads (runtime/abi.py).

    code = generate_llvm(lowered)       # kernel units; host module, manifest, kernel ABI
    jit = compile_llvm(code)            # the host's LLVM optimization, machine code
    ex = link(jit, code)                # the Executable `build` returns
    ex = link_cross(code, machine)      # or, for another triple, its CrossExecutable

Each step runs as a `stage` of the current PassContext, so `--time-passes`
shows the kernels, code generation, LLVM's optimization, machine code and
linking as lines of their own.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from llvmlite import ir

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.codegen.constant_data import ConstantData, manifest_entries
from tvmlite.lowering.codegen.cross_image import CrossImage
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.kernel_build import KernelStore, compile_kernels
from tvmlite.lowering.codegen.kernel_unit import KernelUnit, signature
from tvmlite.lowering.codegen.llvm_fastcall import add_fast_calls
from tvmlite.lowering.codegen.llvm_host_module import build_host_module
from tvmlite.lowering.codegen.llvm_host_support import support_library
from tvmlite.lowering.codegen.llvm_profile import PROFILE_KEY
from tvmlite.lowering.codegen.memory_plan import written_params
from tvmlite.lowering.codegen.target import MachineOptions, current_options
from tvmlite.lowering.transform import PassContext, stage
from tvmlite.runtime.abi import KernelSignature
from tvmlite.runtime.executable import CrossExecutable, Executable
from tvmlite.runtime.manifest import manifest_info


@dataclass(frozen=True)
class GeneratedCode:
    """The host's LLVM module, the compiled kernels it calls, and what a loader
    must know: the manifest of the graph functions, each kernel's calling
    convention and symbol, which kernels are public, the arrays of the constants
    the module declares (`constant_data.py`), and how many kernel units the
    build had, found in the cache and compiled (`kernel_build.py`)."""

    module: ir.Module
    units: tuple[KernelUnit, ...]  # distinct, in module order: what is linked
    glue: ir.Module | None  # entries defined in `module` too, compiled apart (jit.py)
    constants: ConstantData
    manifest: dict[str, Any]
    kernels: dict[str, KernelSignature]
    public_kernels: frozenset[str]
    timings: dict[str, float]
    kernel_symbols: dict[str, str]
    kernel_counts: dict[str, int]
    external_code: dict[str, Any]  # packed functions other kinds compiled (IRModule's)


def generate_llvm(
    mod: IRModule,
    public: Collection[str] | None = None,
    store: KernelStore | None = None,
    keys: Mapping[str, str] | None = None,
) -> GeneratedCode:
    """The kernel units and host module of a lowered `mod`, kernels found in
    `store` loaded from it (by the content `keys` of the prim functions, when
    given: `kernel_build.compile_kernels`). Prim functions are public when they
    have a `global_symbol` (or are named in `public`)."""
    timings: dict[str, float] = {}
    prims = {k: f for k, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}
    graphs = {k: f for k, f in mod.functions.items() if isinstance(f, relax.Function)}
    with stage("kernels", timings):
        kernels = {name: (f, signature(name, f)) for name, f in prims.items()}
        units, counts = compile_kernels(kernels, current_options(), store, keys)
    with stage("codegen", timings):
        sigs = {name: sig for name, (_, sig) in kernels.items()}
        profile = PassContext.current().get(PROFILE_KEY) is True
        host = build_host_module(sigs, units, graphs, profile)
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
        tuple({id(u): u for u in units.values()}.values()),
        host.glue,
        host.constants,
        manifest,
        {name: sig for name, (_, sig) in kernels.items()},
        frozenset(shown),
        timings,
        {name: unit.symbol for name, unit in units.items()},
        counts,
        dict(mod.external_code),
    )


def compile_llvm(code: GeneratedCode) -> JitModule:
    """Optimized machine code of `code`, loaded in this process (for the current
    `machine_options`). Host code calls the support helpers, compiled once per
    process before the first module that needs them."""
    with stage("support library (once per process)"):
        support = support_library()
    return JitModule(
        code.module, code.units, glue=code.glue, constants=code.constants, libraries=(support,)
    )


def link(jit: JitModule, code: GeneratedCode) -> Executable:
    """The Executable of compiled code: tables filled, callables made."""
    timings = {**code.timings, **jit.timings}
    with stage("link", timings):
        executable = Executable(
            jit,
            code.manifest,
            code.kernels,
            code.public_kernels,
            code.kernel_symbols,
            packed=code.external_code,
        )
    executable.timings = timings
    executable.kernel_counts = code.kernel_counts
    return executable


def link_cross(code: GeneratedCode, machine: MachineOptions) -> CrossExecutable:
    """The CrossExecutable of code for `machine`, another triple: the host
    module optimized for it, the kernel units as compiled, nothing loaded."""
    image = CrossImage(code.module, code.units, machine, code.constants)
    executable = CrossExecutable(image, code.manifest, code.public_kernels)
    executable.timings = {**code.timings, **image.timings}
    executable.kernel_counts = code.kernel_counts
    return executable
