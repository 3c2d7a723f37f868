"""`T.parallel` loops as tasks of the thread pool (`llvm_thread_pool.py`).

A parallel loop whose iterations may run in any order (unit step, no `break` or
`return` inside) becomes an internal function of the kernel's module,

    int32_t KERNEL.parallel(int32_t task, int32_t tasks, void* closure)

that runs one contiguous chunk of the iterations: the extent cut into `tasks`
chunks whose sizes differ by at most one (static chunking). The kernel stores
what the body needs in a closure on its stack (the loop's bounds, the values of
the vars the body reads, the message buffer), calls
`tvmlite_parallel_for(task, closure, extent)` and leaves with the status the
pool returns, like a failed assert of its own. The task is emitted by an
emitter that keeps parallel loops serial, so a parallel loop nested in another
runs inside its task; the pool runs a launch from inside a task serially too.

In a kernel whose asserts report values, tasks that fail at once would write the
one message buffer together: the first to claim an i32 in the closure writes it,
and the kernel returns that task's status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from tvmlite.dsl import tir
from tvmlite.dsl.analysis import free_vars
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_thread_pool as pool
from tvmlite.lowering.codegen import llvm_types as ty

if TYPE_CHECKING:
    from tvmlite.lowering.codegen.llvm_kernel import KernelEmitter

INT32_MAX = 2**31 - 1


class _Exits(StmtExprVisitor):
    """Whether a body can leave its loop early (then order matters)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Break(self, s: tir.Break) -> None:
        self.found = True

    def visit_Return(self, s: tir.Return) -> None:
        self.found = True


def outlined(s: tir.For) -> bool:
    """Whether loop `s` runs on the pool (other parallel loops run serially)."""
    if s.kind != tir.PARALLEL or s.step is not None:
        return False
    exits = _Exits()
    exits.visit_stmt(s.body)
    return not exits.found


def _field(b: ir.IRBuilder, closure: ir.Value, layout: ir.Type, k: int) -> ir.Value:
    return b.gep(closure, [ty.constant("int32", 0), ty.constant("int32", k)], source_etype=layout)


def emit_parallel_loop(k: KernelEmitter, s: tir.For) -> None:
    """Emit loop `s` of kernel emitter `k` as a launch of a task function."""
    var, b = s.loop_var, k.b
    start = k.arith.cast(k.expr(s.min), s.min.dtype, var.dtype)
    extent = k.arith.cast(k.expr(s.extent), s.extent.dtype, var.dtype)
    captured = [v for v in free_vars(s.body) if v in k.vars and v is not var]
    values = [start, extent, *(k.vars[v] for v in captured)]
    claim = None
    if k.sig.reports:
        claim = k.entry_alloca(ty.I32, "report.claim")
        b.store(ty.constant("int32", 0), claim)
        values += [k.message, k.message_size, claim]
    layout = ir.LiteralStructType([v.type for v in values])
    closure = k.entry_alloca(layout, "closure")
    for i, value in enumerate(values):
        b.store(value, _field(b, closure, layout, i))
    task = _emit_task(k, s, captured, layout, claim is not None)
    # At most `extent` tasks (clamped to int32); an empty loop launches none.
    wanted = k.arith.cast(extent, var.dtype, "int64")
    wanted = b.select(
        b.icmp_signed("<", wanted, ty.constant("int64", 0)), ty.constant("int64", 0), wanted
    )
    limit = ty.constant("int64", INT32_MAX)
    wanted = b.trunc(b.select(b.icmp_signed(">", wanted, limit), limit, wanted), ty.I32)
    launch = abi.c_function(k.module, pool.LAUNCH, ty.I32, list(pool.LAUNCH_TYPE.args))
    status = b.call(launch, [task, closure, wanted])
    if claim is not None:
        claimed = b.load(claim, typ=ty.I32)
        status = b.select(b.icmp_signed("!=", claimed, ty.constant("int32", 0)), claimed, status)
    failed = k.fn.append_basic_block("parallel.failed")
    done = k.fn.append_basic_block("parallel.done")
    b.cbranch(b.icmp_signed("!=", status, ty.constant("int32", 0)), failed, done)
    k.status.add_incoming(status, failed)
    ir.IRBuilder(failed).branch(k.exit)
    b.position_at_end(done)


def _emit_task(
    k: KernelEmitter, s: tir.For, captured: list[tir.Var], layout: ir.Type, reports: bool
) -> ir.Function:
    """The task function of loop `s`: unpack the closure, run one chunk."""
    t = k.task(f"{k.fn.name}.parallel")
    b, var = t.b, s.loop_var
    task, tasks, closure = t.fn.args
    task.name, tasks.name, closure.name = "task", "tasks", "closure"
    fields = [
        b.load(_field(b, closure, layout, i), typ=kind) for i, kind in enumerate(layout.elements)
    ]
    start, extent = fields[0], fields[1]
    for v, value in zip(captured, fields[2:], strict=False):
        t.vars[v] = value
    if reports:
        t.message, t.message_size, t.report_claim = fields[-3:]
    # Chunk `task` of `tasks`: the first extent % tasks chunks hold one more.
    total = t.arith.cast(extent, var.dtype, "int64")
    index, count = b.sext(task, ty.I64), b.sext(tasks, ty.I64)
    size, rest = b.sdiv(total, count), b.srem(total, count)
    longer = b.icmp_signed("<", index, rest)
    first = b.add(b.mul(index, size), b.select(longer, index, rest))
    size = b.add(size, b.zext(longer, ty.I64))
    lo = b.add(start, t.arith.cast(first, "int64", var.dtype))
    hi = b.add(lo, t.arith.cast(size, "int64", var.dtype))
    t.allocate(s.body)
    t.emit_loop(s, lo, hi)
    t.finish()
    return t.fn
