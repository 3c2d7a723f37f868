# ruff: noqa: E501  (TVMScript texts)
"""SimplifyIndices (lowering/tir/simplify_indices.py): after LowerBlocks, buffer
indices are written in the loop variables and simplified with the loops' ranges,
so a packed operand read at `v // 32`, `v % 32` of a split axis is read at the
loop variables themselves."""

from __future__ import annotations

import numpy as np

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import loads, stores
from tvmlite.dsl.module import IRModule
from tvmlite.tir import Schedule
from tvmlite.transform import LowerBlocks, SimplifyIndices

MATMUL = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 64), "float32"), C: T.Buffer((8, 64), "float32")):
    for i, j, k in T.grid(8, 64, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

SYMBOLIC = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi // T.int64(4) * T.int64(4) + vi % T.int64(4)] = A[vi] + T.float32(1)
"""


def packed_matmul() -> Schedule:
    sch = Schedule(IRModule({"main": tvmlite.parse(MATMUL)}))
    block = sch.get_sblock("C")
    reads = [r.buffer.name for r in sch.get(block).reads]
    packed = sch.cache_read(block, reads.index("B"), "global")
    sch.transform_layout(packed, ("write", 0), lambda k, j: (j // 32, k, j % 32))
    _, j, _ = sch.get_loops(block)
    sch.split(j, [None, 32])
    return sch


def test_split_axis_indices_become_loop_variables() -> None:
    func = SimplifyIndices().transform(LowerBlocks().transform(packed_matmul().mod["main"]))
    (load,) = [x for x in loads(func.body) if x.buffer.name == "B_global" and len(x.indices) == 3]
    assert [type(i) for i in load.indices] == [tir.Var, tir.Var, tir.Var]
    assert [i.name for i in load.indices] == ["j_0", "k", "j_1"]


def test_numerics_unchanged() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 4), "float32"), rng.standard_normal((4, 64), "float32")
    c = np.zeros((8, 64), "float32")
    tvmlite.build(packed_matmul().mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_identities_that_hold_for_any_range() -> None:
    func = SimplifyIndices().transform(LowerBlocks().transform(tvmlite.parse(SYMBOLIC)))
    (store,) = stores(func.body)
    (index,) = store.indices
    assert isinstance(index, tir.Var) and index.name == "i"  # true for any i >= 0 or < 0
    a = np.arange(7, dtype="float32")
    c = np.zeros(7, "float32")
    tvmlite.build(IRModule({"main": tvmlite.parse(SYMBOLIC)}))["main"](a, c)
    np.testing.assert_array_equal(c, a + 1)


def test_lowering_a_lowered_module_changes_nothing() -> None:
    """Indices already written in loop variables are left as they are: the
    canonical form of an index already simplified
    is not always the same expression (every benchmark workload changed)."""
    for text in (MATMUL, SYMBOLIC):
        lowered = tvmlite.lower(IRModule({"main": tvmlite.parse(text)}), "llvm")
        assert tvmlite.structural_equal(tvmlite.lower(lowered, "llvm"), lowered)
