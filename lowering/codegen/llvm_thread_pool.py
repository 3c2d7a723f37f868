"""The thread pool of generated code, part of the support module (LLVM IR calling
only libc: pthreads, futex, getenv, sched_getaffinity), so `T.parallel` loops run
on native threads in the JIT and in exported libraries alike, C callers included.

    int32_t tvmlite_parallel_for(int32_t (*task)(int32_t i, int32_t n, void* closure),
                                 void* closure, int32_t max_tasks);

runs `task(i, n, closure)` for every i in [0, n), n = min(max_tasks, threads), and
returns 0 or a nonzero status one of the tasks returned. Design (docs/threads.md):

- One pool per copy of the support code (the JIT's, one per exported library),
  made by the first launch that needs threads (a spin lock holding its holder's
  pid makes threads that launch together make one pool): TVMLITE_NUM_THREADS
  threads, else as many as CPUs the process may run on; the caller is one of them.
- A launch takes the pool (a busy flag). When the pool is taken (another
  thread's launch, or a parallel loop inside a parallel task) the caller runs
  the loop as one task itself: a launch never waits for the pool, so nesting and
  many callers cannot deadlock or oversubscribe the cores.
- Tasks are claimed from one 64-bit word, generation << 32 | next task, by
  compare-and-swap, by the workers and by the caller. A worker late for a job
  cannot claim a task of the next one: the generation in the word differs, and
  a launch sets the word to the new generation with no task left before it
  rewrites the job's fields (then opens it), so fields read too early or too
  late never go with a successful claim. The caller claims like any worker, so
  a launch completes even if no worker wakes.
- Idle threads spin on the generation for a while (launches in a row find them
  awake), then sleep on a futex; a launch wakes them only if someone sleeps.
- After fork the child's pool has no workers: its caller runs every task itself
  (correct, serial). Workers record each generation they see; a launch that
  finds none seen for STALE launches compares getpid() (a system call: never on
  the hot path) with the pool's creator, and in a child drops the pool so that
  the next launch makes one.
- Unloading an exported library (dlclose, exit) joins its workers (a destructor).
"""

from __future__ import annotations

import copy

from llvmlite import ir

from tvmlite.lowering.codegen.llvm_host_abi import I8, I32, I64, PTR, FnPtr, c_function, cstring

LAUNCH = "tvmlite_parallel_for"
TASK_TYPE = ir.FunctionType(I32, [I32, I32, PTR])
TASK = FnPtr(TASK_TYPE)
LAUNCH_TYPE = ir.FunctionType(I32, [TASK, PTR, I32])
ENV = "TVMLITE_NUM_THREADS"
MAX_THREADS = 1024  # the affinity mask read holds 1024 CPUs
SPIN = 1 << 14  # pause instructions before sleeping (a few hundred microseconds)
CLOSED = 0xFFFFFFFF  # a next-task index that no job reaches
STALE = 8  # launches no worker saw before a launch checks for a fork
INT_MAX = 2**31 - 1
FUTEX_SYSCALL = {"x86_64": 202, "aarch64": 98}
FUTEX_WAIT, FUTEX_WAKE = 128, 129  # FUTEX_*_PRIVATE

# Byte offsets of the pool's fields; what the caller writes per job and what
# workers write per task live on different 64-byte lines.
THREADS, PID, STOP = 0, 4, 8
WORD = 64
GEN, SLEEPERS, TASK_FN, CLOSURE, COUNT = 128, 132, 136, 144, 152
DONE, STATUS, WAITING, SEEN = 192, 196, 200, 204
BUSY = 256
TIDS = 320  # pthread_t per thread (slot 0, the caller's, unused)

SEQ, ACQ, REL, ACQ_REL, RELAXED = "seq_cst", "acquire", "release", "acq_rel", "monotonic"


def _c32(v: int) -> ir.Constant:
    return ir.Constant(I32, v)


def _c64(v: int) -> ir.Constant:
    return ir.Constant(I64, v)


