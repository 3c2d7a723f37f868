"""Profiled builds (`module.profile`): host code that times every kernel call and
every packed call.

A build under the PassContext config `tvmlite.profile` calls each kernel through a
wrapper, `tvmlite_profile.<kernel>`, that reads the monotonic clock around the
call and adds one call and its nanoseconds to the kernel's pair of counters; every
packed call goes through one wrapper that does the same for the packed function's
pair. Steps, programs and code reach kernels through `Kernel.fn`, so one
substitution covers every form of host code (docs/host-code.md). The counters are
one exported array of int64 pairs (`PROFILE_COUNTERS`), added to atomically (calls
may come from several threads); the manifest's "profile" lists what each pair
counts, `[name, "kernel" | "packed"]`, and the runtime reads them
(`runtime/profiling.py`).

A build without the config has none of this: the code a user calls pays nothing
for profiling.
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.runtime.abi import PROFILE_COUNTERS

PROFILE_KEY = "tvmlite.profile"  # the PassContext config of a profiled build
I32, I64, PTR = abi.I32, abi.I64, abi.PTR
CLOCK_MONOTONIC = 1  # Linux
TIMESPEC = ir.LiteralStructType([I64, I64])  # struct timespec on 64-bit Linux
PACKED_WRAPPER = "tvmlite_profile.packed"
# fn, counter pair, then the entry ABI's arguments (docs/abi.md)
PACKED_TYPE = ir.FunctionType(I32, [abi.FnPtr(abi.ENTRY_TYPE), I64, *abi.ENTRY_TYPE.args])


class Profiler:
    """The counters of one LLVM module and the wrappers that add to them."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.rows: list[list[str]] = []  # [name, kind] of each counter pair
        self.counters = abi.global_var(module, ir.ArrayType(I64, 0), PROFILE_COUNTERS)
        self.packed_rows: dict[str, int] = {}
        self._packed: ir.Function | None = None

    def kernel(self, name: str, fn: ir.Function) -> ir.Function:
        """A function of `fn`'s type that calls it, counted under `name`."""
        row = self._row(name, "kernel")
        wrapper = ir.Function(self.module, fn.function_type, f"tvmlite_profile.{name}")
        wrapper.linkage = "private"
        wrapper.attributes.add("noinline")
        b = ir.IRBuilder(wrapper.append_basic_block("entry"))
        clock = b.alloca(TIMESPEC)
        start = self._now(b, clock)
        result = b.call(fn, list(wrapper.args))
        self._count(b, ty.constant("int64", row), b.sub(self._now(b, clock), start))
        if isinstance(fn.function_type.return_type, ir.VoidType):
            b.ret_void()
        else:
            b.ret(result)
        return wrapper

    def call_packed(
        self, b: ir.IRBuilder, symbol: str, fn: ir.Value, args: list[ir.Value]
    ) -> ir.Value:
        """Call packed function `fn` (entry ABI `args`) counted under `symbol`."""
        row = self.packed_rows.get(symbol)
        if row is None:
            row = self.packed_rows[symbol] = self._row(symbol, "packed")
        return b.call(self._packed_wrapper(), [fn, ty.constant("int64", row), *args])

    def finish(self) -> list[list[str]]:
        """Size the counters (two zeros a row) and return the rows for the manifest."""
        size = max(1, 2 * len(self.rows))
        self.counters.value_type = ir.ArrayType(I64, size)
        self.counters.initializer = ir.Constant(ir.ArrayType(I64, size), [0] * size)
        return self.rows

    # ------------------------------------------------------------ helpers

    def _row(self, name: str, kind: str) -> int:
        self.rows.append([name, kind])
        return len(self.rows) - 1

    def _now(self, b: ir.IRBuilder, clock: ir.Value) -> ir.Value:
        """Nanoseconds of the monotonic clock."""
        gettime = abi.c_function(self.module, "clock_gettime", I32, [I32, PTR])
        b.call(gettime, [ty.constant("int32", CLOCK_MONOTONIC), clock])
        seconds = b.load(b.gep(clock, [ty.constant("int64", 0)], source_etype=I64), typ=I64)
        nanos = b.load(b.gep(clock, [ty.constant("int64", 1)], source_etype=I64), typ=I64)
        return b.add(b.mul(seconds, ty.constant("int64", 1_000_000_000)), nanos)

    def _count(self, b: ir.IRBuilder, row: ir.Value, elapsed: ir.Value) -> None:
        pair = b.gep(self.counters, [b.mul(row, ty.constant("int64", 2))], source_etype=I64)
        b.atomic_rmw("add", pair, ty.constant("int64", 1), "monotonic")
        time = b.gep(pair, [ty.constant("int64", 1)], source_etype=I64)
        b.atomic_rmw("add", time, elapsed, "monotonic")

    def _packed_wrapper(self) -> ir.Function:
        if self._packed is None:
            fn = ir.Function(self.module, PACKED_TYPE, PACKED_WRAPPER)
            fn.linkage = "private"
            fn.attributes.add("noinline")
            b = ir.IRBuilder(fn.append_basic_block("entry"))
            callee, row, *args = fn.args
            clock = b.alloca(TIMESPEC)
            start = self._now(b, clock)
            status = b.call(callee, list(args))
            self._count(b, row, b.sub(self._now(b, clock), start))
            b.ret(status)
            self._packed = fn
        return self._packed
