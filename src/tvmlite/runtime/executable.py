"""The result of `tvmlite.build`: compiled functions by name.

    ex = tvmlite.build(mod)
    y = ex["main"](x, w)              # graph function: arrays in, arrays/tuples out
    ex["add"](a, b, out)              # public prim function: destination-passing

Graph functions run as native code (docs/abi.md); Python only converts the
arguments to DLTensors (no copy) and the owned result blocks to NumPy arrays (no
copy; NumPy frees them). Every callable and the Executable share one
`JitModule`, so the code stays mapped while anything can still run it.
"""

from __future__ import annotations

import ctypes
import os
import time
from pathlib import Path
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.llvm_host_calls import PACKED_TABLE
from tvmlite.lowering.codegen.llvm_host_module import build_host_module
from tvmlite.lowering.codegen.llvm_host_support import support_library
from tvmlite.lowering.codegen.llvm_kernel import symbol_name
from tvmlite.lowering.codegen.manifest import entry_symbol, manifest_info
from tvmlite.runtime import registry
from tvmlite.runtime.graph_call import GraphFunction
from tvmlite.runtime.kernels import PrimFuncKernel, lower_kernels


class Executable:
    """Natively compiled functions of one IRModule. `functions` lists the public
    ones; `timings` holds milliseconds per stage; `llvm_ir()` / `assembly()` show
    the optimized code."""

    def __init__(self, mod: IRModule, *, optimize: bool = True) -> None:
        start = time.perf_counter()
        prims = {k: f for k, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}
        graphs = {k: f for k, f in mod.functions.items() if isinstance(f, relax.Function)}
        kernels = lower_kernels(prims)
        stamp = time.perf_counter()
        module, self.packed_names = build_host_module(kernels, graphs)
        symbols = {name: entry_symbol(name) for name in graphs}
        self.manifest = manifest_info(graphs, symbols, self.packed_names)
        self.timings = {
            "lower": (stamp - start) * 1e3,
            "codegen": (time.perf_counter() - stamp) * 1e3,
        }
        support_library()  # the functions host code calls, compiled once per process
        self.jit = JitModule(module, optimize=optimize)
        self.timings |= self.jit.timings
        self._installed: list[Any] = []  # packed trampolines the table points to
        self._table = None
        if self.packed_names:
            address = self.jit.engine.get_global_value_address(PACKED_TABLE)
            self._table = (ctypes.c_void_p * len(self.packed_names)).from_address(address)
        self._missing = set(self.packed_names)
        self.resolve_packed()
        self._entries: dict[str, GraphFunction | PrimFuncKernel] = {}
        self._private: set[str] = set()
        for name, func in graphs.items():
            address = self.jit.address(entry_symbol(name))
            self._entries[name] = GraphFunction(
                self, name, func.params, func.ret_struct_info, address
            )
            if func.attr("global_symbol") is None:
                self._private.add(name)
        for name, (_, sig) in kernels.items():
            self._entries[name] = PrimFuncKernel(self, sig, self.jit.address(symbol_name(name)))
            if prims[name].attr("global_symbol") is None:
                self._private.add(name)

    # ------------------------------------------------------------ lookup

    @property
    def functions(self) -> list[str]:
        """Names of the public functions (all of them when none is public)."""
        public = [n for n in self._entries if n not in self._private]
        return public or list(self._entries)

    def __getitem__(self, name: str) -> GraphFunction | PrimFuncKernel:
        found = self._entries.get(name)
        if found is None or name not in self.functions:
            known = ", ".join(self.functions) or "none"
            reason = "is private" if found is not None else "does not exist"
            raise TVMLiteError(f"function '{name}' {reason} in this executable (public: {known})")
        return found

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __repr__(self) -> str:
        return f"<Executable {', '.join(self.functions)}>"

    @property
    def total_ms(self) -> float:
        return sum(self.timings.values())

    def llvm_ir(self) -> str:
        return self.jit.llvm_ir()

    def assembly(self) -> str:
        return self.jit.assembly()

    def export_library(self, path: str | os.PathLike) -> Path:
        """Write a self-contained shared library of the graph functions and its C
        header (`path` with suffix `.h`); see docs/abi.md. Returns the path."""
        from tvmlite.runtime.export import export_library

        return export_library(self.jit.object_code, self.manifest, path, self.jit.machine)

    # ------------------------------------------------------------ packed functions

    def resolve_packed(self) -> None:
        """Point the callback table at the registered functions (registration may
        happen after the build: entries still missing are looked up on each call)."""
        if self._table is None:
            return
        for index, name in enumerate(self.packed_names):
            if name not in self._missing:
                continue
            found = registry.get_global_func(name, allow_missing=True)
            if found is not None:
                self._table[index] = found.address
                self._installed.append(found)
                self._missing.discard(name)

    @property
    def has_missing_packed(self) -> bool:
        return bool(self._missing)