def store_atomic(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, order: str) -> None:
    """llvmlite checks an atomic store against its pointer's pointee type, which an
    opaque pointer lacks: store through a copy typed with the value's type."""
    typed = copy.copy(ptr)
    typed.type = FnPtr(value.type)
    b.store_atomic(value, typed, order, _size(value.type))


def acquire_pid_lock(
    b: ir.IRBuilder, lock: ir.Value, getpid: ir.Function, yield_: ir.Function
) -> ir.Value:
    """Take the spin lock at `lock` (an i32 global, 0 when free), which holds its
    holder's pid; returns an i1, true when the holder was another process: a
    thread of the parent that held it across a fork, which this process does not
    have, so the lock is taken over instead of waited for forever (whatever it
    guards may be half updated). Leaves `b` after the lock is held."""
    fn = b.function
    spin, wait, stale, yielding, done = (
        fn.append_basic_block(n)
        for n in ("lock.spin", "lock.wait", "lock.stale", "lock.yield", "lock.held")
    )
    pid = b.call(getpid, [])
    b.branch(spin)
    b.position_at_end(spin)
    taken = b.cmpxchg(lock, _c32(0), pid, ACQ, RELAXED)
    b.cbranch(b.extract_value(taken, 1), done, wait)
    b.position_at_end(wait)
    holder = b.extract_value(taken, 0)
    b.cbranch(b.icmp_signed("==", holder, pid), yielding, stale)
    b.position_at_end(yielding)
    b.call(yield_, [])
    b.branch(spin)
    b.position_at_end(stale)
    over = b.cmpxchg(lock, holder, pid, ACQ, RELAXED)
    b.cbranch(b.extract_value(over, 1), done, spin)
    b.position_at_end(done)
    forked = b.phi(ir.IntType(1))
    forked.add_incoming(ir.Constant(ir.IntType(1), 0), spin)
    forked.add_incoming(ir.Constant(ir.IntType(1), 1), stale)
    return forked


def _size(kind: ir.Type) -> int:
    """Bytes (and alignment) of the pool's field types: i32, i64, ptr."""
    return 4 if kind == I32 else 8


