"""Host code in chunks: a graph function's entry is a short driver that makes the
frame and calls a sequence of chunk functions, each holding the code of a
bounded number of basic blocks (a few dozen bindings).

LLVM's time on one function grows faster than its size (register allocation,
scheduling and several IR passes look at a whole function at once): one
function per graph function made compile time quadratic in the bindings. With
chunks of bounded size it is linear. Chunks are compiled without optimization
(`optnone`): they are straight-line calls into kernels and helpers, where the
optimizer finds nothing to gain and costs more than everything else; kernels
keep the full pipeline.

Values live across a chunk boundary (SSA values of bindings used later,
symbolic dims) are carried through the spill array, one 8-byte word each:
stored at the end of one chunk, loaded at the start of the next. Every chunk
returns a status; the driver stops at the first that is not 0, then releases
the frame and returns that status.
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.dsl import tir
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_frame as frames
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_values import Val, map_val

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
# The entry ABI, then the frame and the spill array.
CHUNK_TYPE = ir.FunctionType(I32, [*abi.ENTRY_TYPE.args, PTR, PTR])
# Basic blocks in a chunk before the next one starts (at the next boundary):
# small enough for LLVM's superlinear steps to stay cheap, large enough that
# the calls between chunks cost nothing.
CHUNK_BLOCKS = 256


class HostChunks:
    """Mixin of the host emitter: owns `fn`, `b`, `allocas` and the entry-ABI
    values of the chunk being written, and `vars` across chunks."""

    module: ir.Module
    b: ir.IRBuilder
    vars: dict[tir.Var, ir.Value]

    def start_chunks(self, driver: ir.Function) -> None:
        self.driver = driver
        self.chunks: list[ir.Function] = []
        self.spills = 0
        entry = ir.IRBuilder(driver.append_basic_block("entry"))
        # Both lengths are known once every binding is emitted (see `finish_chunks`).
        self.frame_array = entry.alloca(ir.ArrayType(PTR, 0), name="frame")
        self.spill_array = entry.alloca(ir.ArrayType(I64, 0), name="spill")
        for array in (self.frame_array, self.spill_array):
            array.type = PTR
        self.driver_entry = entry
        self.open_chunk()

    def open_chunk(self) -> None:
        """Start a new chunk; the builder moves to its body."""
        fn = ir.Function(self.module, CHUNK_TYPE, f"{self.driver.name}.{len(self.chunks)}")
        fn.linkage = "internal"
        for attr in ("nounwind", "noinline", "optnone"):
            fn.attributes.add(attr)
        self.chunks.append(fn)
        self.fn = fn
        self.allocas = ir.IRBuilder(fn.append_basic_block("entry"))
        self.body = fn.append_basic_block("body")
        self.b.position_at_end(self.body)
        (
            self.args_ptr, self.num_args, self.outs_ptr, self.num_outs,
            self.err, self.err_len, self.frame, self.spill,
        ) = fn.args  # fmt: skip

    def close_chunk(self) -> None:
        self.allocas.branch(self.body)

    def carry(self, live: list[Val]) -> list[Val]:
        """At a boundary between bindings: once the chunk is big enough, move on
        to a new one, carrying `live` and the symbolic dims; returns `live` as
        the new chunk sees it."""
        if len(self.fn.blocks) < CHUNK_BLOCKS:
            return live
        spilled: dict[int, tuple[int, ir.Value]] = {}

        def spill(value: ir.Value) -> ir.Value:
            if not isinstance(value, ir.Constant | ir.GlobalValue) and id(value) not in spilled:
                spilled[id(value)] = (self.spills + len(spilled), value)
            return value

        for val in live:
            map_val(val, spill)
        for value in self.vars.values():
            spill(value)
        for index, value in spilled.values():
            self.b.store(value, self._word(index))
        self.b.ret(ty.constant("int32", abi.STATUS_OK))
        self.close_chunk()
        self.open_chunk()
        loaded = {key: self.b.load(self._word(k), typ=v.type) for key, (k, v) in spilled.items()}
        self.spills += len(spilled)

        def reload(value: ir.Value) -> ir.Value:
            return loaded.get(id(value), value)

        self.vars = {var: reload(value) for var, value in self.vars.items()}
        return [map_val(val, reload) for val in live]

    def _word(self, index: int) -> ir.Value:
        return self.b.gep(self.spill, [ty.constant("int64", index)], source_etype=I64)

    def finish_chunks(self, slots: int) -> None:
        """Close the last chunk and write the driver: frame and spill arrays,
        each chunk in turn, then release the frame and return the status."""
        self.close_chunk()
        self.frame_array.allocated_type = ir.ArrayType(PTR, max(1, slots))
        self.spill_array.allocated_type = ir.ArrayType(I64, max(1, self.spills))
        b = self.driver_entry
        memset = self.module.declare_intrinsic("llvm.memset", [PTR, I64])
        zero = [ty.constant("int8", 0), ty.constant("int64", 8 * max(1, slots))]
        b.call(memset, [self.frame_array, *zero, ir.Constant(ty.I1, 0)])
        done = self.driver.append_basic_block("done")
        status = ir.IRBuilder(done).phi(I32, "status")
        for fn in self.chunks:
            result = b.call(fn, [*self.driver.args, self.frame_array, self.spill_array])
            status.add_incoming(result, b.block)
            go_on = self.driver.append_basic_block("next")
            b.cbranch(b.icmp_signed("!=", result, ty.constant("int32", 0)), done, go_on)
            b.position_at_end(go_on)
        status.add_incoming(ty.constant("int32", abi.STATUS_OK), b.block)
        b.branch(done)
        b.position_at_end(done)
        release = self.module.globals[frames.RELEASE_ALL]
        b.call(release, [self.frame_array, ty.constant("int64", slots)])
        b.ret(status)
