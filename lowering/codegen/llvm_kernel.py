"""One lowered PrimFunc as one LLVM function (see `tir/signature.py` for its
calling convention), built with llvmlite.ir.

Control flow: every exit goes through one `exit` block that frees heap
allocations and returns the status, so an assert or an early `return` cannot leak.
Allocations are made once at function entry: small constant-size ones on the
stack, the rest with `aligned_alloc` (a failure returns STATUS_OUT_OF_MEMORY).
A `T.parallel` loop becomes a task function of its own (`llvm_parallel.py`),
emitted by a second emitter of this class, so the same placement gives each
task its own scratch buffers.

Loop kinds (docs/threads.md): `T.vectorized` loops carry LLVM's vectorize hint,
and with AVX-512 every kernel asks for 512-bit vectors (`"prefer-vector-width"`,
which LLVM would otherwise narrow to 256 on some CPUs); `T.unroll` loops carry
the unroll pragma (full for constant extents up to FULL_UNROLL).
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_parallel as parallel
from tvmlite.lowering.codegen import llvm_thread_pool as pool
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.cpu_traits import wide_vector_bits
from tvmlite.lowering.codegen.llvm_expr import ExprEmitter
from tvmlite.lowering.tir.signature import assert_message
from tvmlite.runtime.abi import STATUS_OUT_OF_MEMORY, KernelSignature, kernel_symbol

STACK_LIMIT = 64 * 1024  # bytes; larger or dynamic buffers go to the heap
ALIGN = 64
FULL_UNROLL = 64


class _Allocations(StmtExprVisitor):
    """AllocBuffers of a body, but those inside loops that become tasks."""

    def __init__(self, outlining: bool) -> None:
        self.outlining = outlining
        self.found: list[tir.AllocBuffer] = []

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> None:
        self.found.append(s)

    def visit_For(self, s: tir.For) -> None:
        if not (self.outlining and parallel.outlined(s)):
            super().visit_For(s)


class KernelEmitter(ExprEmitter):
    """Emits the body of one kernel, or of one task of a parallel loop
    (`outlining=False`: parallel loops inside run serially), into `fn`."""

    def __init__(
        self, module: ir.Module, fn: ir.Function, sig: KernelSignature, outlining: bool = True
    ) -> None:
        self.fn = fn
        self.sig = sig
        self.outlining = outlining
        # Stack slots go to `entry`, which jumps to `body` once all are made.
        self.allocas = ir.IRBuilder(fn.append_basic_block("entry"))
        super().__init__(module, ir.IRBuilder(fn.append_basic_block("body")))
        self.exit = fn.append_basic_block("exit")
        self.status = ir.IRBuilder(self.exit).phi(ty.I32, "status")
        self.heap: list[ir.Value] = []
        self.slots: dict[int, ir.Value] = {}  # stack slot of each AllocBuffer statement
        self.loops: list[tuple[ir.Block, ir.Block]] = []  # (continue, break) targets
        # In a task of a kernel that reports values: the i32 the first failing
        # task claims, so that the message and the status come from one assert.
        self.report_claim: ir.Value | None = None

    # ------------------------------------------------------------ function frame

    def emit(self, func: tir.PrimFunc) -> None:
        self._bind_arguments(func)
        self.allocate(func.body)
        self.visit_stmt(func.body)
        self.finish()

    def finish(self) -> None:
        """Return 0 from where the body ended; free the heap in the exit block."""
        self.leave(0)
        self.b.unreachable()
        self.allocas.branch(self.fn.blocks[1])
        exit_builder = ir.IRBuilder(self.exit)
        free = abi.c_function(self.module, "free", ir.VoidType(), [ty.PTR])
        for ptr in self.heap:
            exit_builder.call(free, [ptr])
        exit_builder.ret(self.status)

    def task(self, name: str) -> KernelEmitter:
        """An emitter for a new task function of this kernel (`llvm_parallel.py`)."""
        fn = ir.Function(self.module, pool.TASK_TYPE, self.module.get_unique_name(name))
        fn.linkage = "internal"
        code_attributes(fn)
        return KernelEmitter(self.module, fn, self.sig, outlining=False)

    def entry_alloca(self, kind: ir.Type, name: str = "") -> ir.Value:
        """A stack slot made once at function entry (an alloca inside a loop would
        grow the stack on every iteration)."""
        slot = self.allocas.alloca(kind, name=name)
        slot.type = ty.PTR  # a plain `ptr`, as every other pointer here
        return slot

    def _bind_arguments(self, func: tir.PrimFunc) -> None:
        args = iter(self.fn.args)
        for p in self.sig.params:
            arg = next(args)
            arg.name = p.name
            if p.is_pointer:
                self.vars[p.var] = arg
                if p.buffer is not None:
                    self.vars[p.buffer.data] = arg
                continue
            dtype = p.var.dtype
            if dtype == "float16":
                self.vars[p.var] = self.b.fptrunc(arg, ty.value_type(dtype))
            elif dtype == "bool":
                self.vars[p.var] = self.b.icmp_unsigned("!=", arg, ty.constant("int8", 0))
            else:
                self.vars[p.var] = arg
        for var in self.sig.sym_vars:
            arg = next(args)
            arg.name = var.name
            self.vars[var] = self.arith.cast(arg, "int64", var.dtype)
        if self.sig.reports:
            self.message, self.message_size = next(args), next(args)
            self.message.name, self.message_size.name = "message", "message_size"

    def allocate(self, body: tir.Stmt) -> None:
        """Storage of the buffers `body` allocates, made here (at entry)."""
        collect = _Allocations(self.outlining)
        collect.visit_stmt(body)
        bound = set(self.vars)
        for alloc in collect.found:
            b = alloc.buffer
            if b.data in bound or alloc.data_value is not None:
                continue  # a view of storage that exists already
            elem = ty.memory_type(dt.element_of(b.dtype))
            item = ty.byte_size(b.dtype)
            (size,) = b.shape
            if isinstance(size, tir.IntImm) and size.value * item <= STACK_LIMIT:
                # A slot per allocation, also where copies of one loop allocate
                # the same buffer (PartitionLoops' whole steps and guarded rest):
                # a tile that only constant indices reach stays promotable to
                # registers when the other copy indexes its own slot at run time.
                count = ty.constant("int64", max(size.value * dt.lanes(b.dtype), 1))
                slot = self.allocas.alloca(elem, size=count, name=b.name)
                slot.align = ALIGN
                self.slots[id(alloc)] = slot
                self.vars.setdefault(b.data, slot)
                continue
            if b.data in self.vars:
                continue  # one block per buffer on the heap
            try:
                count = self.int64(size)
            except TVMLiteError as err:
                raise TVMLiteError(
                    f"the size of buffer '{b.name}' must depend only on parameters: {err}"
                ) from None
            nbytes = self.b.mul(count, ty.constant("int64", item))
            # aligned_alloc wants a multiple of the alignment, and never 0 bytes.
            nbytes = self.b.and_(
                self.b.add(nbytes, ty.constant("int64", ALIGN)), ty.constant("int64", -ALIGN)
            )
            # A negative count or a byte size beyond int64 asks for 2**64 - 64 bytes,
            # which fails (out of memory) instead of wrapping to a small block.
            limit = ty.constant("int64", (2**63 - 1 - ALIGN) // item)
            too_big = self.b.icmp_unsigned(">", count, limit)
            nbytes = self.b.select(too_big, ty.constant("int64", -ALIGN), nbytes)
            alloc_fn = abi.c_function(self.module, "aligned_alloc", ty.PTR, [ty.I64, ty.I64])
            ptr = self.b.call(alloc_fn, [ty.constant("int64", ALIGN), nbytes], name=b.name)
            self.vars[b.data] = ptr
            self.heap.append(ptr)
        for ptr in self.heap:
            failed = self.b.icmp_unsigned("==", ptr, ir.Constant(ty.PTR, None))
            ok = self.fn.append_basic_block("alloc.ok")
            fail = self.fn.append_basic_block("alloc.fail")
            self.b.cbranch(failed, fail, ok)
            self.status.add_incoming(ty.constant("int32", STATUS_OUT_OF_MEMORY), fail)
            ir.IRBuilder(fail).branch(self.exit)
            self.b.position_at_end(ok)

    def leave(self, status: int) -> None:
        """Return `status` through the exit block; later code is unreachable."""
        self.status.add_incoming(ty.constant("int32", status), self.b.block)
        self.b.branch(self.exit)
        self.b.position_at_end(self.fn.append_basic_block("dead"))

    # ------------------------------------------------------------ statements

    def visit_SeqStmt(self, s: tir.SeqStmt) -> None:
        for item in s.seq:
            self.visit_stmt(item)

    def visit_BufferStore(self, s: tir.BufferStore) -> None:
        self.store(s)

    def visit_LetStmt(self, s: tir.LetStmt) -> None:
        self.vars[s.var] = self.expr(s.value)
        self.visit_stmt(s.body)
        del self.vars[s.var]

    def visit_Bind(self, s: tir.Bind) -> None:
        self.vars[s.var] = self.expr(s.value)

    def visit_ScopeIdDef(self, s: tir.ScopeIdDef) -> None:
        where = f"{s.span.location()}: " if s.span is not None else ""
        raise TVMLiteError(
            f"{where}T.{s.kind} defines the ids of a GPU {tir.SCOPE_IDS[s.kind][1]} "
            f"('{', '.join(v.name for v in s.vars)}'): a CPU build cannot run it"
        )

    def visit_AttrStmt(self, s: tir.AttrStmt) -> None:
        if isinstance(s.node, tir.IterVar):
            raise TVMLiteError(
                f"T.launch_thread({s.node.thread_tag!r}) launches a GPU thread: "
                "a CPU build cannot run it"
            )
        if s.body is not None:
            self.visit_stmt(s.body)

    def visit_AssertStmt(self, s: tir.AssertStmt) -> None:
        cond = self.expr(s.condition)
        ok = self.fn.append_basic_block("assert.ok")
        fail = self.fn.append_basic_block("assert.fail")
        self.b.cbranch(cond, ok, fail)
        self.b.position_at_end(fail)
        code = ty.constant("int32", self.sig.errors.index(assert_message(s)) + 1)
        values = [p for p in s.message if not isinstance(p, str)]
        if values and self.report_claim is not None:
            claim = self.b.cmpxchg(self.report_claim, ty.constant("int32", 0), code, "monotonic")
            first = self.fn.append_basic_block("assert.first")
            failed = self.fn.append_basic_block("assert.failed")
            self.b.cbranch(self.b.extract_value(claim, 1), first, failed)
            self.b.position_at_end(first)
            self._report(s, values)
            self.b.branch(failed)
            self.b.position_at_end(failed)
        elif values:
            self._report(s, values)
        self.status.add_incoming(code, self.b.block)
        self.b.branch(self.exit)
        self.b.position_at_end(ok)

    def _report(self, s: tir.AssertStmt, values: list[tir.PrimExpr]) -> None:
        """Write the message of failed `s`, its values filled in, into the caller's buffer."""
        pieces = assert_message(s, ["\0"] * len(values)).split("\0")
        fmt = "%ld".join(piece.replace("%", "%%") for piece in pieces)  # long is 64 bits
        args = [self.int64(v) for v in values]
        snprintf = abi.c_function(
            self.module, "snprintf", ty.I32, [ty.PTR, ty.I64, ty.PTR], var_arg=True
        )
        self.b.call(
            snprintf, [self.message, self.message_size, abi.cstring(self.module, fmt), *args]
        )

    def visit_Evaluate(self, s: tir.Evaluate) -> None:
        if not isinstance(s.value, tir.IntImm | tir.FloatImm):
            self.expr(s.value)

    def visit_Return(self, s: tir.Return) -> None:
        self.leave(0)

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> None:
        """Storage was made at entry (see `allocate`); a view over a computed pointer
        takes it here."""
        if s.data_value is not None:
            self.vars[s.buffer.data] = self.expr(s.data_value)
        elif id(s) in self.slots:
            self.vars[s.buffer.data] = self.slots[id(s)]

    def visit_Block(self, s: tir.Block) -> None:
        raise TVMLiteError(f"block '{s.name}' reached codegen: run LowerBlocks first")

    def visit_BlockRealize(self, s: tir.BlockRealize) -> None:
        self.visit_Block(s.block)

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        cond = self.expr(s.condition)
        if s.condition.dtype != "bool":  # `if i:` on an integer, as TVM allows
            cond = self.b.icmp_unsigned("!=", cond, ir.Constant(cond.type, 0))
        then_block = self.fn.append_basic_block("if.then")
        done = self.fn.append_basic_block("if.done")
        else_block = done if s.else_case is None else self.fn.append_basic_block("if.else")
        self.b.cbranch(cond, then_block, else_block)
        self.b.position_at_end(then_block)
        self.visit_stmt(s.then_case)
        self.b.branch(done)
        if s.else_case is not None:
            self.b.position_at_end(else_block)
            self.visit_stmt(s.else_case)
            self.b.branch(done)
        self.b.position_at_end(done)

    def visit_For(self, s: tir.For) -> None:
        if isinstance(s.step, tir.IntImm) and s.step.value <= 0:  # TVM refuses it too
            where = f"{s.span.location()}: " if s.span is not None else ""
            raise TVMLiteError(
                f"{where}loop '{s.loop_var.name}' has step {s.step.value}: "
                "a loop step must be positive to build"
            )
        if self.outlining and parallel.outlined(s):
            parallel.emit_parallel_loop(self, s)
            return
        var = s.loop_var
        start = self.arith.cast(self.expr(s.min), s.min.dtype, var.dtype)
        extent = self.arith.cast(self.expr(s.extent), s.extent.dtype, var.dtype)
        self.emit_loop(s, start, self.b.add(start, extent))

    def emit_loop(self, s: tir.For, start: ir.Value, end: ir.Value) -> None:
        """Loop `s` over [start, end) (its step, if any, from `s`)."""
        var = s.loop_var
        step = ty.constant(var.dtype, 1)
        if s.step is not None:
            step = self.arith.cast(self.expr(s.step), s.step.dtype, var.dtype)
        preheader = self.b.block
        header = self.fn.append_basic_block("for.header")
        body = self.fn.append_basic_block("for.body")
        latch = self.fn.append_basic_block("for.latch")
        done = self.fn.append_basic_block("for.done")
        self.b.branch(header)
        self.b.position_at_end(header)
        index = self.b.phi(ty.value_type(var.dtype), name=var.name)
        index.add_incoming(start, preheader)
        more = self.b.icmp_signed("<", index, end)
        if s.step is not None and not isinstance(s.step, tir.IntImm):
            # A step that is 0 or negative at run time would loop forever: no iterations.
            more = self.b.and_(more, self.b.icmp_signed(">", step, ty.constant(var.dtype, 0)))
        self.b.cbranch(more, body, done)
        self.b.position_at_end(body)
        self.vars[var] = index
        self.loops.append((latch, done))
        self.visit_stmt(s.body)
        self.loops.pop()
        del self.vars[var]
        self.b.branch(latch)
        self.b.position_at_end(latch)
        index.add_incoming(self.b.add(index, step, flags=("nsw",)), latch)
        if s.step is None:
            back = self.b.branch(header)
        else:
            # index + step may pass the dtype's maximum and wrap (range(2**31 - 60,
            # 2**31 - 1, 100) would never end): leave once the step reaches end - index,
            # which is exact when read unsigned since index < end.
            last = self.b.icmp_unsigned(">=", step, self.b.sub(end, index))
            back = self.b.cbranch(last, done, header)
        hint = self._loop_hint(s)
        if hint is not None:
            back.set_metadata("llvm.loop", hint)
        self.b.position_at_end(done)

    def _loop_hint(self, s: tir.For) -> ir.MDValue | None:
        """Loop metadata for `T.vectorized` / `T.unroll`."""
        if s.kind == tir.VECTORIZED:
            return ty.loop_hint(self.module, "llvm.loop.vectorize.enable", ir.Constant(ty.I1, 1))
        if s.kind == tir.UNROLLED:
            full = isinstance(s.extent, tir.IntImm) and s.extent.value <= FULL_UNROLL
            key = "llvm.loop.unroll.full" if full else "llvm.loop.unroll.enable"
            return ty.loop_hint(self.module, key)
        return None

    def visit_While(self, s: tir.While) -> None:
        header = self.fn.append_basic_block("while.header")
        body = self.fn.append_basic_block("while.body")
        done = self.fn.append_basic_block("while.done")
        self.b.branch(header)
        self.b.position_at_end(header)
        self.b.cbranch(self.expr(s.condition), body, done)
        self.b.position_at_end(body)
        self.loops.append((header, done))
        self.visit_stmt(s.body)
        self.loops.pop()
        self.b.branch(header)
        self.b.position_at_end(done)

    def _jump(self, target: int, what: str) -> None:
        if not self.loops:
            raise TVMLiteError(f"{what} outside a loop")
        self.b.branch(self.loops[-1][target])
        self.b.position_at_end(self.fn.append_basic_block("dead"))

    def visit_Break(self, s: tir.Break) -> None:
        self._jump(1, "break")

    def visit_Continue(self, s: tir.Continue) -> None:
        self._jump(0, "continue")


