"""The support helper that runs steps (`tvmlite.run_steps`, records in
`llvm_host_steps.py`) and the pieces of IR it shares with `tvmlite.run_program`:
finding a SOURCE's tensor, loading a record's member, and the one exit of a
failed run, which puts the function's prefix in front of the message.

Compiled once per process into the support library (`llvm_host_support.py`),
like the other helpers; host code only calls it.
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_frame as frames
from tvmlite.lowering.codegen import llvm_host_helpers as helpers
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_steps import (
    ARGV_TYPE,
    FROM_ARG,
    FROM_SLOT,
    FROM_WORD,
    OUTPUT,
    RUN,
    RUN_STEPS,
    RUN_STEPS_TYPE,
    SOURCE,
    STEP,
)
from tvmlite.lowering.codegen.memory_plan import ARENA_SLOT
from tvmlite.runtime.abi import MESSAGE_SIZE

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
NULL = ir.Constant(PTR, None)
PREFIX_ERROR = "tvmlite.prefix_error"


def _i64(value: int) -> ir.Constant:
    return ty.constant("int64", value)


def add_steps_helper(module: ir.Module) -> None:
    """Define `tvmlite.run_steps` (after the frame and check helpers it calls):

        for each step:
            a check: check_tensor (or check_shape) of its tensor; or
            a kernel call: argv = data of its inputs, then of its outputs, each
                a fresh block in its slot; status = kernel(argv);
            then free the slots it lists.

    Returns 0, or the status of the first failure with its message in `err`: a
    check's, STATUS_OOM when an output cannot be allocated (alloc_slot wrote
    why), a kernel's failure as `kernel_status` words it."""
    if RUN_STEPS in module.globals:
        return
    _define_prefix_error(module)
    fn = ir.Function(module, RUN_STEPS_TYPE, RUN_STEPS)
    fn.linkage = "internal"
    frame, args, spill, run, err, err_len = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def field_of(ptr: ir.Value, kind: ir.LiteralStructType, k: int, typ: ir.Type) -> ir.Value:
        return load_member(b, ptr, kind, k, typ)

    steps, count = field_of(run, RUN, 0, PTR), field_of(run, RUN, 1, I64)
    tables = [field_of(run, RUN, k, PTR) for k in (2, 3, 4)]
    argv = b.alloca(PTR, size=field_of(run, RUN, 5, I64), name="argv")
    message = b.alloca(ir.ArrayType(abi.I8, MESSAGE_SIZE), name="message")
    message.type = PTR
    fail = Failure(module, fn, load_member(b, run, RUN, 6, PTR), err, err_len)
    cursors = []  # next source, output and release, across steps
    for name in ("source", "output", "release"):
        cursor = b.alloca(I64, name=name)
        b.store(_i64(0), cursor)
        cursors.append(cursor)
    zero, one = _i64(0), _i64(1)

    def entries(k: int, count: ir.Value, kind: ir.Type) -> ir.Value:
        """The address of the next `count` entries of table `k` (taken)."""
        first = b.load(cursors[k], typ=I64)
        b.store(b.add(first, count), cursors[k])
        return b.gep(tables[k], [first], source_etype=kind)

    def word(array: ir.Value, index: ir.Value) -> ir.Value:
        return b.gep(array, [index], source_etype=PTR)

    outer = abi.Loop(b, zero, count, one)
    step = b.gep(steps, [outer.i], source_etype=STEP)
    n_in, n_out, n_release = (b.zext(field_of(step, STEP, k, I32), I64) for k in (4, 5, 6))
    check = field_of(step, STEP, 7, I32)
    checking, calling, after = (fn.append_basic_block(x) for x in ("check", "call", "after"))
    b.cbranch(b.icmp_signed("!=", check, ty.constant("int32", 0)), checking, calling)

    b.position_at_end(checking)
    sources, wants = entries(0, n_in, SOURCE), entries(1, n_out, OUTPUT)
    loop = abi.Loop(b, zero, n_in, one)
    tensor = tensor_at(b, b.gep(sources, [loop.i], source_etype=SOURCE), frame, args, spill)
    want = b.gep(wants, [loop.i], source_etype=OUTPUT)
    dims, what = field_of(want, OUTPUT, 1, PTR), field_of(want, OUTPUT, 2, PTR)
    ndim, dtype = field_of(want, OUTPUT, 3, I32), field_of(want, OUTPUT, 4, I32)
    with b.if_else(b.icmp_unsigned("==", dims, NULL)) as (header, shape):
        with header:
            by_header = b.call(
                module.globals[helpers.CHECK_TENSOR],
                [tensor, ndim, dtype, check, what, err, err_len],
            )
            from_header = b.block
        with shape:
            by_shape = b.call(
                module.globals[helpers.CHECK_SHAPE],
                [tensor, ndim, dims, NULL, check, what, err, err_len],
            )
            from_shape = b.block
    status = b.phi(I32)
    status.add_incoming(by_header, from_header)
    status.add_incoming(by_shape, from_shape)
    fail.unless(b, b.icmp_signed("==", status, ty.constant("int32", 0)), status)
    loop.close()
    b.branch(after)

    b.position_at_end(calling)
    sources = entries(0, n_in, SOURCE)
    loop = abi.Loop(b, zero, n_in, one)
    source = b.gep(sources, [loop.i], source_etype=SOURCE)
    tensor = tensor_at(b, source, frame, args, spill)
    b.store(abi.data_pointer(b, tensor), word(argv, loop.i))
    loop.close()
    outputs = entries(1, n_out, OUTPUT)
    loop = abi.Loop(b, zero, n_out, one)
    output = b.gep(outputs, [loop.i], source_etype=OUTPUT)
    slot, dims, what = (field_of(output, OUTPUT, k, t) for k, t in ((0, I64), (1, PTR), (2, PTR)))
    ndim, dtype = field_of(output, OUTPUT, 3, I32), field_of(output, OUTPUT, 4, I32)
    data_at, header_at = field_of(output, OUTPUT, 5, I64), field_of(output, OUTPUT, 6, I64)
    with b.if_else(b.icmp_signed("<", data_at, zero)) as (fresh, planned):
        with fresh:
            alloc = module.globals[frames.ALLOC_SLOT]
            allocated = b.call(alloc, [frame, slot, ndim, dims, dtype, what, err, err_len])
            oom = ty.constant("int32", abi.STATUS_OOM)
            fail.unless(b, b.icmp_unsigned("!=", allocated, NULL), oom)
            from_alloc = b.block
        with planned:
            held = b.load(b.gep(frame, [_i64(ARENA_SLOT)], source_etype=PTR), typ=PTR)
            arena = abi.load_field(b, abi.tensor_of(b, held), abi.DATA, PTR)
            place = module.globals[frames.PLACE_SLOT]
            placed = b.call(place, [frame, slot, ndim, dims, dtype, arena, data_at, header_at])
            from_place = b.block
    tensor = b.phi(PTR)
    tensor.add_incoming(allocated, from_alloc)
    tensor.add_incoming(placed, from_place)
    data = abi.load_field(b, tensor, abi.DATA, PTR)  # no byte offset: a fresh block or placed
    b.store(data, word(argv, b.add(n_in, loop.i)))
    loop.close()
    kernel = field_of(step, STEP, 0, abi.FnPtr(ARGV_TYPE))
    # A step without kernel only makes its outputs (the arena of the memory plan).
    with b.if_then(b.icmp_unsigned("!=", kernel, NULL)):
        b.store(ty.constant("int8", 0), message)
        status = b.call(kernel, [argv, message, _i64(MESSAGE_SIZE)])
        errors, where = field_of(step, STEP, 1, PTR), field_of(step, STEP, 2, PTR)
        failed = b.icmp_signed("!=", status, ty.constant("int32", 0))
        with b.if_then(failed, likely=False):
            report = module.globals[helpers.KERNEL_STATUS]
            n_errors = field_of(step, STEP, 3, I32)
            fail.now(b, b.call(report, [status, errors, n_errors, where, message, err, err_len]))
    b.branch(after)

    b.position_at_end(after)
    releases = entries(2, n_release, I64)
    loop = abi.Loop(b, zero, n_release, one)
    slot = b.load(b.gep(releases, [loop.i], source_etype=I64), typ=I64)
    b.call(module.globals[frames.RELEASE_SLOT], [frame, slot])
    loop.close()
    outer.close()
    b.ret(ty.constant("int32", abi.STATUS_OK))


