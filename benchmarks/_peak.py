"""The machine's fp32 peak per core, measured: a loop of independent vector FMAs
at the host's widest vector width (512 bits with AVX-512, else 256),
JIT-compiled through tvmlite's own codegen (llvmlite), timed on one thread in
runs of a millisecond, best of many: a run that short fits in one time slice
even on a busy machine, so the best one is the core's own speed. `run.py`
takes cores x this as the machine's peak unless `--peak` is given (two cores
running at once cannot be measured reliably while others load the machine).

  python benchmarks/_peak.py
"""

from __future__ import annotations

import ctypes
import os
import time

import llvmlite.binding as llvm
from llvmlite import ir

from tvmlite.lowering.codegen import JitModule

CHAINS = 16  # independent accumulators: more than FMA latency x FMA ports
ITERATIONS = 200_000  # 1 ms at 100 GFLOP/s: short enough to fit in one time slice on a busy machine


def _lanes() -> int:
    return 16 if "+avx512f" in llvm.get_host_cpu_features().flatten() else 8


def _fma_loop(lanes: int) -> ir.Module:
    """void fma_loop(i64 n, float *out): CHAINS chains of n dependent FMAs each."""
    module = ir.Module("peak")
    f32, i64 = ir.FloatType(), ir.IntType(64)
    vec = ir.VectorType(f32, lanes)
    fma = ir.Function(module, ir.FunctionType(vec, [vec] * 3), f"llvm.fma.v{lanes}f32")
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64, f32.as_pointer()]), "fma_loop")
    n, out = fn.args
    entry, loop, done = (fn.append_basic_block(name) for name in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(i64)
    accs = [b.phi(vec) for _ in range(CHAINS)]
    # x * 0.999 + 0.001 stays bounded; the scale comes from memory, not a constant,
    # so LLVM cannot fold the chain away
    scale = b.load(out)
    mul = b.insert_element(ir.Constant(vec, None), scale, ir.Constant(ir.IntType(32), 0))
    mul = b.shuffle_vector(mul, mul, ir.Constant(ir.VectorType(ir.IntType(32), lanes), None))
    add = ir.Constant(vec, [0.001] * lanes)
    nxt = [b.call(fma, [acc, mul, add]) for acc in accs]
    i_next = b.add(i, ir.Constant(i64, 1))
    b.cbranch(b.icmp_signed("<", i_next, n), loop, done)
    i.add_incoming(ir.Constant(i64, 0), entry)
    i.add_incoming(i_next, loop)
    for k, (acc, new) in enumerate(zip(accs, nxt, strict=True)):
        acc.add_incoming(ir.Constant(vec, [float(k)] * lanes), entry)
        acc.add_incoming(new, loop)
    b.position_at_end(done)
    total = nxt[0]
    for v in nxt[1:]:
        total = b.fadd(total, v)
    b.store(b.extract_element(total, ir.Constant(ir.IntType(32), 0)), out)
    b.ret_void()
    return module


def fma_peak(repeat: int = 50) -> float:
    """GFLOP/s of the FMA loop on one thread, best of `repeat` runs."""
    lanes = _lanes()
    jit = JitModule(_fma_loop(lanes))
    call = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.POINTER(ctypes.c_float))(
        jit.address("fma_loop")
    )
    cell = ctypes.c_float()
    best = float("inf")
    for _ in range(repeat):
        cell.value = 0.999
        start = time.perf_counter()
        call(ITERATIONS, ctypes.byref(cell))
        best = min(best, time.perf_counter() - start)
    return 2 * lanes * CHAINS * ITERATIONS / best / 1e9


if __name__ == "__main__":
    print(f"fp32 FMA peak: {fma_peak():.0f} GFLOP/s per core, {os.cpu_count()} cores")
