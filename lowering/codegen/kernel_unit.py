"""One lowered prim function, one compiled unit: the kernel's own LLVM module,
optimized and emitted as a relocatable object for one machine.

    unit = compile_kernel(lowered_func, "add", machine)   # KernelUnit: object, IR, key

A build compiles each distinct kernel of its module alone (`kernel_build.py`
decides where: in this process, or in worker processes) and links the objects
with its host code: the JIT adds them to its engine (`jit.py`), an exported
library links them (`link.py`). A unit is a function of its LLVM IR text and
the machine only, so the text's digest, with the machine and the compiler,
is the unit's key in the compile cache (`lowering/cache/kernels.py`):
rebuilding a model after an edit of one function compiles that function's
kernel and loads the others.

A kernel's module defines the kernel (`tvmlite_<name>`, hidden: a library
exports entries only) and its internal task functions, and declares the C
library and the thread pool's launch (`llvm_parallel.py`), which the JIT
resolves in the process and a library's support object defines. Objects are
position-independent code of the small code model, reaching those functions
through the PLT: the JIT links any number of them into one library (`jit.py`),
and the system linker puts them into a shared library as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.lowering.codegen import target
from tvmlite.lowering.codegen.kernel_worker import compile_text
from tvmlite.lowering.codegen.llvm_diagnostics import quiet_missed_vectorization
from tvmlite.lowering.codegen.llvm_kernel import build_kernel
from tvmlite.lowering.codegen.target import MachineOptions
from tvmlite.lowering.tir.signature import kernel_signature
from tvmlite.runtime.abi import KernelSignature, kernel_symbol


@dataclass(frozen=True)
class KernelSource:
    """A kernel's unoptimized LLVM IR, what a worker compiles (`text`), and what
    host code must know of it without compiling it."""

    symbol: str
    text: str
    can_fail: bool  # returns a status other than 0 (an assert, an allocation)


@dataclass(frozen=True)
class KernelUnit:
    """A compiled kernel: its relocatable object and its optimized IR (what
    `llvm_ir()` and `assembly()` of a build show)."""

    symbol: str
    can_fail: bool
    obj: bytes
    optimized: str


def kernel_source(func: tir.PrimFunc, sig: KernelSignature) -> KernelSource:
    """The LLVM module of lowered `func` alone (for the current machine options:
    they choose the vector width the kernel asks for)."""
    module = ir.Module(name=kernel_symbol(sig.name))
    fn, can_fail = build_kernel(module, func, sig)
    return KernelSource(fn.name, str(module), can_fail)


def compile_ir(text: str, machine: MachineOptions) -> tuple[bytes, str]:
    """The object and the optimized IR of a kernel's module text, compiled in
    this process as a worker compiles it (`kernel_worker.compile_text`)."""
    with quiet_missed_vectorization():
        return compile_text(text, target.resolved(machine))


def signature(name: str, func: tir.PrimFunc) -> KernelSignature:
    """The calling convention of lowered `func`, called `name`."""
    try:
        return kernel_signature(func, name, func.body)
    except TVMLiteError as err:
        raise TVMLiteError(f"cannot compile prim function '{name}': {err}") from None


def compile_kernel(
    func: tir.PrimFunc, name: str, machine: MachineOptions | None = None
) -> KernelUnit:
    """Lowered prim function `func`, called `name`, as one compiled unit for
    `machine` (default: the current machine options)."""
    machine = target.current_options() if machine is None else machine
    with target.machine_options(machine):
        source = kernel_source(func, signature(name, func))
    obj, optimized = compile_ir(source.text, machine)
    return KernelUnit(source.symbol, source.can_fail, obj, optimized)