def tensor_at(
    b: ir.IRBuilder, source: ir.Value, frame: ir.Value, args: ir.Value, spill: ir.Value
) -> ir.Value:
    """The DLTensor* that the SOURCE at `source` names."""

    def field_of(k: int, typ: ir.Type) -> ir.Value:
        return load_member(b, source, SOURCE, k, typ)

    def word(array: ir.Value) -> ir.Value:
        return b.gep(array, [index], source_etype=PTR)

    kind, index = field_of(0, I64), field_of(1, I64)
    incoming = [(field_of(2, PTR), b.block)]
    done = b.append_basic_block("found")
    switch = b.switch(kind, done)
    for case, load in (
        (FROM_SLOT, lambda: abi.tensor_of(b, b.load(word(frame), typ=PTR))),
        (FROM_ARG, lambda: b.load(word(args), typ=PTR)),
        (FROM_WORD, lambda: b.load(word(spill), typ=PTR)),
    ):
        block = b.append_basic_block(f"from{case}")
        switch.add_case(_i64(case), block)
        b.position_at_end(block)
        incoming.append((load(), b.block))
        b.branch(done)
    b.position_at_end(done)
    found = b.phi(PTR, "tensor")
    for value, block in incoming:
        found.add_incoming(value, block)
    return found


def load_member(
    b: ir.IRBuilder, ptr: ir.Value, kind: ir.LiteralStructType, k: int, typ: ir.Type
) -> ir.Value:
    """Member `k` of the `kind` struct at `ptr`."""
    at = b.gep(ptr, [ty.constant("int32", 0), ty.constant("int32", k)], source_etype=kind)
    return b.load(at, typ=typ)


