"""Handles follow what they name across primitives, and say clearly when a
primitive removed it; the trace prints as Python and replays."""

import pytest
from schedule_expected import CHAIN, MATMUL

import tvmlite
from tvmlite.dsl import tir
from tvmlite.tir import BlockRV, LoopRV, Schedule, ScheduleError


def schedule(text: str) -> Schedule:
    return Schedule(tvmlite.parse(text), debug_mask="all")


def test_loop_handles_survive_reorder_and_kinds() -> None:
    s = schedule(MATMUL)
    b = s.get_sblock("C")
    i, j, k = s.get_loops(b)
    s.reorder(k, j)
    s.parallel(i)
    assert [lp.loop_var.name for lp in map(s.get, s.get_loops(b))] == ["i", "k", "j"]
    assert s.get(i).kind == tir.PARALLEL
    assert s.get(k).loop_var.name == "k"


def test_split_removes_the_split_loop() -> None:
    s = schedule(MATMUL)
    i, _, _ = s.get_loops(s.get_sblock("C"))
    i0, i1 = s.split(i, [None, 4])
    assert isinstance(i0, LoopRV) and s.get(i1).loop_var.name == "i_1"
    with pytest.raises(ScheduleError, match=r"loop 'i' \(LoopRV\(l1\)\) no longer exists: split"):
        s.get(i)
    with pytest.raises(ScheduleError, match="fuse removed it"):
        s.fuse(i0, i1)
        s.get(i0)


def test_block_handle_follows_rebuilt_block() -> None:
    s = schedule(MATMUL)
    b = s.get_sblock("C")
    i, j, k = s.get_loops(b)
    s.cache_write(b, 0, "global")
    init = s.decompose_reduction(b, k)
    assert isinstance(init, BlockRV)
    assert s.get(b).name == "C_update"
    assert s.get(init).name == "C_init"
    assert s.get(b).init is None


def test_inlined_block_handle_is_removed() -> None:
    s = schedule(CHAIN)
    b = s.get_sblock("B")
    c = s.get_sblock("C")
    s.compute_inline(b)
    with pytest.raises(ScheduleError, match="block 'B'.*no longer exists: compute_inline removed"):
        s.get_loops(b)
    assert len(s.get_loops(c)) == 2


def test_handles_from_another_schedule_are_refused() -> None:
    a, b = schedule(CHAIN), schedule(CHAIN)
    block = a.get_sblock("B")
    b.get_sblock("B")
    other = b.get_sblock("C")
    with pytest.raises(ScheduleError, match="expected a loop handle"):
        a.parallel(other)  # type: ignore[arg-type]
    assert a.get(block).name == "B"


def test_navigation() -> None:
    s = schedule(CHAIN)
    b, c = s.get_sblock("B"), s.get_sblock("C")
    assert [s.get(x).name for x in s.get_consumers(b)] == ["C"]
    assert [s.get(x).name for x in s.get_producers(c)] == ["B"]
    assert s.get_producers(b) == []
    i, _ = s.get_loops(b)
    assert [s.get(x).name for x in s.get_child_blocks(i)] == ["B"]


def test_trace_prints_as_python_and_runs() -> None:
    s = schedule(MATMUL)
    b = s.get_sblock("C")
    i, j, k = s.get_loops(b)
    i0, i1 = s.split(i, [None, 2])
    s.reorder(i0, j, k, i1)
    s.parallel(i0)
    s.decompose_reduction(b, k)
    text = str(s.trace)
    assert text.splitlines() == [
        "# from tvmlite import tir",
        "def apply_trace(sch: tir.Schedule) -> None:",
        '  b0 = sch.get_sblock(name="C", func_name="main")',
        "  l1, l2, l3 = sch.get_loops(block=b0)",
        "  l4, l5 = sch.split(loop=l1, factors=[None, 2], preserve_unit_iters=True,"
        " disable_predication=False)",
        "  sch.reorder(l4, l2, l3, l5)",
        "  sch.parallel(loop=l4)",
        "  b6 = sch.decompose_reduction(block=b0, loop=l3)",
    ]
    namespace: dict[str, object] = {"tir": tvmlite.tir}
    exec(text, namespace)  # noqa: S102 - the trace is our own output
    again = schedule(MATMUL)
    namespace["apply_trace"](again)  # type: ignore[operator]
    assert tvmlite.structural_equal(again.mod, s.mod)


def test_get_block_is_get_sblock() -> None:
    s = schedule(CHAIN)
    assert s.get(s.get_block("B")) is s.get(s.get_sblock("B"))
    assert str(s.trace).count("sch.get_sblock(") == 2


def test_show_prints_module_and_trace(capsys: pytest.CaptureFixture[str]) -> None:
    s = schedule(CHAIN)
    i, _ = s.get_loops(s.get_sblock("B"))
    s.parallel(i)
    s.show()
    out = capsys.readouterr().out
    assert "for i in T.parallel(T.int64(4)):" in out
    assert "  sch.parallel(loop=l1)" in out