class ThreadPool:
    """Adds the pool's functions to a support module for the host `arch`."""

    def __init__(self, module: ir.Module, arch: str) -> None:
        self.module = module
        self.futex = FUTEX_SYSCALL.get(arch)
        self.arch = arch
        self.pool = ir.GlobalVariable(module, PTR, "tvmlite_pool")
        self.pool.initializer = ir.Constant(PTR, None)
        self.pool.linkage = "internal"
        self.lock = ir.GlobalVariable(module, I32, "tvmlite_pool_lock")
        self.lock.initializer = _c32(0)
        self.lock.linkage = "internal"
        self.syscall = c_function(module, "syscall", I64, [I64], var_arg=True)
        self.getpid = c_function(module, "getpid", I32, [])
        self.yield_ = c_function(module, "sched_yield", I32, [])

    def add(self) -> None:
        self.threads_wanted = self._threads_wanted()
        self.await_change = self._await_change()
        self.run = self._run()
        self.worker = self._worker()
        self.create = self._create()
        self._launch()
        self._shutdown()

    # ------------------------------------------------------------ helpers

    def _function(self, name: str, fnty: ir.FunctionType) -> tuple[ir.Function, ir.IRBuilder]:
        fn = ir.Function(self.module, fnty, name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    @staticmethod
    def field(b: ir.IRBuilder, pool: ir.Value, offset: int) -> ir.Value:
        return b.gep(pool, [_c64(offset)], source_etype=I8)

    def load(
        self, b: ir.IRBuilder, pool: ir.Value, offset: int, kind: ir.Type, order: str
    ) -> ir.Value:
        return b.load_atomic(self.field(b, pool, offset), order, _size(kind), typ=kind)

    def store(
        self, b: ir.IRBuilder, value: ir.Value, pool: ir.Value, offset: int, order: str
    ) -> None:
        store_atomic(b, value, self.field(b, pool, offset), order)

    @staticmethod
    def _thread(b: ir.IRBuilder, pool: ir.Value, k: ir.Value) -> ir.Value:
        """The pthread_t slot of thread `k` (i32)."""
        return b.gep(pool, [b.add(_c64(TIDS), b.mul(b.sext(k, I64), _c64(8)))], source_etype=I8)

    def _futex(self, b: ir.IRBuilder, addr: ir.Value, op: int, value: ir.Value) -> None:
        args = [_c64(self.futex or 0), addr, _c64(op), b.sext(value, I64), ir.Constant(PTR, None)]
        b.call(self.syscall, args)

    def _wake(self, b: ir.IRBuilder, pool: ir.Value, addr: int, waiters: int) -> None:
        """Wake every thread asleep on the futex at `addr` if the counter at
        `waiters` says one may be (seq_cst on both sides: see `_await_change`)."""
        fn = b.function
        wake, done = fn.append_basic_block("wake"), fn.append_basic_block("woken")
        count = self.load(b, pool, waiters, I32, SEQ)
        b.cbranch(b.icmp_signed("!=", count, _c32(0)), wake, done)
        b.position_at_end(wake)
        self._futex(b, self.field(b, pool, addr), FUTEX_WAKE, _c32(INT_MAX))
        b.branch(done)
        b.position_at_end(done)

    def _pause(self, b: ir.IRBuilder) -> None:
        if self.arch == "x86_64":
            b.call(self._intrinsic("llvm.x86.sse2.pause", ir.VoidType(), []), [])
        elif self.arch == "aarch64":
            b.call(self._intrinsic("llvm.aarch64.hint", ir.VoidType(), [I32]), [_c32(1)])

    def _intrinsic(self, name: str, ret: ir.Type, params: list[ir.Type]) -> ir.Function:
        found = self.module.globals.get(name)
        return found or ir.Function(self.module, ir.FunctionType(ret, params), name)

    # ------------------------------------------------------------ functions

    def _threads_wanted(self) -> ir.Function:
        """`int32 threads_wanted(void)`: TVMLITE_NUM_THREADS when it is an integer
        >= 1, else the CPUs of the affinity mask (1 where futexes are unknown)."""
        fn, b = self._function("tvmlite_pool_threads_wanted", ir.FunctionType(I32, []))
        if self.futex is None:
            b.ret(_c32(1))
            return fn
        getenv = c_function(self.module, "getenv", PTR, [PTR])
        strtol = c_function(self.module, "strtol", I64, [PTR, PTR, I32])
        affinity = c_function(self.module, "sched_getaffinity", I32, [I32, I64, PTR])
        end = b.alloca(PTR)
        mask = b.alloca(ir.ArrayType(I64, MAX_THREADS // 64))
        text = b.call(getenv, [cstring(self.module, ENV)])
        parse, cores = fn.append_basic_block("parse"), fn.append_basic_block("cores")
        b.cbranch(b.icmp_unsigned("!=", text, ir.Constant(PTR, None)), parse, cores)
        b.position_at_end(parse)
        value = b.call(strtol, [text, end, _c32(10)])
        stop = b.load(end, typ=PTR)
        whole = b.and_(
            b.icmp_unsigned("!=", stop, text),
            b.icmp_unsigned("==", b.load(stop, typ=I8), ir.Constant(I8, 0)),
        )
        valid = b.and_(whole, b.icmp_signed(">=", value, _c64(1)))
        given = fn.append_basic_block("given")
        b.cbranch(valid, given, cores)
        b.position_at_end(given)
        capped = b.select(b.icmp_signed(">", value, _c64(MAX_THREADS)), _c64(MAX_THREADS), value)
        b.ret(b.trunc(capped, I32))
        b.position_at_end(cores)
        failed = b.call(affinity, [_c32(0), _c64(MAX_THREADS // 8), mask])
        count_block, one = fn.append_basic_block("count"), fn.append_basic_block("one")
        b.cbranch(b.icmp_signed("==", failed, _c32(0)), count_block, one)
        b.position_at_end(one)
        b.ret(_c32(1))
        b.position_at_end(count_block)
        ctpop = self._intrinsic("llvm.ctpop.i64", I64, [I64])
        total: ir.Value = _c64(0)
        for k in range(MAX_THREADS // 64):
            word = b.load(
                b.gep(mask, [_c64(0), _c64(k)], source_etype=mask.allocated_type), typ=I64
            )
            total = b.add(total, b.call(ctpop, [word]))
        b.ret(b.trunc(b.select(b.icmp_signed("<", total, _c64(1)), _c64(1), total), I32))
        return fn

    def _await_change(self) -> ir.Function:
        """`int32 await(pool, int32 seen, int64 addr, int64 waiters)`: the value at
        offset `addr` once it differs from `seen`. Spins first, then counts itself
        in the counter at `waiters` and sleeps on the futex. A waker changes the
        value, then reads the counter; a sleeper counts itself, then reads the
        value (all seq_cst): one of them sees the other, no wakeup is lost."""
        fnty = ir.FunctionType(I32, [PTR, I32, I64, I64])
        fn, b = self._function("tvmlite_pool_await", fnty)
        pool, seen, addr_off, waiters_off = fn.args
        addr = b.gep(pool, [addr_off], source_etype=I8)
        waiters = b.gep(pool, [waiters_off], source_etype=I8)
        entry = b.block
        spin, more, pause, sleep, check, wait, woke, fast = (
            fn.append_basic_block(n)
            for n in ("spin", "more", "pause", "sleep", "check", "wait", "woke", "fast")
        )
        b.branch(spin)
        b.position_at_end(spin)
        k = b.phi(I32)
        k.add_incoming(_c32(0), entry)
        value = b.load_atomic(addr, ACQ, 4, typ=I32)
        b.cbranch(b.icmp_unsigned("!=", value, seen), fast, more)
        b.position_at_end(fast)
        b.ret(value)
        b.position_at_end(more)
        b.cbranch(b.icmp_unsigned("<", k, _c32(SPIN)), pause, sleep)
        b.position_at_end(pause)
        self._pause(b)
        k.add_incoming(b.add(k, _c32(1)), pause)
        b.branch(spin)
        b.position_at_end(sleep)
        b.atomic_rmw("add", waiters, _c32(1), SEQ)
        b.branch(check)
        b.position_at_end(check)
        now = b.load_atomic(addr, SEQ, 4, typ=I32)
        b.cbranch(b.icmp_unsigned("!=", now, seen), woke, wait)
        b.position_at_end(wait)
        self._futex(b, addr, FUTEX_WAIT, seen)
        b.branch(check)
        b.position_at_end(woke)
        b.atomic_rmw("sub", waiters, _c32(1), SEQ)
        b.ret(now)
        return fn

    def _run(self) -> ir.Function:
        """`void run(pool, int32 gen)`: claim and run tasks of job `gen` until none
        is left."""
        fn, b = self._function("tvmlite_pool_run", ir.FunctionType(ir.VoidType(), [PTR, I32]))
        pool, gen = fn.args
        task = self.load(b, pool, TASK_FN, TASK, RELAXED)
        closure = self.load(b, pool, CLOSURE, PTR, RELAXED)
        count = self.load(b, pool, COUNT, I32, RELAXED)
        claim, try_, run, failed, finish, last, next_, out = (
            fn.append_basic_block(n)
            for n in ("claim", "try", "run", "failed", "finish", "last", "next", "out")
        )
        b.branch(claim)
        b.position_at_end(claim)
        word = self.load(b, pool, WORD, I64, RELAXED)
        same = b.icmp_unsigned("==", b.trunc(b.lshr(word, _c64(32)), I32), gen)
        index = b.trunc(word, I32)
        b.cbranch(b.and_(same, b.icmp_unsigned("<", index, count)), try_, out)
        b.position_at_end(try_)
        swap = b.cmpxchg(self.field(b, pool, WORD), word, b.add(word, _c64(1)), ACQ_REL, RELAXED)
        b.cbranch(b.extract_value(swap, 1), run, claim)
        b.position_at_end(run)
        status = b.call(task, [index, count, closure])
        b.cbranch(b.icmp_signed("!=", status, _c32(0)), failed, finish)
        b.position_at_end(failed)
        b.cmpxchg(self.field(b, pool, STATUS), _c32(0), status, SEQ, SEQ)
        b.branch(finish)
        b.position_at_end(finish)
        done = b.add(b.atomic_rmw("add", self.field(b, pool, DONE), _c32(1), SEQ), _c32(1))
        b.cbranch(b.icmp_unsigned("==", done, count), last, next_)
        b.position_at_end(last)
        self._wake(b, pool, DONE, WAITING)
        b.branch(next_)
        b.position_at_end(next_)
        b.branch(claim)
        b.position_at_end(out)
        b.ret_void()
        return fn

    def _worker(self) -> ir.Function:
        """`void* worker(pool)`: the thread body: await a new generation, run its
        tasks, until the pool stops."""
        fn, b = self._function("tvmlite_pool_worker", ir.FunctionType(PTR, [PTR]))
        (pool,) = fn.args
        entry = b.block
        loop, work, stop = (fn.append_basic_block(n) for n in ("loop", "work", "stop"))
        b.branch(loop)
        b.position_at_end(loop)
        seen = b.phi(I32)
        seen.add_incoming(_c32(0), entry)
        gen = b.call(self.await_change, [pool, seen, _c64(GEN), _c64(SLEEPERS)])
        self.store(b, gen, pool, SEEN, RELAXED)
        stopping = self.load(b, pool, STOP, I32, ACQ)
        b.cbranch(b.icmp_unsigned("!=", stopping, _c32(0)), stop, work)
        b.position_at_end(work)
        b.call(self.run, [pool, gen])
        seen.add_incoming(gen, work)
        b.branch(loop)
        b.position_at_end(stop)
        b.ret(ir.Constant(PTR, None))
        return fn

    def _create(self) -> ir.Function:
        """`pool* create(void)`: the pool, made by the first caller (the others
        wait on the lock and find it); NULL when memory is short."""
        fn, b = self._function("tvmlite_pool_create", ir.FunctionType(PTR, []))
        fn.attributes.add("noinline")
        fn.attributes.add("cold")
        alloc = c_function(self.module, "aligned_alloc", PTR, [I64, I64])
        memset = c_function(self.module, "memset", PTR, [PTR, I32, I64])
        create = c_function(self.module, "pthread_create", I32, [PTR, PTR, PTR, PTR])
        found, make, fill, spawn, next_, short, ready = (
            fn.append_basic_block(n)
            for n in ("found", "make", "fill", "spawn", "next", "short", "ready")
        )
        # (a lock a forked-away parent thread held is taken over, not waited for)
        acquire_pid_lock(b, self.lock, self.getpid, self.yield_)
        existing = b.load_atomic(self.pool, ACQ, 8, typ=PTR)
        b.cbranch(b.icmp_unsigned("!=", existing, ir.Constant(PTR, None)), found, make)
        b.position_at_end(found)
        store_atomic(b, _c32(0), self.lock, REL)
        b.ret(existing)
        b.position_at_end(make)
        threads = b.call(self.threads_wanted, [])
        size = b.add(_c64(TIDS + 63), b.mul(b.sext(threads, I64), _c64(8)))
        size = b.and_(size, _c64(-64))
        pool = b.call(alloc, [_c64(64), size])
        b.cbranch(b.icmp_unsigned("==", pool, ir.Constant(PTR, None)), ready, fill)
        b.position_at_end(fill)
        b.call(memset, [pool, _c32(0), size])
        self.store(b, threads, pool, THREADS, RELAXED)
        self.store(b, b.call(self.getpid, []), pool, PID, RELAXED)
        b.branch(spawn)
        b.position_at_end(spawn)
        k = b.phi(I32)
        k.add_incoming(_c32(1), fill)
        b.cbranch(b.icmp_signed("<", k, threads), next_, ready)
        b.position_at_end(next_)
        failed = b.call(
            create, [self._thread(b, pool, k), ir.Constant(PTR, None), self.worker, pool]
        )
        k.add_incoming(b.add(k, _c32(1)), next_)
        b.cbranch(b.icmp_signed("==", failed, _c32(0)), spawn, short)
        b.position_at_end(short)
        self.store(b, k, pool, THREADS, RELAXED)  # the threads that did start, and the caller
        b.branch(ready)
        b.position_at_end(ready)
        made = b.phi(PTR)
        made.add_incoming(pool, make)
        made.add_incoming(pool, spawn)
        made.add_incoming(pool, short)
        store_atomic(b, made, self.pool, REL)
        store_atomic(b, _c32(0), self.lock, REL)
        b.ret(made)
        return fn

    def _launch(self) -> None:
        fn = ir.Function(self.module, LAUNCH_TYPE, LAUNCH)
        fn.attributes.add("nounwind")
        task, closure, wanted = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        names = ("none", "some", "slow", "have", "check", "take", "job", "wait", "sleep", "done",
                 "alone", "forked", "release", "serial")  # fmt: skip
        blocks = {n: fn.append_basic_block(n) for n in names}
        b.cbranch(b.icmp_signed("<=", wanted, _c32(0)), blocks["none"], blocks["some"])
        b.position_at_end(blocks["none"])
        b.ret(_c32(0))
        b.position_at_end(blocks["some"])
        current = b.load_atomic(self.pool, ACQ, 8, typ=PTR)
        one = b.icmp_signed("==", wanted, _c32(1))
        missing = b.icmp_unsigned("==", current, ir.Constant(PTR, None))
        b.cbranch(b.or_(one, missing), blocks["slow"], blocks["have"])
        # slow: one task, or no pool yet (make it unless one task is all there is)
        b.position_at_end(blocks["slow"])
        made_block = fn.append_basic_block("make")
        b.cbranch(one, blocks["serial"], made_block)
        b.position_at_end(made_block)
        made = b.call(self.create, [])
        b.cbranch(
            b.icmp_unsigned("==", made, ir.Constant(PTR, None)), blocks["serial"], blocks["have"]
        )
        b.position_at_end(blocks["have"])
        pool = b.phi(PTR)
        pool.add_incoming(current, blocks["some"])
        pool.add_incoming(made, made_block)
        threads = self.load(b, pool, THREADS, I32, RELAXED)
        b.cbranch(b.icmp_signed("<=", threads, _c32(1)), blocks["serial"], blocks["check"])
        b.position_at_end(blocks["check"])
        taken = b.cmpxchg(self.field(b, pool, BUSY), _c32(0), _c32(1), ACQ, RELAXED)
        b.cbranch(b.extract_value(taken, 1), blocks["take"], blocks["serial"])
        # take: publish the job (closed word first: see the module docstring)
        b.position_at_end(blocks["take"])
        count = b.select(b.icmp_signed("<", wanted, threads), wanted, threads)
        gen = b.add(self.load(b, pool, GEN, I32, RELAXED), _c32(1))
        tag = b.shl(b.zext(gen, I64), _c64(32))
        self.store(b, b.or_(tag, _c64(CLOSED)), pool, WORD, SEQ)
        self.store(b, task, pool, TASK_FN, RELAXED)
        self.store(b, closure, pool, CLOSURE, RELAXED)
        self.store(b, count, pool, COUNT, RELAXED)
        self.store(b, _c32(0), pool, DONE, RELAXED)
        self.store(b, _c32(0), pool, STATUS, RELAXED)
        self.store(b, tag, pool, WORD, REL)
        self.store(b, gen, pool, GEN, SEQ)
        self._wake(b, pool, GEN, SLEEPERS)
        b.call(self.run, [pool, gen])
        b.branch(blocks["job"])
        b.position_at_end(blocks["job"])
        seen = self.load(b, pool, DONE, I32, SEQ)
        b.branch(blocks["wait"])
        b.position_at_end(blocks["wait"])
        done = b.phi(I32)
        done.add_incoming(seen, blocks["job"])
        b.cbranch(b.icmp_unsigned("==", done, count), blocks["done"], blocks["sleep"])
        b.position_at_end(blocks["sleep"])
        later = b.call(self.await_change, [pool, done, _c64(DONE), _c64(WAITING)])
        done.add_incoming(later, blocks["sleep"])
        b.branch(blocks["wait"])
        b.position_at_end(blocks["done"])
        status = self.load(b, pool, STATUS, I32, RELAXED)
        lag = b.sub(gen, self.load(b, pool, SEEN, I32, RELAXED))
        b.cbranch(b.icmp_unsigned(">", lag, _c32(STALE)), blocks["alone"], blocks["release"])
        # alone: no worker saw the last launches; in a forked child, drop the pool
        b.position_at_end(blocks["alone"])
        creator = self.load(b, pool, PID, I32, RELAXED)
        forked = b.icmp_signed("!=", b.call(self.getpid, []), creator)
        b.cbranch(forked, blocks["forked"], blocks["release"])
        b.position_at_end(blocks["forked"])
        b.cmpxchg(self.pool, pool, ir.Constant(PTR, None), SEQ, SEQ)
        b.branch(blocks["release"])
        b.position_at_end(blocks["release"])
        self.store(b, _c32(0), pool, BUSY, REL)
        b.ret(status)
        b.position_at_end(blocks["serial"])
        b.ret(b.call(task, [_c32(0), _c32(1), closure]))

    def _shutdown(self) -> None:
        """A destructor: stop and join the workers (an exported library being
        unloaded must not leave threads running its code). The pool's memory is
        kept: a launch racing the unload may still read it."""
        fn, b = self._function("tvmlite_pool_shutdown", ir.FunctionType(ir.VoidType(), []))
        join = c_function(self.module, "pthread_join", I32, [I64, PTR])
        pool = b.load_atomic(self.pool, ACQ, 8, typ=PTR)
        live, out, stop, loop, body = (
            fn.append_basic_block(n) for n in ("live", "out", "stop", "loop", "body")
        )
        b.cbranch(b.icmp_unsigned("==", pool, ir.Constant(PTR, None)), out, live)
        b.position_at_end(out)
        b.ret_void()
        b.position_at_end(live)
        mine = b.icmp_signed("==", b.call(self.getpid, []), self.load(b, pool, PID, I32, RELAXED))
        b.cbranch(mine, stop, out)  # a forked child: the threads were the parent's
        b.position_at_end(stop)
        store_atomic(b, ir.Constant(PTR, None), self.pool, SEQ)
        self.store(b, _c32(1), pool, STOP, SEQ)
        b.atomic_rmw("add", self.field(b, pool, GEN), _c32(1), SEQ)
        self._futex(b, self.field(b, pool, GEN), FUTEX_WAKE, _c32(INT_MAX))
        threads = self.load(b, pool, THREADS, I32, RELAXED)
        b.branch(loop)
        b.position_at_end(loop)
        k = b.phi(I32)
        k.add_incoming(_c32(1), stop)
        b.cbranch(b.icmp_signed("<", k, threads), body, out)
        b.position_at_end(body)
        b.call(join, [b.load(self._thread(b, pool, k), typ=I64), ir.Constant(PTR, None)])
        k.add_incoming(b.add(k, _c32(1)), body)
        b.branch(loop)
        entry_type = ir.LiteralStructType([I32, PTR, PTR])
        dtors = ir.GlobalVariable(self.module, ir.ArrayType(entry_type, 1), "llvm.global_dtors")
        dtors.linkage = "appending"
        dtors.initializer = ir.Constant(
            ir.ArrayType(entry_type, 1),
            [ir.Constant(entry_type, [_c32(65535), fn, ir.Constant(PTR, None)])],
        )