class Failure:
    """The one exit of a helper that failed: the message in `err` gets `prefix`
    in front, then the status is returned."""

    def __init__(
        self, module: ir.Module, fn: ir.Function, prefix: ir.Value, err: ir.Value, n: ir.Value
    ) -> None:
        b = ir.IRBuilder(fn.append_basic_block("fail"))
        self.status = b.phi(I32, "status")
        b.call(module.globals[PREFIX_ERROR], [err, n, prefix])
        b.ret(self.status)

    def now(self, b: ir.IRBuilder, status: ir.Value) -> None:
        """Fail with `status` (ends the current block)."""
        self.status.add_incoming(status, b.block)
        b.branch(self.status.parent)

    def unless(self, b: ir.IRBuilder, ok: ir.Value, status: ir.Value) -> None:
        """Fail with `status` unless `ok`, else go on."""
        good = b.append_basic_block("ok")
        self.status.add_incoming(status, b.block)
        b.cbranch(ok, good, self.status.parent)
        b.position_at_end(good)


def _define_prefix_error(module: ir.Module) -> None:
    """`void tvmlite.prefix_error(char* err, i64 n, const char* prefix)`: the
    message in `err` with `prefix` in front, cut to fit `n` bytes with its NUL."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, PTR]), PREFIX_ERROR)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    err, n, prefix = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with b.if_then(b.icmp_signed("<=", n, _i64(0)), likely=False):
        b.ret_void()
    strlen = abi.c_function(module, "strlen", I64, [PTR])
    room = b.sub(n, _i64(1))

    def at_most(x: ir.Value, limit: ir.Value) -> ir.Value:
        return b.select(b.icmp_unsigned("<", x, limit), x, limit)

    head = at_most(b.call(strlen, [prefix]), room)
    kept = at_most(b.call(strlen, [err]), b.sub(room, head))
    moved = b.gep(err, [head], source_etype=abi.I8)
    for name, dest, src, size in (("memmove", moved, err, kept), ("memcpy", err, prefix, head)):
        copy = module.declare_intrinsic(f"llvm.{name}", [PTR, PTR, I64])
        b.call(copy, [dest, src, size, ir.Constant(ty.I1, 0)])
    b.store(ty.constant("int8", 0), b.gep(moved, [kept], source_etype=abi.I8))
    b.ret_void()
