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

A value used across a chunk boundary (an SSA value of a binding, a symbolic
dim) gets a home, one 8-byte word of the spill array: it is stored there once,
at the end of the chunk that made it, and loaded in the entry block of each
later chunk that uses it, at its first use there. Parameters and tensors in
frame slots need no home: they are references (`llvm_host_values.py`), loaded
where they are used. So a boundary costs what crosses it, not everything that
is live. Every chunk returns a status; the driver stops at the first that is
not 0, then releases the frame and returns that status.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_frame as frames
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_values import Arg, Home, Ref, Slot, Val, Value, map_val

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_host_state import HostFunction

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
# The entry ABI, then the frame and the spill array.
CHUNK_TYPE = ir.FunctionType(I32, [*abi.ENTRY_TYPE.args, PTR, PTR])
# Basic blocks in a chunk before the next one starts (at the next boundary):
# small enough for LLVM's superlinear steps to stay cheap, large enough that
# the calls between chunks cost nothing.
CHUNK_BLOCKS = 256
# An optimized function releases at most this many slots inline at its exit.
INLINE_RELEASES = 8


class Chunks:
    """Writes the function being emitted (`f`) as a driver and its chunks: keeps
    `f`'s chunk fields (`fn`, `allocas`, the entry-ABI values) on the chunk being
    written, homes `f`'s values and TIR vars across chunks and resolves
    references where code uses them. `flush` writes the pending steps, which
    must run before a boundary and before a slot they fill is read."""

    def __init__(self, f: HostFunction, flush: Callable[[], None]) -> None:
        self.f = f
        self.flush = flush
        self.functions: list[ir.Function] = []  # none while it may be a program
        f.exprs.load_home = self.load_ref

    def start(self, driver: ir.Function) -> None:
        """Write the code from here on into chunks called by `driver`."""
        self.driver = driver
        self.spills = 0
        self.home_of: dict[int, Arg | Home] = {}  # id of a loaded value -> where it is
        entry = ir.IRBuilder(driver.append_basic_block("entry"))
        # Both lengths are known once every binding is emitted (see `finish`).
        self.frame_array = entry.alloca(ir.ArrayType(PTR, 0), name="frame")
        self.spill_array = entry.alloca(ir.ArrayType(I64, 0), name="spill")
        for array in (self.frame_array, self.spill_array):
            array.type = PTR
        self.driver_entry = entry
        self._open()

    def _open(self) -> None:
        """Start a new chunk; the builder moves to its body."""
        fn = ir.Function(self.f.module, CHUNK_TYPE, f"{self.driver.name}.{len(self.functions)}")
        fn.linkage = "internal"
        for attr in ("nounwind", "noinline", "optnone"):
            fn.attributes.add(attr)
        self.functions.append(fn)
        self.f.fn = fn
        self.f.allocas = ir.IRBuilder(fn.append_basic_block("entry"))
        self.body = fn.append_basic_block("body")
        self.failed: ir.PhiInstr | None = None  # status of the chunk's failed checks
        self.f.b.position_at_end(self.body)
        (
            self.f.args_ptr, self.f.num_args, self.f.outs_ptr, self.f.num_outs,
            self.f.err, self.f.err_len, self.f.frame, self.f.spill,
        ) = fn.args  # fmt: skip
        self.loaded: dict[Arg | Home, ir.Value] = {}
        self.f.touched = []

    def _close(self) -> None:
        self.f.allocas.branch(self.body)

    def leave_if(self, failed: ir.Value, status: ir.Value) -> None:
        """Return `status` when `failed` (through one exit block per chunk: a
        return per check would double the blocks), else go on."""
        if self.failed is None:
            exit_b = ir.IRBuilder(self.f.fn.append_basic_block("fail"))
            self.failed = exit_b.phi(I32, "status")
            exit_b.ret(self.failed)
        good = self.f.fn.append_basic_block("ok")
        self.f.b.cbranch(failed, self.failed.parent, good)
        self.failed.add_incoming(status, self.f.b.block)
        self.f.b.position_at_end(good)

    def leave(self, status: ir.Value) -> None:
        """Return `status` (the driver releases the frame); ends the current block."""
        self.f.b.ret(status)

    def propagate(self, status: ir.Value) -> None:
        """Leave with a callee's status (its message is in the buffer already)."""
        self.leave_if(self.f.b.icmp_signed("!=", status, ty.constant("int32", 0)), status)

    def boundary(self, vals: list[Val | None]) -> list[Val | None]:
        """Between two steps of the function: once the chunk is big enough, home
        the values of this chunk that later ones may use and move on. Returns
        `vals` (values the caller keeps) as later chunks see them: pass them
        through `resolve` before use. (A program, with no chunk, has no boundary.)"""
        if not self.functions or len(self.f.fn.blocks) < CHUNK_BLOCKS:
            return vals
        self.flush()
        for var in self.f.touched:
            val = self.f.values.get(var)
            if val is not None:
                self.f.values[var] = map_val(val, self.home)
        self.f.exprs.vars = {var: self.home(value) for var, value in self.f.exprs.vars.items()}
        vals = [None if val is None else map_val(val, self.home) for val in vals]
        self.f.b.ret(ty.constant("int32", abi.STATUS_OK))
        self._close()
        self._open()
        return vals

    def home(self, value: Value) -> Value:
        if isinstance(value, ir.Constant | ir.GlobalValue | Ref):
            return value
        found = self.home_of.get(id(value))
        if found is None:  # made in this chunk: store it
            found = Home(self.spills, value.type)
            self.spills += 1
            self.f.b.store(value, self._word(self.f.b, found.index))
            self.home_of[id(value)] = found
        return found

    def resolve(self, val: Val) -> Val:
        """`val` with its references loaded, for code at the builder's position."""
        return map_val(val, self.load_ref)

    def load_ref(self, value: Value) -> ir.Value:
        """A reference as an SSA value. Arguments and homes are loaded once per
        chunk, in its entry block (which dominates every use in the chunk); a
        slot where it is used, once the steps that may fill it have run."""
        if isinstance(value, ir.Value):
            return value
        if isinstance(value, Slot):
            self.flush()
            block = self.f.b.load(self.f.slot(value.index), typ=PTR)
            tensor = abi.tensor_of(self.f.b, block)
            self.f.slot_of[id(tensor)] = value.index
            return tensor
        found = self.loaded.get(value)
        if found is None:
            b = self.f.allocas
            if isinstance(value, Arg):
                index = ty.constant("int64", value.index)
                found = b.load(b.gep(self.f.args_ptr, [index], source_etype=PTR), typ=PTR)
            else:
                found = b.load(self._word(b, value.index), typ=value.kind)
            self.home_of[id(found)] = value  # it needs no new home
            self.loaded[value] = found
        return found

    def _word(self, b: ir.IRBuilder, index: int) -> ir.Value:
        return b.gep(self.f.spill, [ty.constant("int64", index)], source_etype=I64)

    def finish(self, slots: int, optimize: bool = False) -> None:
        """Close the last chunk and write the driver: frame and spill arrays,
        each chunk in turn, then release the frame and return the status. With
        `optimize`, a lone chunk is inlined in the driver and optimized with it
        (small functions: the fastest calls, at a cost that stays small)."""
        self._close()
        if optimize and len(self.functions) == 1:
            for attr in ("noinline", "optnone"):
                self.f.fn.attributes.discard(attr)
            self.f.fn.attributes.add("alwaysinline")
            self.driver.attributes.discard("optsize")  # which would keep the helpers out
        self.frame_array.allocated_type = ir.ArrayType(PTR, max(1, slots))
        self.spill_array.allocated_type = ir.ArrayType(I64, max(1, self.spills))
        b = self.driver_entry
        memset = self.f.module.declare_intrinsic("llvm.memset", [PTR, I64])
        zero = [ty.constant("int8", 0), ty.constant("int64", 8 * max(1, slots))]
        b.call(memset, [self.frame_array, *zero, ir.Constant(ty.I1, 0)])
        done = self.driver.append_basic_block("done")
        status = ir.IRBuilder(done).phi(I32, "status")
        for fn in self.functions:
            result = b.call(fn, [*self.driver.args, self.frame_array, self.spill_array])
            status.add_incoming(result, b.block)
            go_on = self.driver.append_basic_block("next")
            b.cbranch(b.icmp_signed("!=", result, ty.constant("int32", 0)), done, go_on)
            b.position_at_end(go_on)
        status.add_incoming(ty.constant("int32", abi.STATUS_OK), b.block)
        b.branch(done)
        b.position_at_end(done)
        if optimize and slots <= INLINE_RELEASES:  # a few loads, no call, to optimize
            for k in reversed(range(slots)):  # as release_all: slot 0 (an arena) last
                slot = b.gep(self.frame_array, [ty.constant("int64", k)], source_etype=PTR)
                frames.release_held(b, self.f.module, slot)
        else:
            release = self.f.module.globals[frames.RELEASE_ALL]
            b.call(release, [self.frame_array, ty.constant("int64", slots)])
        b.ret(status)
