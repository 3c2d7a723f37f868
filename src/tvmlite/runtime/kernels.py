"""Compiling prim functions to native code and calling them on NumPy arrays.

    lib = compile_prim_funcs({"add": mod["add"], "relu": mod["relu"]})
    lib["add"](a, b, out)           # destination-passing: `out` is written in place

All functions of one call share one LLVM module and one JIT engine; the
`KernelLibrary` owns the engine and every `PrimFuncKernel` holds its library, so
machine code stays mapped as long as anything can still call it.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Mapping
from typing import Any

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.llvm_kernel import build_kernel, symbol_name
from tvmlite.lowering.tir.pipeline import lower_prim_func
from tvmlite.lowering.tir.signature import (
    MESSAGE_SIZE,
    STATUS_OUT_OF_MEMORY,
    KernelSignature,
    kernel_signature,
)
from tvmlite.runtime.args import ArgumentBinder, ctypes_signature


class PrimFuncKernel:
    """A callable compiled prim function: checks its arguments, runs the kernel,
    turns a failed assert into `TVMLiteError`. Returns None (outputs are written
    into the arrays passed in)."""

    def __init__(self, library: Any, sig: KernelSignature, address: int) -> None:
        self.library = library  # whatever owns the machine code: keeps it alive
        self.signature = sig
        self.name = sig.name
        self._binder = ArgumentBinder(sig)
        prototype = ctypes.CFUNCTYPE(ctypes.c_int32, *ctypes_signature(sig))
        self._cfunc = prototype(address)

    def __call__(self, *args: Any) -> None:
        values = self._binder.bind(args)
        message = None
        if self.signature.reports:  # a buffer for the message of an assert with values
            message = ctypes.create_string_buffer(MESSAGE_SIZE)
            values += [message, MESSAGE_SIZE]
        status = self._cfunc(*values)
        if status:
            raise self._failure(status, message)

    def _failure(self, status: int, message: Any = None) -> TVMLiteError:
        errors = self.signature.errors
        if 0 < status <= len(errors):
            text = message.value.decode(errors="replace") if message and message.value else ""
            return TVMLiteError(f"{self.name}: assertion failed: {text or errors[status - 1]}")
        if status == STATUS_OUT_OF_MEMORY:
            return TVMLiteError(f"{self.name}: out of memory allocating a scratch buffer")
        return TVMLiteError(f"{self.name}: kernel failed with status {status}")

    def __repr__(self) -> str:
        params = ", ".join(p.name for p in self.signature.params)
        return f"<PrimFuncKernel {self.name}({params})>"


class KernelLibrary:
    """Natively compiled prim functions, by name. `lowered` holds the lowered TIR
    and `timings` the milliseconds per stage (lower, codegen, then the JIT's)."""

    def __init__(self, funcs: Mapping[str, tir.PrimFunc], *, optimize: bool = True) -> None:
        start = time.perf_counter()
        kernels = lower_kernels(funcs)
        self.lowered = {name: lowered for name, (lowered, _) in kernels.items()}
        self.signatures = {name: sig for name, (_, sig) in kernels.items()}
        stamp = time.perf_counter()
        module = ir.Module(name="tvmlite")
        for name, lowered in self.lowered.items():
            _with_context(name, build_kernel, module, lowered, self.signatures[name])
        self.llvm_module = module
        timings = {"lower": (stamp - start) * 1e3, "codegen": (time.perf_counter() - stamp) * 1e3}
        self.jit = JitModule(module, optimize=optimize)
        self.timings = timings | self.jit.timings
        self._kernels = {
            name: PrimFuncKernel(self, sig, self.jit.address(symbol_name(name)))
            for name, sig in self.signatures.items()
        }

    def __getitem__(self, name: str) -> PrimFuncKernel:
        found = self._kernels.get(name)
        if found is None:
            raise TVMLiteError(f"no prim function named '{name}' in this library")
        return found

    def __contains__(self, name: str) -> bool:
        return name in self._kernels

    def __iter__(self):  # noqa: ANN204 - iterator of names
        return iter(self._kernels)

    @property
    def total_ms(self) -> float:
        return sum(self.timings.values())


def lower_kernels(
    funcs: Mapping[str, tir.PrimFunc],
) -> dict[str, tuple[tir.PrimFunc, KernelSignature]]:
    """Each prim function lowered for codegen, with its calling convention."""
    out: dict[str, tuple[tir.PrimFunc, KernelSignature]] = {}
    for name, func in funcs.items():
        lowered = _with_context(name, lower_prim_func, func)
        out[name] = (lowered, kernel_signature(func, name, lowered.body))
    return out


def _with_context(name: str, fn: Any, *args: Any) -> Any:
    """Run a compile step, prefixing the function's name to a TVMLiteError."""
    try:
        return fn(*args)
    except TVMLiteError as err:
        raise TVMLiteError(f"cannot compile prim function '{name}': {err}") from None


def compile_prim_funcs(
    funcs: Mapping[str, tir.PrimFunc], *, optimize: bool = True
) -> KernelLibrary:
    """Lower, compile and load `funcs` (name -> PrimFunc) as one native library."""
    return KernelLibrary(funcs, optimize=optimize)