def declare_kernel(module: ir.Module, sig: KernelSignature, symbol: str = "") -> ir.Function:
    """The kernel's function in `module` (as `symbol`, default its own symbol)."""
    params: list[ir.Type] = []
    for p in sig.params:
        params.append(ty.PTR if p.is_pointer else ty.abi_type(p.var.dtype))
    params.extend(ty.I64 for _ in sig.sym_vars)
    if sig.reports:
        params.extend([ty.PTR, ty.I64])  # the message buffer and its size
    fnty = ir.FunctionType(ty.I32, params)
    fn = ir.Function(module, fnty, symbol or kernel_symbol(sig.name))
    code_attributes(fn)
    if sig.noalias:
        for p, arg in zip(sig.params, fn.args, strict=False):
            if p.is_pointer:
                arg.add_attribute("noalias")
    return fn


def code_attributes(fn: ir.Function) -> None:
    """What every kernel and task function is compiled with: no unwinding, and
    with AVX-512, 512-bit vectors (LLVM prefers 256 bits on some such CPUs)."""
    fn.attributes.add("nounwind")
    bits = wide_vector_bits()
    if bits is not None:  # llvmlite's add() accepts only enum attributes
        set.add(fn.attributes, f'"prefer-vector-width"="{bits}"')


def build_kernel(
    module: ir.Module, func: tir.PrimFunc, sig: KernelSignature
) -> tuple[ir.Function, bool]:
    """Add the kernel of lowered `func` to `module`; also returns whether it can
    fail (return a status other than 0: an assert, a failed allocation, a failed
    parallel loop)."""
    fn = declare_kernel(module, sig)
    emitter = KernelEmitter(module, fn, sig)
    emitter.emit(func)
    statuses = [value for value, _ in emitter.status.incomings]
    return fn, any(not (isinstance(v, ir.Constant) and v.constant == 0) for v in statuses)
