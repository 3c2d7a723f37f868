"""`T.parallel` loops on the thread pool: results for every extent (none, one,
fewer than the threads, not a multiple of them), nested parallel loops, scratch
buffers per task, errors inside a parallel body, many callers at once."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tvmlite
from tvmlite import TVMLiteError
from tvmlite.lowering import compile_prim_funcs

SCALE = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.parallel(n):
        B[i] = A[i] * T.float32(2) + T.float32(1)
"""


def kernel(source: str, checked: bool = False):
    return tvmlite.build(tvmlite.parse(source), checked=checked)["main"]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 1000, 4099])
def test_every_iteration_runs_once(n: int) -> None:
    a = np.arange(n, dtype="float32")
    b = np.full(n, -5, "float32")
    kernel(SCALE)(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


def test_compile_prim_funcs_runs_parallel_loops() -> None:
    a = np.arange(37, dtype="float32")
    b = np.zeros(37, "float32")
    compile_prim_funcs({"main": tvmlite.parse(SCALE)})["main"](a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


OFFSET = """
@T.prim_func
def main(A: T.Buffer((20,), "int32")):
    for i in T.parallel(3, 17):
        A[i] = A[i] + i
"""


def test_loop_with_a_start() -> None:
    a = np.zeros(20, "int32")
    kernel(OFFSET)(a)
    want = np.where((np.arange(20) >= 3) & (np.arange(20) < 17), np.arange(20), 0)
    np.testing.assert_array_equal(a, want)


NESTED = """
@T.prim_func
def main(A: T.Buffer((13, 11), "float32"), B: T.Buffer((13, 11), "float32")):
    for i in T.parallel(13):
        for j in T.parallel(11):
            B[i, j] = A[i, j] + T.Cast("float32", i * 100 + j)
"""


def test_nested_parallel_loops() -> None:
    a = np.random.default_rng(0).standard_normal((13, 11)).astype("float32")
    b = np.zeros_like(a)
    kernel(NESTED)(a, b)
    idx = np.arange(13)[:, None] * 100 + np.arange(11)[None, :]
    np.testing.assert_allclose(b, a + idx.astype("float32"))


SCRATCH = """
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(32):
            acc[0] = acc[0] + A[i, j] * A[i, j]
        B[i] = acc[0]
"""


def test_scratch_buffers_are_per_task() -> None:
    a = np.random.default_rng(1).standard_normal((64, 32)).astype("float32")
    b = np.zeros(64, "float32")
    for _ in range(20):  # a shared accumulator would mix rows now and then
        kernel(SCRATCH)(a, b)
        np.testing.assert_allclose(b, (a * a).sum(1), rtol=1e-5)


ROW_SUMS = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 257), "float64")
    B = T.match_buffer(b, (n,), "float64")
    for i in T.parallel(n):
        B[i] = T.float64(0)
        for j in range(257):
            B[i] = B[i] + A[i, j]
"""


def test_reductions_inside_a_parallel_loop() -> None:
    a = np.random.default_rng(2).standard_normal((33, 257))
    b = np.zeros(33)
    kernel(ROW_SUMS)(a, b)
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-12)


ASSERTS = """
@T.prim_func
def main(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for i in T.parallel(100):
        assert A[i] >= T.float32(0), "negative input"
        B[i] = T.sqrt(A[i])
"""


@pytest.mark.parametrize("bad", [[0], [99], [50], [3, 97], list(range(100))])
def test_a_failed_assert_in_a_task_is_the_kernels_error(bad: list[int]) -> None:
    a = np.ones(100, "float32")
    a[bad] = -1
    with pytest.raises(TVMLiteError, match="assertion failed: negative input"):
        kernel(ASSERTS)(a, np.zeros(100, "float32"))
    b = np.zeros(100, "float32")
    kernel(ASSERTS)(np.full(100, 4, "float32"), b)  # and the pool still works
    np.testing.assert_array_equal(b, 2)


OUT_OF_BOUNDS = """
@T.prim_func
def main(a: T.handle, idx: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (16,), "float32")
    I = T.match_buffer(idx, (n,), "int64")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.parallel(n):
        B[i] = A[I[i]]
"""


@pytest.mark.parametrize("bad", [[5], [0, 39], list(range(40))])
def test_checked_build_reports_one_failing_index(bad: list[int]) -> None:
    idx = np.arange(40) % 16
    idx[bad] = 16 + np.arange(len(bad))  # each failing task has its own index
    fn = kernel(OUT_OF_BOUNDS, checked=True)
    with pytest.raises(TVMLiteError) as caught:
        fn(np.zeros(16, "float32"), idx, np.zeros(40, "float32"))
    message = str(caught.value)
    assert "out of bounds" in message
    # The message comes whole from one task: its index is one that failed.
    shown = int(message.split(" = ")[1].split(" ")[0])
    assert shown in idx[bad]


def test_many_threads_call_one_parallel_kernel() -> None:
    fn = kernel(SCALE)
    errors: list[str] = []
    barrier = threading.Barrier(8)

    def work(k: int) -> None:
        barrier.wait()
        for r in range(25):
            a = np.arange(501 + k * 7 + r, dtype="float32") * (k + 1)
            b = np.zeros_like(a)
            fn(a, b)
            if not np.array_equal(b, a * 2 + 1):
                errors.append(f"thread {k} call {r}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


GRAPH = """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_relu(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for io in T.parallel((n + T.int64(15)) // T.int64(16)):
            for ii in T.vectorized(T.int64(16)):
                if io * T.int64(16) + ii < n:
                    C[io * 16 + ii] = T.max(A[io * 16 + ii] + B[io * 16 + ii], T.float32(0))

    @R.function
    def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            z = R.call_tir(cls.add_relu, (x, y), out_sinfo=R.Tensor((n,), "float32"))
            R.output(z)
        return z
"""


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100003])
def test_graph_function_with_a_parallel_vectorized_kernel(n: int) -> None:
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    got = tvmlite.build(tvmlite.parse(GRAPH))["main"](x, y)
    np.testing.assert_array_equal(got, np.maximum(x + y, 0))


SCHEDULED = """
@T.prim_func
def main(A: T.Buffer((1000, 37), "float32"), B: T.Buffer((1000, 37), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(1000, 37):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vi, vj] * T.float32(2), T.float32(0))
"""


def test_loops_marked_by_a_schedule_run_on_the_pool() -> None:
    from tvmlite.tir import Schedule

    sch = Schedule(tvmlite.parse(SCHEDULED))
    i, j = sch.get_loops(sch.get_sblock("B"))
    _, inner = sch.split(j, factors=[None, 16])
    sch.parallel(i)
    sch.vectorize(inner)
    ex = tvmlite.build(sch.mod, cache=False)
    assert "@tvmlite_main.parallel(" in ex.llvm_ir()
    a = np.random.default_rng(4).standard_normal((1000, 37)).astype("float32")
    b = np.zeros_like(a)
    ex["main"](a, b)
    np.testing.assert_array_equal(b, np.maximum(a * 2, 0))
