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
    registered after the build: missing ones are looked up before each call.
    A build the compile cache serves is an Executable too, over the cached library.
    `source` names the file the module was parsed from, for messages and the repr."""

    source: str | None = None

    def _where(self) -> str:
        return self.source or "this executable"

    def __repr__(self) -> str:
        origin = f" from {self.source}" if self.source else ""
        return f"<Executable {', '.join(self.functions)}{origin}>"
