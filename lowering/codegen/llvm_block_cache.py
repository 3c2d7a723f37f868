"""The block cache of the JIT's support code: large tensor blocks handed back by
their owner (a NumPy array collected, a DLPack consumer done, host code
releasing an intermediate) are kept by size class and handed out again, so a hot
function does not map fresh memory and pay its page faults on every call.

    void* tvmlite_block_take(int64_t bytes, int64_t* tag);   /* a block of >= bytes */
    void  tvmlite_block_give(DLManagedTensorVersioned* block); /* its DLPack deleter */

Design (docs/memory.md):

- Blocks under CACHE_MIN bytes come from libc and go back to it: its free lists
  reuse them without page faults. Larger ones are rounded up to one of
  CLASS_STEPS size classes per power of two (at most 25 % more), and a block
  remembers its class in the header's `manager_ctx` (the producer's field in
  DLPack: consumers never read it), 0 for a libc block.
- One list per class, linked through the first word of the cached blocks; the
  bytes held are bounded by the global `tvmlite_block_limit` (the process sets
  it from TVMLITE_BLOCK_CACHE_SIZE, else DEFAULT_LIMIT, when it compiles the
  cache), beyond which a block goes back to libc. 0 turns the cache off.
- One spin lock guards the lists (a push or a pop: a few instructions). It holds
  its holder's pid: after fork, a child that finds the lock held by a thread of
  its parent (which the child does not have) takes it over and drops the lists,
  which that thread may have left half updated (their blocks stay allocated in
  the child, a bounded loss), rather than wait forever.
- Only the JIT's support code has the cache: it stays loaded for the life of the
  process, so a block's deleter is always there. An exported library keeps libc
  `free` as the deleter (docs/abi.md: results may outlive a `dlclose`).
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.lowering.codegen.llvm_host_abi import (
    ALIGN,
    BLOCK_GIVE,
    BLOCK_TAKE,
    GIVE_TYPE,
    I32,
    I64,
    MANAGED,
    PTR,
    TAKE_TYPE,
    advise_huge_pages,
    c_function,
    global_var,
)
from tvmlite.lowering.codegen.llvm_thread_pool import acquire_pid_lock, store_atomic

HELD = "tvmlite_block_cache_bytes"
HELD_TYPE = ir.FunctionType(I64, [])
LIMIT = "tvmlite_block_limit"  # the byte limit, an int64 global
ENV = "TVMLITE_BLOCK_CACHE_SIZE"
DEFAULT_LIMIT = 256 << 20
CACHE_MIN = 1 << 17  # glibc's default mmap threshold: smaller blocks stay on its heap
MIN_SHIFT = 16  # classes of the power of two above 2**MIN_SHIFT come first
MAX_SHIFT = 48  # blocks over 2**MAX_SHIFT bytes are never cached
CLASS_STEPS = 4
BINS = (MAX_SHIFT - MIN_SHIFT) * CLASS_STEPS
ACQ, REL, RELAXED = "acquire", "release", "monotonic"


def _c32(v: int) -> ir.Constant:
    return ir.Constant(I32, v)


def _c64(v: int) -> ir.Constant:
    return ir.Constant(I64, v)


def class_of(size: int) -> tuple[int, int] | None:
    """(bin, capacity) of a block of `size` bytes, None when it is not cached: the
    arithmetic `take` does, for tests and the docs."""
    if size < CACHE_MIN:
        return None
    shift = (size - 1).bit_length() - 1  # 2**shift < size <= 2**(shift + 1)
    if shift >= MAX_SHIFT:
        return None
    step = 1 << (shift - 2)
    quarters = -(-size // step)  # 5..8
    return (shift - MIN_SHIFT) * CLASS_STEPS + quarters - 5, quarters * step


class BlockCache:
    """Adds the cache's globals and functions to a support module."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.bins = self._global(ir.ArrayType(PTR, BINS), "tvmlite_block_bins")
        self.held = self._global(I64, "tvmlite_block_held")
        self.limit = self._global(I64, LIMIT, DEFAULT_LIMIT)
        self.limit.linkage = ""  # set by the loader (llvm_host_support.py)
        self.lock = self._global(I32, "tvmlite_block_lock")
        self.getpid = c_function(module, "getpid", I32, [])
        self.yield_ = c_function(module, "sched_yield", I32, [])
        self.alloc = c_function(module, "aligned_alloc", PTR, [I64, I64])
        self.free = c_function(module, "free", ir.VoidType(), [PTR])

    def _global(self, kind: ir.Type, name: str, value: int = 0) -> ir.GlobalVariable:
        g = global_var(self.module, kind, name) if isinstance(kind, ir.ArrayType) else None
        g = g or ir.GlobalVariable(self.module, kind, name)
        g.initializer = ir.Constant(kind, None if isinstance(kind, ir.ArrayType) else value)
        g.linkage = "internal"
        return g

    def add(self) -> None:
        self.acquire = self._acquire()
        self.release = self._release()
        self._take()
        self._give()
        self._held()

    def _function(self, name: str, fnty: ir.FunctionType) -> tuple[ir.Function, ir.IRBuilder]:
        fn = ir.Function(self.module, fnty, name)
        fn.attributes.add("nounwind")
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    def _bin(self, b: ir.IRBuilder, index: ir.Value) -> ir.Value:
        return b.gep(self.bins, [_c64(0), index], source_etype=self.bins.value_type)

    # ------------------------------------------------------------ the lock

    def _acquire(self) -> ir.Function:
        """`void acquire(void)`; takes over (and empties the lists) a lock whose
        holder is another process: a parent thread that held it across a fork."""
        fn, b = self._function("tvmlite_block_acquire", ir.FunctionType(ir.VoidType(), []))
        fn.linkage = "internal"
        forked = acquire_pid_lock(b, self.lock, self.getpid, self.yield_)
        with b.if_then(forked):
            memset = c_function(self.module, "memset", PTR, [PTR, I32, I64])
            b.call(memset, [self.bins, _c32(0), _c64(BINS * 8)])
            b.store(_c64(0), self.held)
        b.ret_void()
        return fn

    def _release(self) -> ir.Function:
        fn, b = self._function("tvmlite_block_release_lock", ir.FunctionType(ir.VoidType(), []))
        fn.linkage = "internal"
        store_atomic(b, _c32(0), self.lock, REL)
        b.ret_void()
        return fn

    # ------------------------------------------------------------ take and give

    def _class(self, b: ir.IRBuilder, size: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
        """(cached?, bin, capacity) of `size` bytes, as `class_of` computes them."""
        ctlz = self.module.declare_intrinsic(
            "llvm.ctlz", [I64], ir.FunctionType(I64, [I64, ir.IntType(1)])
        )
        shift = b.sub(_c64(63), b.call(ctlz, [b.sub(size, _c64(1)), ir.Constant(ir.IntType(1), 0)]))
        cached = b.and_(
            b.icmp_signed(">=", size, _c64(CACHE_MIN)),
            b.icmp_signed("<", shift, _c64(MAX_SHIFT)),
        )
        low = b.select(cached, b.sub(shift, _c64(2)), _c64(0))
        step = b.shl(_c64(1), low)
        quarters = b.lshr(b.add(size, b.sub(step, _c64(1))), low)
        index = b.add(
            b.mul(b.sub(shift, _c64(MIN_SHIFT)), _c64(CLASS_STEPS)), b.sub(quarters, _c64(5))
        )
        return cached, index, b.shl(quarters, low)

    def _capacity(self, b: ir.IRBuilder, index: ir.Value) -> ir.Value:
        shift = b.add(b.udiv(index, _c64(CLASS_STEPS)), _c64(MIN_SHIFT))
        quarters = b.add(b.urem(index, _c64(CLASS_STEPS)), _c64(5))
        return b.shl(quarters, b.sub(shift, _c64(2)))

    def _take(self) -> None:
        """`void* take(int64 bytes, int64* tag)`: a cached block of `bytes`' class,
        else a fresh one (huge pages advised); `*tag` = bin + 1, or 0 for a libc
        block. NULL when memory runs out."""
        fn, b = self._function(BLOCK_TAKE, TAKE_TYPE)
        size, tag = fn.args
        libc, look, hit, miss, fresh = (
            fn.append_basic_block(n) for n in ("libc", "look", "hit", "miss", "fresh")
        )
        cached, index, capacity = self._class(b, size)
        b.cbranch(cached, look, libc)
        b.position_at_end(libc)
        b.store(_c64(0), tag)
        block = b.call(self.alloc, [_c64(ALIGN), size])
        with b.if_then(b.icmp_unsigned("!=", block, ir.Constant(PTR, None))):
            advise_huge_pages(b, block, size)
        b.ret(block)
        b.position_at_end(look)
        b.store(b.add(index, _c64(1)), tag)
        b.call(self.acquire, [])
        slot = self._bin(b, index)
        head = b.load(slot, typ=PTR)
        b.cbranch(b.icmp_unsigned("!=", head, ir.Constant(PTR, None)), hit, miss)
        b.position_at_end(hit)
        b.store(b.load(head, typ=PTR), slot)
        b.store(b.sub(b.load(self.held, typ=I64), capacity), self.held)
        b.call(self.release, [])
        b.ret(head)
        b.position_at_end(miss)
        b.call(self.release, [])
        block = b.call(self.alloc, [_c64(ALIGN), capacity])
        # No memory for the class's capacity: libc's try at the exact size (tag 0).
        b.cbranch(b.icmp_unsigned("!=", block, ir.Constant(PTR, None)), fresh, libc)
        b.position_at_end(fresh)
        advise_huge_pages(b, block, capacity)
        b.ret(block)

    def _give(self) -> None:
        """`void give(DLManagedTensorVersioned* block)`, the deleter: back into its
        bin while the cache holds less than its limit, else to libc."""
        fn, b = self._function(BLOCK_GIVE, GIVE_TYPE)
        (block,) = fn.args
        freeing, cached, keep = (fn.append_basic_block(n) for n in ("free", "cached", "keep"))
        ctx = b.gep(block, [_c64(0), _c32(1)], source_etype=MANAGED)
        tag = b.ptrtoint(b.load(ctx, typ=PTR), I64)
        b.cbranch(b.icmp_signed("==", tag, _c64(0)), freeing, cached)
        b.position_at_end(freeing)
        b.call(self.free, [block])
        b.ret_void()
        b.position_at_end(cached)
        index = b.sub(tag, _c64(1))
        capacity = self._capacity(b, index)
        limit = b.load_atomic(self.limit, RELAXED, 8, typ=I64)
        b.call(self.acquire, [])
        held = b.add(b.load(self.held, typ=I64), capacity)
        room = b.icmp_signed("<=", held, limit)
        over = fn.append_basic_block("over")
        b.cbranch(room, keep, over)
        b.position_at_end(keep)
        slot = self._bin(b, index)
        b.store(b.load(slot, typ=PTR), block)
        b.store(block, slot)
        b.store(held, self.held)
        b.call(self.release, [])
        b.ret_void()
        b.position_at_end(over)
        b.call(self.release, [])
        b.branch(freeing)

    def _held(self) -> None:
        """`int64 tvmlite_block_cache_bytes(void)`: the bytes cached now."""
        fn, b = self._function(HELD, HELD_TYPE)
        b.call(self.acquire, [])
        held = b.load(self.held, typ=I64)
        b.call(self.release, [])
        b.ret(held)
