"""Native packed functions that call cblas gemm on DLTensors.

    tvmlite.blas.gemm_float32(A, B, C)             # C = A @ B
    tvmlite.blas.gemm_bias_float32(A, B, D, C)     # C = A @ B + D
    tvmlite.blas.gemm_nt_float32(A, W, C)          # C = A @ W^T (W holds B transposed)
    tvmlite.blas.gemm_bias_nt_float32(A, W, D, C)  # C = A @ W^T + D

Each is a few lines of LLVM IR with the packed signature of docs/abi.md,
JIT-compiled once per process, with the cblas address as a constant, and
registered with `tvmlite.register_func`: host code calls it natively through
its packed table, no Python on the way. Destination-passing (`call_dps_packed`):
inputs, then the output. A is (..., M, K), B is (..., K, N) or (K, N), C is
(..., M, N); a batch axis of A or B that is absent is shared (stride 0). The
`_nt` variants take B as stored transposed, (..., N, K) or (N, K), and pass
gemm's transpose flag instead of copying it (a `nn.Linear` weight as exported:
`matmul(x, permute_dims(W))`). The
bias D repeats over C in row-major order (its shape is a suffix of C's after
leading ones, which the partitioner checks), so C is filled with copies of D and
gemm accumulates into it (beta = 1).
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.lowering.blas.library import Gemm, find_gemm
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.llvm_thread_pool import LAUNCH, TASK, TASK_TYPE
from tvmlite.lowering.codegen.target import HOST, once
from tvmlite.runtime.registry import register_func

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
ITEM = {"float32": (ir.FloatType(), 4), "float64": (ir.DoubleType(), 8)}


VARIANTS = ((False, False), (True, False), (False, True), (True, True))  # (bias, trans_b)


def packed_name(dtype: str, bias: bool, trans_b: bool = False) -> str:
    return f"tvmlite.blas.gemm_{'bias_' if bias else ''}{'nt_' if trans_b else ''}{dtype}"


@once
def register_gemm(dtype: str) -> JitModule:
    """Compile and register the gemms of `dtype`, with and without bias and
    transposed B (once; the returned JitModule, kept by the cache, owns the code
    the registry points to)."""
    from tvmlite.lowering.codegen.llvm_host_support import support_library  # noqa: PLC0415

    gemm = find_gemm(dtype)
    module = ir.Module(name=f"tvmlite_blas_{dtype}")
    for bias, trans_b in VARIANTS:
        _define(module, gemm, dtype, bias, trans_b)
    jit = JitModule(module, machine=HOST, libraries=(support_library(),))  # the pool's launch
    for bias, trans_b in VARIANTS:
        name = packed_name(dtype, bias, trans_b)
        register_func(name, jit.address(_symbol(name)), override=True)
    return jit


def provide(name: str) -> None:
    """Register the packed function `name` if it is one of these gemms (the
    registry asks when a library or a build calls a `tvmlite.blas.*` function
    nobody registered); TVMLiteError when this process has no BLAS for it."""
    for dtype in ITEM:
        if name in (packed_name(dtype, bias, trans_b) for bias, trans_b in VARIANTS):
            register_gemm(dtype)


def _symbol(name: str) -> str:
    return name.replace(".", "_")


# What the entry hands each task: pointers to A, B, C and m, n, k, batch, the
# byte strides of A and B between batch items.
CLOSURE = ir.LiteralStructType([PTR, PTR, PTR] + [I64] * 6)
COLUMN_ALIGN = 16  # a task's columns start at a multiple of this: whole vectors


def _define(module: ir.Module, gemm: Gemm, dtype: str, bias: bool, trans_b: bool) -> None:
    """The packed entry: read the tensors, fill C with the bias, then run the
    gemm task on tvmlite's thread pool (or on the caller, OpenBLAS threading it,
    when the library cannot be told to stay on the calling thread)."""
    fty, size = ITEM[dtype]
    memcpy = abi.c_function(module, "memcpy", PTR, [PTR, PTR, I64])
    symbol = _symbol(packed_name(dtype, bias, trans_b))
    task = _define_task(module, gemm, dtype, bias, trans_b, symbol + "_task")
    fn = ir.Function(module, abi.ENTRY_TYPE, symbol)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    args = fn.args[0]
    tensors = [
        b.load(b.gep(args, [ir.Constant(I64, k)], source_etype=PTR), typ=PTR)
        for k in range(4 if bias else 3)
    ]
    a, w, out = tensors[0], tensors[1], tensors[-1]

    def ndim(t: ir.Value) -> ir.Value:
        return b.sext(abi.load_field(b, t, abi.NDIM, I32), I64)

    def dim_from_end(t: ir.Value, k: int) -> ir.Value:
        return abi.load_dim_dynamic(b, t, b.sub(ndim(t), ir.Constant(I64, k)))

    m, n, k = dim_from_end(out, 2), dim_from_end(out, 1), dim_from_end(a, 1)
    zero, item = ir.Constant(I64, 0), ir.Constant(I64, size)
    batch = _numel(b, out, b.sub(ndim(out), ir.Constant(I64, 2)))
    stride_a = b.select(b.icmp_signed(">", ndim(a), ir.Constant(I64, 2)), b.mul(m, k), zero)
    stride_w = b.select(b.icmp_signed(">", ndim(w), ir.Constant(I64, 2)), b.mul(k, n), zero)
    pa, pw, pc = (abi.data_pointer(b, t) for t in (a, w, out))
    if bias:
        count = _numel(b, tensors[2], ndim(tensors[2]))
        total = b.mul(batch, b.mul(m, n))
        pd = abi.data_pointer(b, tensors[2])
        nbytes = b.mul(count, item)
        # Guard count == 0 (then total is 0 too): the loop would never advance.
        loop = abi.Loop(b, zero, b.select(b.icmp_signed(">", count, zero), total, zero), count)
        dest = b.gep(pc, [b.mul(loop.i, item)], source_etype=abi.I8)
        b.call(memcpy, [dest, pd, nbytes])
        loop.close()
    closure = b.alloca(CLOSURE)
    closure.type = PTR  # a plain `ptr`, as every other pointer here
    fields = [pa, pw, pc, m, n, k, batch, b.mul(stride_a, item), b.mul(stride_w, item)]
    for index, value in enumerate(fields):
        field = [ir.Constant(I32, 0), ir.Constant(I32, index)]
        b.store(value, b.gep(closure, field, source_etype=CLOSURE))
    if gemm.threads_local:
        # Up to one task per batch item or per 16 columns; the pool runs as many
        # as it has threads, each a share (_define_task).
        align = ir.Constant(I64, COLUMN_ALIGN)
        columns = b.sdiv(b.add(n, ir.Constant(I64, COLUMN_ALIGN - 1)), align)
        work = b.mul(batch, columns)
        cap = ir.Constant(I64, 1 << 16)
        work = b.select(b.icmp_signed(">", work, cap), cap, work)
        launch = abi.c_function(module, LAUNCH, I32, [TASK, PTR, I32])
        status = b.call(launch, [task, closure, b.trunc(work, I32)])
    else:
        status = b.call(task, [ir.Constant(I32, 0), ir.Constant(I32, 1), closure])
    b.ret(status)


def _define_task(
    module: ir.Module, gemm: Gemm, dtype: str, bias: bool, trans_b: bool, name: str
) -> ir.Function:
    """`int32 task(t, tasks, closure)`: task t of `tasks` computes its share of C
    with gemm told to stay on this thread: whole batch items when there are at
    least as many as tasks, else a slice of the columns of every item (B's
    columns, or W's rows when transposed), starting at a multiple of 16."""
    fty, size = ITEM[dtype]
    blasint = ir.IntType(gemm.int_bits)
    gemm_type = ir.FunctionType(
        ir.VoidType(),
        [I32, I32, I32, blasint, blasint, blasint, fty, PTR, blasint]
        + [PTR, blasint, fty, PTR, blasint],
    )
    fn = ir.Function(module, TASK_TYPE, name)
    fn.linkage = "internal"
    t32, tasks32, closure = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    pa, pw, pc, m, n, k, batch, stride_a, stride_w = (
        b.load(
            b.gep(closure, [ir.Constant(I32, 0), ir.Constant(I32, i)], source_etype=CLOSURE), typ=ty
        )
        for i, ty in enumerate(CLOSURE.elements)
    )
    t, tasks = b.sext(t32, I64), b.sext(tasks32, I64)
    one, zero, item = ir.Constant(I64, 1), ir.Constant(I64, 0), ir.Constant(I64, size)
    previous = None
    if gemm.threads_local:
        set_local = b.inttoptr(
            ir.Constant(I64, gemm.threads_local), abi.FnPtr(ir.FunctionType(I32, [I32]))
        )
        previous = b.call(set_local, [ir.Constant(I32, 1)])

    def share(total: ir.Value, of: ir.Value) -> ir.Value:  # total * of / tasks
        return b.sdiv(b.mul(total, of), tasks)

    def aligned(x: ir.Value) -> ir.Value:
        mask = ir.Constant(I64, ~(COLUMN_ALIGN - 1))
        return b.and_(b.add(x, ir.Constant(I64, COLUMN_ALIGN - 1)), mask)

    by_items = b.icmp_signed(">=", batch, tasks)
    last = b.icmp_signed("==", b.add(t, one), tasks)
    item_lo = b.select(by_items, share(batch, t), zero)
    item_hi = b.select(by_items, share(batch, b.add(t, one)), batch)
    col_lo = b.select(by_items, zero, aligned(share(n, t)))
    col_hi = b.select(by_items, n, b.select(last, n, aligned(share(n, b.add(t, one)))))
    col_lo = b.select(b.icmp_signed(">", col_lo, n), n, col_lo)
    col_hi = b.select(b.icmp_signed(">", col_hi, n), n, col_hi)
    width = b.sub(col_hi, col_lo)
    callee = b.inttoptr(ir.Constant(I64, gemm.address), abi.FnPtr(gemm_type))

    def as_int(x: ir.Value) -> ir.Value:
        return b.trunc(x, blasint) if gemm.int_bits == 32 else x

    def lead(x: ir.Value) -> ir.Value:  # lda >= max(1, columns), as cblas requires
        return as_int(b.select(b.icmp_signed(">", x, one), x, one))

    # B's first column of the slice: element col_lo of a row, or row col_lo of W.
    b_offset = b.mul(b.mul(col_lo, k) if trans_b else col_lo, item)
    c_row = b.mul(b.mul(m, n), item)
    has_columns = b.icmp_signed(">", width, zero)
    loop = abi.Loop(b, item_lo, b.select(has_columns, item_hi, item_lo), one)
    ptr_a = b.gep(pa, [b.mul(loop.i, stride_a)], source_etype=abi.I8)
    ptr_w = b.gep(pw, [b.add(b.mul(loop.i, stride_w), b_offset)], source_etype=abi.I8)
    ptr_c = b.gep(pc, [b.add(b.mul(loop.i, c_row), b.mul(col_lo, item))], source_etype=abi.I8)
    enums = [ir.Constant(I32, v) for v in (ROW_MAJOR, NO_TRANS, TRANS if trans_b else NO_TRANS)]
    beta = ir.Constant(fty, 1.0 if bias else 0.0)
    b.call(
        callee,
        [*enums, as_int(m), as_int(width), as_int(k), ir.Constant(fty, 1.0)]
        + [ptr_a, lead(k), ptr_w, lead(k if trans_b else n), beta, ptr_c, lead(n)],
    )
    loop.close()
    if previous is not None:
        b.call(set_local, [previous])
    b.ret(ir.Constant(I32, 0))
    return fn


def _numel(b: ir.IRBuilder, tensor: ir.Value, upto: ir.Value) -> ir.Value:
    """The product of the first `upto` dims of `tensor`."""
    acc = b.alloca(I64)
    b.store(ir.Constant(I64, 1), acc)
    loop = abi.Loop(b, ir.Constant(I64, 0), upto, ir.Constant(I64, 1))
    dim = abi.load_dim_dynamic(b, tensor, loop.i)
    b.store(b.mul(b.load(acc, typ=I64), dim), acc)
    loop.close()
    return b.load(acc, typ=I64)
