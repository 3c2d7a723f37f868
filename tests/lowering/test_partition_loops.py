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


class _Loops(StmtExprVisitor):
    """The guards of a lowered function and its vector loops' extents."""

    def __init__(self) -> None:
        self.guards: list[tir.PrimExpr] = []
        self.vectors: list[int | None] = []  # None: a trip count known at run time

    def visit_For(self, s: tir.For) -> None:
        if s.kind == tir.VECTORIZED:
            self.vectors.append(s.extent.value if isinstance(s.extent, tir.IntImm) else None)
        super().visit_For(s)

    def visit_IfThenElse(self, s: tir.IfThenElse) -> None:
        self.guards.append(s.condition)
        super().visit_IfThenElse(s)


def lowered(mod: tvmlite.IRModule) -> _Loops:
    loops = _Loops()
    loops.visit_stmt(tvmlite.lower(mod)["main"].body)
    return loops


def test_a_guarded_reduction_runs_its_whole_vectors_without_the_test() -> None:
    loops = lowered(scheduled(ROW_SUM, partial_sums))
    # The init, the whole steps (16 lanes), the last step (the lanes left).
    assert loops.guards == [] and loops.vectors == [16, 16, None]
    ex = tvmlite.build(scheduled(ROW_SUM, partial_sums))
    for n, m in ((1, 1), (3, 16), (2, 197), (5, 4001), (1, 32)):
        x = np.random.default_rng(m).standard_normal((n, m)).astype("float32")
        y = np.zeros(n, "float32")
        ex["main"](x, y)
        np.testing.assert_allclose(y, x.sum(1), rtol=1e-4, atol=1e-5)


def test_constant_extents_partition_into_constant_loops() -> None:
    text = ROW_SUM.replace("        n, m = T.int64(), T.int64()\n", "")
    text = text.replace("(n, m)", "(T.int64(3), T.int64(197))").replace("(n,)", "(T.int64(3),)")
    mod = scheduled(text.replace("T.grid(n, m)", "T.grid(T.int64(3), T.int64(197))"), partial_sums)
    printed = tvmlite.lower(mod).script()
    assert "range(T.int64(12))" in printed and "range(T.int64(12), T.int64(13))" in printed
    assert "if " not in printed
    x = np.random.default_rng(0).standard_normal((3, 197)).astype("float32")
    y = np.zeros(3, "float32")
    tvmlite.build(mod)["main"](x, y)
    np.testing.assert_allclose(y, x.sum(1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("apply", "vectors"), [(tiles, [16, None]), (fused_tiles, [None])], ids=["tiles", "fused"]
)
@pytest.mark.parametrize("shape", [(1, 1), (4, 16), (5, 17), (13, 100), (64, 64)])
def test_guarded_tiles(
    apply: Callable[[Schedule], None], vectors: list[int | None], shape: tuple[int, int]
) -> None:
    """Tiles of 4 rows by 16 columns over (n, m): the rows of the last tile and
    the lanes of the last column tile are cut short, no test is left. Split
    apart, the whole column tiles keep 16 lanes; fused with the rows (the guard
    on `f % J * 16 + l`), every vector loop counts its lanes at run time."""
    mod = scheduled(SCALE, apply)
    loops = lowered(mod)
    assert loops.guards == [] and sorted(set(loops.vectors), key=str) == vectors
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    y = np.zeros(shape, "float32")
    tvmlite.build(mod)["main"](x, y)
    np.testing.assert_array_equal(y, x * 2)


EVERY_OTHER = """
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((T.int64(4), T.int64(48)), "float32"), y: T.Buffer((T.int64(4), T.int64(48)), "float32")):
        for i in range(T.int64(4)):
            for j in T.vectorized(T.int64(48)):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.where(j % T.int64(3) < T.int64(2))
                    y[vi, vj] = x[vi, vj]
"""


def test_a_guard_of_another_form_stays() -> None:
    """`j % 3 < 2` bounds no loop: the test stays, the result is right."""
    mod = tvmlite.parse(EVERY_OTHER)
    assert len(lowered(mod).guards) == 1
    x = np.random.default_rng(0).standard_normal((4, 48)).astype("float32")
    y = np.zeros((4, 48), "float32")
    tvmlite.build(mod)["main"](x, y)
    np.testing.assert_array_equal(y, np.where(np.arange(48) % 3 < 2, x, 0))


def test_the_pass_can_be_disabled() -> None:
    mod = scheduled(ROW_SUM, partial_sums)
    with PassContext(disabled_pass=["PartitionLoops"]):
        assert len(lowered(mod).guards) == 1
