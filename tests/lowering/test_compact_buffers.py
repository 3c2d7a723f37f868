# ruff: noqa: E501  (TVMScript texts)
"""CompactBuffers (lowering/tir/compact_buffers.py): an intermediate buffer shrinks
to the tile its innermost enclosing loop touches and is allocated in that loop;
buffers it cannot follow keep their shape. Numerics are unchanged."""

from __future__ import annotations

import numpy as np

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.tir import Schedule
from tvmlite.transform import CompactBuffers, LowerBlocks

MATMUL = """
@T.prim_func
def main(A: T.Buffer((10, 6), "float32"), B: T.Buffer((6, 8), "float32"), C: T.Buffer((10, 8), "float32")):
    for i, j, k in T.grid(10, 8, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

GATHER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), idx: T.Buffer((4,), "int32"), C: T.Buffer((4,), "float32")):
    tmp = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("copy"):
            vi = T.axis.remap("S", [i])
            tmp[vi] = A[vi] * T.float32(2)
    for i in range(4):
        with T.block("gather"):
            vi = T.axis.remap("S", [i])
            C[vi] = tmp[idx[vi]]
"""


class _Allocs(StmtExprVisitor):
    """Each allocation with the loop variables around it."""

    def __init__(self) -> None:
        self.loops: list[str] = []
        self.found: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {}

    def visit_For(self, s: tir.For) -> None:
        self.loops.append(s.loop_var.name)
        super().visit_For(s)
        self.loops.pop()

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> None:
        shape = tuple(int(d.value) for d in s.buffer.shape)
        self.found[s.buffer.name] = (shape, tuple(self.loops))


def allocations(func: tir.PrimFunc) -> dict[str, tuple[tuple[int, ...], tuple[str, ...]]]:
    visitor = _Allocs()
    visitor.visit_stmt(CompactBuffers().transform(LowerBlocks().transform(func)).body)
    return visitor.found


def tiled_matmul() -> Schedule:
    sch = Schedule(IRModule({"main": tvmlite.parse(MATMUL)}))
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 4])  # 10 = 3 * 4 with a predicate
    sch.reorder(i0, j, k, i1)
    local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(local, j)
    sch.decompose_reduction(block, k)
    return sch


def test_accumulator_tile_is_compacted_into_its_loop() -> None:
    sch = tiled_matmul()
    assert 'C_local = T.alloc_buffer((10, 8), scope="local")' in sch.mod.script()
    shape, loops = allocations(sch.mod["main"])["C_local"]
    assert shape == (4, 1)
    assert loops == ("i_0", "j")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((10, 6), "float32"), rng.standard_normal((6, 8), "float32")
    c = np.zeros((10, 8), "float32")
    tvmlite.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_buffer_read_at_data_dependent_indices_keeps_its_shape() -> None:
    func = tvmlite.parse(GATHER)
    assert allocations(func)["tmp"] == ((8,), ())
    a = np.arange(8, dtype="float32")
    idx = np.array([7, 0, 3, 3], "int32")
    c = np.zeros(4, "float32")
    tvmlite.build(IRModule({"main": func}))["main"](a, idx, c)
    np.testing.assert_array_equal(c, 2 * a[idx])


def test_buffer_used_across_the_whole_function_keeps_its_shape() -> None:
    sch = Schedule(IRModule({"main": tvmlite.parse(MATMUL)}))
    sch.cache_write(sch.get_sblock("C"), 0, "local")  # written and copied at the top level
    assert allocations(sch.mod["main"])["C_local"] == ((10, 8), ())
