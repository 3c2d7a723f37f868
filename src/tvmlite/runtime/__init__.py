"""Running compiled code on NumPy arrays (prim functions for now; the Relax
Executable will build on the same kernels)."""

from tvmlite.runtime.kernels import KernelLibrary, PrimFuncKernel, compile_prim_funcs

__all__ = ["KernelLibrary", "PrimFuncKernel", "compile_prim_funcs"]
