"""A graph function whose every part is known when the code is generated, as
one constant *program*: its entry is a single call of the support helper
`tvmlite.run_program` on it.

Such a function as code is mostly fixed cost: a driver with the frame, a chunk
with the argument counts, the return of each result and their error paths,
two LLVM functions of a dozen basic blocks before its first operator. A module
of many small functions (a model's subgraphs) paid that per function, in every
stage of the build. As a program it costs its records and one tiny function.

A function is a program when every parameter is a tensor of known dtype and
shape, every top-level binding is a step (`llvm_host_steps.py`) and every
result is a tensor found without code (a slot, a parameter, a constant);
otherwise it is code (`llvm_host.py`). The helper does what that code does, in
the same order and with the same messages: the argument and result counts, the
frame on its stack, the run of steps (the parameters' checks first), each
result owned (the block of a body slot taken, else a copy), then the frame
released whichever way the function ends.
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen import llvm_host_frame as frames
from tvmlite.lowering.codegen import llvm_types as ty
from tvmlite.lowering.codegen.llvm_host_runner import (
    PREFIX_ERROR,
    Failure,
    load_member,
    tensor_at,
)
from tvmlite.lowering.codegen.llvm_host_steps import RUN_STEPS, SOURCE, Row, table

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
NULL = ir.Constant(PTR, None)

RUN_PROGRAM = "tvmlite.run_program"  # dotted: no kernel symbol can take it
# #arguments, #results, the messages of wrong counts (printf formats of one %d),
# the run, where each result is, the message of each result's failed copy,
# slots of the body (the owned results take the next ones), the prefix of the
# messages (see RUN).
PROGRAM = ir.LiteralStructType([I32, I32, PTR, PTR, PTR, PTR, PTR, I64, PTR])
# The entry ABI, then the program.
RUN_PROGRAM_TYPE = ir.FunctionType(I32, [*abi.ENTRY_TYPE.args, PTR])


def write_program(
    module: ir.Module,
    name: str,
    counts: tuple[int, int],
    count_texts: tuple[str, str],
    run: ir.Value | None,
    results: list[Row],
    copy_texts: list[str],
    body_slots: int,
    prefix: str,
) -> ir.Value:
    """The PROGRAM of a function, as a private constant named `name`."""
    texts = tuple(abi.cstring(module, t) for t in count_texts)
    copies = [(abi.cstring(module, t),) for t in copy_texts]
    row = (
        *counts,
        *texts,
        run,
        table(module, f"{name}.results", SOURCE, results),
        table(module, f"{name}.copies", PTR, copies),
        body_slots,
        abi.cstring(module, prefix),
    )
    return table(module, name, PROGRAM, [row])


def program_entry(entry: ir.Function, run: ir.Function, program: ir.Value) -> None:
    """The body of the entry of a program: one call of `run` (the helper) on it.
    Nothing for the optimizer, and the cheapest code generation."""
    entry.attributes.discard("optsize")
    for attr in ("noinline", "optnone"):
        entry.attributes.add(attr)
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    b.ret(b.call(run, [*entry.args, program], tail=True))


def glue_entry(glue: ir.Module, entry: ir.Function, program: ir.Value) -> None:
    """`entry` (a program's, already defined) once more in `glue`, the module of
    a large module's entries that the JIT compiles without codegen optimization
    (`jit.py`); `program` becomes external, for the glue's object to name it."""
    assert isinstance(program, ir.GlobalVariable)
    program.linkage = ""
    run = glue.globals.get(RUN_PROGRAM) or ir.Function(glue, RUN_PROGRAM_TYPE, RUN_PROGRAM)
    data = glue.globals.get(program.name)
    if data is None:
        data = abi.global_var(glue, program.value_type, program.name)
        data.global_constant = True
    fn = ir.Function(glue, entry.function_type, entry.name)
    fn.attributes.add("nounwind")
    program_entry(fn, run, data)


def add_program_helper(module: ir.Module) -> None:
    """Define `i32 tvmlite.run_program(<entry arguments>, const PROGRAM* p)`
    (after the steps and frame helpers it calls)."""
    if RUN_PROGRAM in module.globals:
        return
    fn = ir.Function(module, RUN_PROGRAM_TYPE, RUN_PROGRAM)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    args, num_args, outs, num_outs, err, err_len, program = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    snprintf = abi.c_function(module, "snprintf", I32, [PTR, I64, PTR], var_arg=True)

    def member(k: int, typ: ir.Type) -> ir.Value:
        return load_member(b, program, PROGRAM, k, typ)

    prefix = member(8, PTR)
    fail = Failure(module, fn, prefix, err, err_len)
    for got, count, text in ((num_args, 0, 2), (num_outs, 1, 3)):
        with b.if_then(b.icmp_signed("!=", got, member(count, I32)), likely=False):
            b.call(snprintf, [err, err_len, member(text, PTR), got])
            fail.now(b, ty.constant("int32", abi.STATUS_ARGUMENT))
    body = member(7, I64)
    n_outs = b.zext(num_outs, I64)
    total = b.add(body, n_outs)
    frame = b.alloca(PTR, size=total, name="frame")
    memset = module.declare_intrinsic("llvm.memset", [PTR, I64])
    nbytes = b.mul(total, ty.constant("int64", 8))
    b.call(memset, [frame, ty.constant("int8", 0), nbytes, ir.Constant(ty.I1, 0)])
    status = b.alloca(I32, name="status")
    b.store(ty.constant("int32", abi.STATUS_OK), status)
    steps = member(4, PTR)
    with b.if_then(b.icmp_unsigned("!=", steps, NULL)):
        ran = b.call(module.globals[RUN_STEPS], [frame, args, NULL, steps, err, err_len])
        b.store(ran, status)
    release = fn.append_basic_block("release")
    owning = fn.append_basic_block("own")
    failed = b.icmp_signed("!=", b.load(status, typ=I32), ty.constant("int32", abi.STATUS_OK))
    b.cbranch(failed, release, owning)

    b.position_at_end(owning)
    zero, one = ty.constant("int64", 0), ty.constant("int64", 1)
    results, copies = member(5, PTR), member(6, PTR)
    # Every result's DLTensor first: taking one empties its slot, and a later
    # result may be the same tensor (then copied from the block, which lives on).
    tensors = b.alloca(PTR, size=n_outs, name="tensors")
    loop = abi.Loop(b, zero, n_outs, one)
    source = b.gep(results, [loop.i], source_etype=SOURCE)
    found = tensor_at(b, source, frame, args, NULL)
    b.store(found, b.gep(tensors, [loop.i], source_etype=PTR))
    loop.close()
    loop = abi.Loop(b, zero, n_outs, one)
    tensor = b.load(b.gep(tensors, [loop.i], source_etype=PTR), typ=PTR)
    taken = b.call(module.globals[frames.TAKE], [frame, body, tensor])
    took = b.block
    copying, owned, no_memory = (fn.append_basic_block(x) for x in ("copy", "owned", "oom"))
    b.cbranch(b.icmp_unsigned("!=", taken, NULL), owned, copying)
    b.position_at_end(copying)
    fresh = b.call(module.globals[abi.COPY], [tensor])
    b.cbranch(b.icmp_unsigned("!=", fresh, NULL), owned, no_memory)
    b.position_at_end(no_memory)
    message = b.load(b.gep(copies, [loop.i], source_etype=PTR), typ=PTR)
    b.call(snprintf, [err, err_len, abi.cstring(module, "%s"), message])
    b.call(module.globals[PREFIX_ERROR], [err, err_len, prefix])
    b.store(ty.constant("int32", abi.STATUS_OOM), status)
    b.branch(release)
    b.position_at_end(owned)
    block = b.phi(PTR)
    block.add_incoming(taken, took)
    block.add_incoming(fresh, copying)
    b.store(block, b.gep(frame, [b.add(body, loop.i)], source_etype=PTR))
    loop.close()
    loop = abi.Loop(b, zero, n_outs, one)  # all owned: hand them over
    slot = b.gep(frame, [b.add(body, loop.i)], source_etype=PTR)
    b.store(b.load(slot, typ=PTR), b.gep(outs, [loop.i], source_etype=PTR))
    b.store(NULL, slot)
    loop.close()
    b.branch(release)

    b.position_at_end(release)
    b.call(module.globals[frames.RELEASE_ALL], [frame, total])
    b.ret(b.load(status, typ=I32))
