"""The result of `tvmlite.build`: compiled functions by name.

    ex = tvmlite.build(mod)
    y = ex["main"](x, w)              # graph function: arrays in, arrays/tuples out
    ex["add"](a, b, out)              # public prim function: destination-passing

Graph functions run as native code (docs/abi.md); Python only converts the
arguments to DLTensors (no copy) and the owned result blocks to NumPy arrays (no
copy; NumPy frees them), or the fast-call wrapper compiled with them does both.
The code generator (`lowering/codegen/generate.py`) makes an Executable from
the JIT's code image and the module's manifest; everything else is the
protocol every compiled module shares (`module.py`).
"""

from __future__ import annotations

from tvmlite.runtime.module import CompiledModule


class Executable(CompiledModule):
    """Natively compiled functions of one IRModule, loaded by the JIT. `functions`
    lists the public ones; `timings` holds milliseconds per stage of the build;
    `llvm_ir()` / `assembly()` show the optimized code. Packed functions may be
    registered after the build: missing ones are looked up before each call."""

    def _where(self) -> str:
        return "this executable"
