"""Native packed functions that call cblas gemm on DLTensors.

    tvmlite.blas.gemm_float32(A, B, C)          # C = A @ B
    tvmlite.blas.gemm_bias_float32(A, B, D, C)  # C = A @ B + D

Each is a few lines of LLVM IR with the packed signature of docs/abi.md,
JIT-compiled once per process, with the cblas address as a constant, and
registered with `tvmlite.register_func`: host code calls it natively through
its packed table, no Python on the way. Destination-passing (`call_dps_packed`):
inputs, then the output. A is (..., M, K), B is (..., K, N) or (K, N), C is
(..., M, N); a batch axis of A or B that is absent is shared (stride 0). The
bias D repeats over C in row-major order (its shape is a suffix of C's after
leading ones, which the partitioner checks), so C is filled with copies of D and
gemm accumulates into it (beta = 1).
"""

from __future__ import annotations

from llvmlite import ir

from tvmlite.lowering.blas.library import Gemm, find_gemm
from tvmlite.lowering.codegen import llvm_host_abi as abi
from tvmlite.lowering.codegen.jit import JitModule
from tvmlite.lowering.codegen.target import HOST, once
from tvmlite.runtime.registry import register_func

I32, I64, PTR = abi.I32, abi.I64, abi.PTR
ROW_MAJOR, NO_TRANS = 101, 111
ITEM = {"float32": (ir.FloatType(), 4), "float64": (ir.DoubleType(), 8)}


def packed_name(dtype: str, bias: bool) -> str:
    return f"tvmlite.blas.gemm_{'bias_' if bias else ''}{dtype}"


@once
def register_gemm(dtype: str) -> JitModule:
    """Compile and register the plain and bias gemm of `dtype` (once; the returned
    JitModule, kept by the cache, owns the code the registry points to)."""
    gemm = find_gemm(dtype)
    module = ir.Module(name=f"tvmlite_blas_{dtype}")
    for bias in (False, True):
        _define(module, gemm, dtype, bias)
    jit = JitModule(module, machine=HOST)
    for bias in (False, True):
        name = packed_name(dtype, bias)
        register_func(name, jit.address(_symbol(name)), override=True)
    return jit


def provide(name: str) -> None:
    """Register the packed function `name` if it is one of these gemms (the
    registry asks when a library or a build calls a `tvmlite.blas.*` function
    nobody registered); TVMLiteError when this process has no BLAS for it."""
    for dtype in ITEM:
        if name in (packed_name(dtype, False), packed_name(dtype, True)):
            register_gemm(dtype)


def _symbol(name: str) -> str:
    return name.replace(".", "_")


def _define(module: ir.Module, gemm: Gemm, dtype: str, bias: bool) -> None:
    fty, size = ITEM[dtype]
    blasint = ir.IntType(gemm.int_bits)
    gemm_type = ir.FunctionType(
        ir.VoidType(),
        [I32, I32, I32, blasint, blasint, blasint, fty, PTR, blasint]
        + [PTR, blasint, fty, PTR, blasint],
    )
    memcpy = abi.c_function(module, "memcpy", PTR, [PTR, PTR, I64])
    fn = ir.Function(module, abi.ENTRY_TYPE, _symbol(packed_name(dtype, bias)))
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
    one, zero = ir.Constant(I64, 1), ir.Constant(I64, 0)
    batch = _numel(b, out, b.sub(ndim(out), ir.Constant(I64, 2)))
    stride_a = b.select(b.icmp_signed(">", ndim(a), ir.Constant(I64, 2)), b.mul(m, k), zero)
    stride_w = b.select(b.icmp_signed(">", ndim(w), ir.Constant(I64, 2)), b.mul(k, n), zero)
    pa, pw, pc = (abi.data_pointer(b, t) for t in (a, w, out))
    beta = ir.Constant(fty, 0.0)
    if bias:
        count = _numel(b, tensors[2], ndim(tensors[2]))
        total = b.mul(batch, b.mul(m, n))
        pd = abi.data_pointer(b, tensors[2])
        nbytes = b.mul(count, ir.Constant(I64, size))
        # Guard count == 0 (then total is 0 too): the loop would never advance.
        loop = abi.Loop(b, zero, b.select(b.icmp_signed(">", count, zero), total, zero), count)
        dest = b.gep(pc, [b.mul(loop.i, ir.Constant(I64, size))], source_etype=abi.I8)
        b.call(memcpy, [dest, pd, nbytes])
        loop.close()
        beta = ir.Constant(fty, 1.0)
    callee = b.inttoptr(ir.Constant(I64, gemm.address), abi.FnPtr(gemm_type))

    def as_int(x: ir.Value) -> ir.Value:
        return b.trunc(x, blasint) if gemm.int_bits == 32 else x

    def lead(x: ir.Value) -> ir.Value:  # lda >= max(1, columns), as cblas requires
        return as_int(b.select(b.icmp_signed(">", x, one), x, one))

    loop = abi.Loop(b, zero, batch, one)
    offsets = [b.mul(loop.i, b.mul(s, ir.Constant(I64, size))) for s in (stride_a, stride_w)]
    offsets.append(b.mul(loop.i, b.mul(b.mul(m, n), ir.Constant(I64, size))))
    ptrs = [b.gep(p, [o], source_etype=abi.I8) for p, o in zip((pa, pw, pc), offsets, strict=True)]
    enums = [ir.Constant(I32, v) for v in (ROW_MAJOR, NO_TRANS, NO_TRANS)]
    b.call(
        callee,
        [*enums, as_int(m), as_int(n), as_int(k), ir.Constant(fty, 1.0)]
        + [ptrs[0], lead(k), ptrs[1], lead(n), beta, ptrs[2], lead(n)],
    )
    loop.close()
    b.ret(ir.Constant(I32, 0))


def _numel(b: ir.IRBuilder, tensor: ir.Value, upto: ir.Value) -> ir.Value:
    """The product of the first `upto` dims of `tensor`."""
    acc = b.alloca(I64)
    b.store(ir.Constant(I64, 1), acc)
    loop = abi.Loop(b, ir.Constant(I64, 0), upto, ir.Constant(I64, 1))
    dim = abi.load_dim_dynamic(b, tensor, loop.i)
    b.store(b.mul(b.load(acc, typ=I64), dim), acc)
    loop.close()
    return b.load(acc, typ=I64)
