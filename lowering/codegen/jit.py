"""JIT compilation of an llvmlite.ir module with MCJIT.

A `JitModule` owns its execution engine, and the engine owns the machine code:
whoever holds a function address must hold the `JitModule` too (the runtime's
kernel objects do), otherwise garbage collection would unmap code still in use.
It keeps the object file the engine loaded (`object_code`): exporting the
build or storing it in the compile cache links that, instead of compiling the
module a second time.

Code made once per process (the support helpers, the fast-call destructor, BLAS
trampolines) goes through `target.once`: its address is published (to the JIT
linker, the registry, result arrays), so a second copy compiled by a thread
that lost a race, then dropped, would leave those addresses pointing at
unmapped code. llvmlite serialises its own C calls, so compiling from several
threads at once is safe.
"""

from __future__ import annotations

import time

import llvmlite.binding as llvm
from llvmlite import ir

from tvmlite.lowering.codegen import target


class JitModule:
    """Optimized, compiled and loaded code of one LLVM module. `timings` holds the
    milliseconds spent per stage."""

    def __init__(
        self,
        module: ir.Module,
        *,
        optimize: bool = True,
        machine: target.MachineOptions | None = None,
    ) -> None:
        start = time.perf_counter()
        # The machine code is for: the caller's, else the current target's.
        self.machine = target.current_options() if machine is None else machine
        text = str(module)
        stamp = time.perf_counter()
        self.timings: dict[str, float] = {"print": (stamp - start) * 1e3}
        self.module = target.parse_and_verify(text)
        self.timings["parse"] = (time.perf_counter() - stamp) * 1e3
        stamp = time.perf_counter()
        if optimize:
            target.optimize(self.module, self.machine)
        self.timings["optimize"] = (time.perf_counter() - stamp) * 1e3
        stamp = time.perf_counter()
        self.engine = llvm.create_mcjit_compiler(
            self.module, target.new_target_machine(self.machine)
        )
        compiled: list[bytes] = []  # not `self`: the engine would keep a cycle alive
        self.engine.set_object_cache(lambda _module, data: compiled.append(bytes(data)))
        self.engine.finalize_object()
        self.object_code = compiled[0]
        self.engine.run_static_constructors()
        self.timings["machine_code"] = (time.perf_counter() - stamp) * 1e3

    def address(self, symbol: str) -> int:
        address = self.engine.get_function_address(symbol)
        if not address:
            raise KeyError(symbol)
        return address

    def llvm_ir(self) -> str:
        """The optimized LLVM IR (for `--emit llvm` and debugging)."""
        return str(self.module)

    def assembly(self) -> str:
        return target.host_target_machine(self.machine).emit_assembly(self.module)
