"""PartitionLoops: a loop whose last step is guarded (`T.where(k_0 * 16 + k_1 <
K)` from a split that does not divide) runs its whole steps without the test
and the guarded tail after them; tests of another form stay. Checked on the
lowered loops and on the numerics, for constant and symbolic extents."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import uses
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.tir import Schedule
from tvmlite.transform import PassContext

ROW_SUM = """
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(var_x: T.handle, var_y: T.handle):
        T.func_attr({"tirx.noalias": True})
        n, m = T.int64(), T.int64()
        x = T.match_buffer(var_x, (n, m))
        y = T.match_buffer(var_y, (n,))
        for i, k in T.grid(n, m):
            with T.sblock("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0.0)
                y[vi] = y[vi] + x[vi, vk]
"""

SCALE = """
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(var_x: T.handle, var_y: T.handle):
        T.func_attr({"tirx.noalias": True})
        n, m = T.int64(), T.int64()
        x = T.match_buffer(var_x, (n, m))
        y = T.match_buffer(var_y, (n, m))
        for i, j in T.grid(n, m):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj] * T.float32(2.0)
"""


def partial_sums(sch: Schedule) -> None:
    _, k = sch.get_loops("sum")
    _, k1 = sch.split(k, [None, 16])
    rf = sch.rfactor(k1, factor_axis=1)
    sch.vectorize(sch.get_loops(rf)[-1])
    sch.decompose_reduction(rf, sch.get_loops(rf)[1])


def tiles(sch: Schedule) -> None:
    i, j = sch.get_loops("B")
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, i1, j1)
    sch.parallel(i0)
    sch.vectorize(j1)


def fused_tiles(sch: Schedule) -> None:
    # The guards are on parts of a fused index (`f // J * 4 + i_1 < n`): the
    # fused loop stays whole.
    i, j = sch.get_loops("B")
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, i1, j1)
    sch.parallel(sch.fuse(i0, j0))
    sch.vectorize(j1)


def scheduled(text: str, apply: Callable[[Schedule], None]) -> tvmlite.IRModule:
    sch = Schedule(tvmlite.parse(text))
    sch.work_on("main")
    apply(sch)
    return sch.mod


class _Guards(StmtExprVisitor):
    """Every loop, in order, and whether its body holds a guard testing its var."""

    def __init__(self) -> None:
        self.loops: list[tuple[tir.For, bool]] = []

    def visit_For(self, s: tir.For) -> None:
        tests = _Tests()
        tests.visit_stmt(s.body)
        self.loops.append((s, any(uses(c, {s.loop_var}) for c in tests.conditions)))
        super().visit_For(s)


class _Tests(StmtExprVisitor):
    def __init__(self) -> None:
        self.conditions: list[tir.PrimExpr] = []

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        self.conditions.append(s.condition)
        super().visit_IfThenElse(s)


def lowered_loops(mod: tvmlite.IRModule, name: str) -> list[bool]:
    """For each lowered loop named `name`, in order: whether it holds a guard on it."""
    low = tvmlite.lower(mod)
    guards = _Guards()
    guards.visit_stmt(low["main"].body)
    return [guarded for loop, guarded in guards.loops if loop.loop_var.name == name]


def test_a_guarded_reduction_runs_its_whole_vectors_without_the_test() -> None:
    mod = scheduled(ROW_SUM, partial_sums)
    # k_0 runs the whole vectors unguarded, then the last partial one guarded.
    assert lowered_loops(mod, "k_0") == [False, True]
    ex = tvmlite.build(mod)
    for n, m in ((1, 1), (3, 16), (2, 197), (5, 4001), (1, 32)):
        x = np.random.default_rng(m).standard_normal((n, m)).astype("float32")
        y = np.zeros(n, "float32")
        ex["main"](x, y)
        np.testing.assert_allclose(y, x.sum(1), rtol=1e-4, atol=1e-5)


def test_constant_extents_partition_into_constant_loops() -> None:
    text = ROW_SUM.replace("        n, m = T.int64(), T.int64()\n", "")
    text = text.replace("(n, m)", "(T.int64(3), T.int64(197))").replace("(n,)", "(T.int64(3),)")
    mod = scheduled(text.replace("T.grid(n, m)", "T.grid(T.int64(3), T.int64(197))"), partial_sums)
    low = tvmlite.lower(mod)
    printed = low.script()
    assert "range(T.int64(12))" in printed and "range(T.int64(12), T.int64(13))" in printed
    x = np.random.default_rng(0).standard_normal((3, 197)).astype("float32")
    y = np.zeros(3, "float32")
    tvmlite.build(mod)["main"](x, y)
    np.testing.assert_allclose(y, x.sum(1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1), (4, 16), (5, 17), (13, 100), (64, 64)])
def test_two_guarded_axes(shape: tuple[int, int]) -> None:
    mod = scheduled(SCALE, tiles)
    assert lowered_loops(mod, "j_0") == [False, True]
    assert lowered_loops(mod, "i_1") == [False, True, False, True]
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    y = np.zeros(shape, "float32")
    tvmlite.build(mod)["main"](x, y)
    np.testing.assert_array_equal(y, x * 2)


def test_a_guard_on_a_fused_index_stays() -> None:
    mod = scheduled(SCALE, fused_tiles)
    assert lowered_loops(mod, "i_0_j_0_fused") == [True]
    x = np.random.default_rng(0).standard_normal((5, 7)).astype("float32")
    y = np.zeros((5, 7), "float32")
    tvmlite.build(mod)["main"](x, y)
    np.testing.assert_array_equal(y, x * 2)


def test_the_pass_can_be_disabled() -> None:
    mod = scheduled(ROW_SUM, partial_sums)
    with PassContext(disabled_pass=["PartitionLoops"]):
        assert lowered_loops(mod, "k_0") == [True]
