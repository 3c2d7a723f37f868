"""Every primitive on small functions, against what TVM 0.27 prints for the same
schedule (schedule_expected.py). The verifier runs after every primitive
(debug_mask="all"), and every result must parse back to the same module."""

from collections.abc import Callable

import pytest
from schedule_expected import ARGMAX, CHAIN, EXPECTED, MATMUL, PAD, ROWSUM

import tvmlite
from tvmlite.tir import Schedule


def schedule(text: str) -> Schedule:
    return Schedule(tvmlite.parse(text), debug_mask="all")


def split_mm(s: Schedule) -> None:
    i, _, _ = s.get_loops(s.get_sblock("C"))
    s.split(i, factors=[None, 4])


def split_pred(s: Schedule) -> None:
    _, j, _ = s.get_loops(s.get_sblock("C"))
    s.split(j, factors=[3, None])


def fuse_mm(s: Schedule) -> None:
    i, j, _ = s.get_loops(s.get_sblock("C"))
    s.parallel(s.fuse(i, j))


def reorder_mm(s: Schedule) -> None:
    i, _, k = s.get_loops(s.get_sblock("C"))
    s.reorder(k, i)


def tile_mm(s: Schedule) -> None:
    b = s.get_sblock("C")
    i, j, k = s.get_loops(b)
    i0, i1 = s.split(i, [None, 2])
    j0, j1 = s.split(j, [None, 4])
    s.reorder(i0, j0, k, i1, j1)
    s.vectorize(j1)
    s.unroll(i1)
    s.parallel(s.fuse(i0, j0))
    s.decompose_reduction(b, k)


def inline_chain(s: Schedule) -> None:
    s.compute_inline(s.get_sblock("B"))


def rinline_chain(s: Schedule) -> None:
    s.reverse_compute_inline(s.get_sblock("C"))


def at_chain(s: Schedule) -> None:
    i, _ = s.get_loops(s.get_sblock("C"))
    s.compute_at(s.get_sblock("B"), i)


def rat_chain(s: Schedule) -> None:
    i, _ = s.get_loops(s.get_sblock("B"))
    s.reverse_compute_at(s.get_sblock("C"), i)


def cache_mm(s: Schedule) -> None:
    b = s.get_sblock("C")
    s.cache_read(b, 1, "global")
    s.cache_write(b, 0, "local")


def storage_chain(s: Schedule) -> None:
    b = s.get_sblock("B")
    s.set_scope(b, 0, "local")
    s.storage_align(b, 0, 0, 8, 1)


def layout_chain(s: Schedule) -> None:
    s.transform_layout(s.get_sblock("B"), ("write", 0), lambda i, j: (j // 3, i, j % 3))


def block_layout_chain(s: Schedule) -> None:
    s.transform_block_layout(s.get_sblock("C"), lambda i, j: (j, i))


def rfactor_sum(s: Schedule) -> None:
    _, k = s.get_loops(s.get_sblock("B"))
    _, k1 = s.split(k, [None, 4])
    s.rfactor(k1, 0)


def reindex_mm(s: Schedule) -> None:
    s.reindex(s.get_sblock("C"), ("write", 0))


def merge_chain(s: Schedule) -> None:
    b, c = s.get_sblock("B"), s.get_sblock("C")
    s.merge(s.get_loops(b)[0], s.get_loops(c)[0])


def unit_chain(s: Schedule) -> None:
    s.add_unit_loop(s.get_sblock("B"))


def annotate_chain(s: Schedule) -> None:
    b = s.get_sblock("B")
    i, _ = s.get_loops(b)
    s.annotate(i, "pragma_auto_unroll_max_step", 16)
    s.annotate(b, "meta_schedule.vectorize", 8)


def blockize_mm(s: Schedule) -> None:
    i, j, k = s.get_loops(s.get_sblock("C"))
    i0, i1 = s.split(i, [None, 2])
    j0, j1 = s.split(j, [None, 4])
    s.reorder(i0, j0, k, i1, j1)
    s.blockize(i1)


def padding(s: Schedule) -> None:
    b = s.get_sblock("P")
    i, _ = s.get_loops(b)
    s.decompose_padding(b, i)


def argmax_rfactor(s: Schedule) -> None:
    _, k = s.get_loops(s.get_sblock("argmax"))
    _, k1 = s.split(k, [None, 2])
    s.rfactor(k1, 0)


CASES: list[tuple[str, str, Callable[[Schedule], None]]] = [
    ("split", MATMUL, split_mm),
    ("split_pred", MATMUL, split_pred),
    ("fuse", MATMUL, fuse_mm),
    ("reorder", MATMUL, reorder_mm),
    ("tile", MATMUL, tile_mm),
    ("inline", CHAIN, inline_chain),
    ("rinline", CHAIN, rinline_chain),
    ("at", CHAIN, at_chain),
    ("rat", CHAIN, rat_chain),
    ("cache", MATMUL, cache_mm),
    ("storage", CHAIN, storage_chain),
    ("layout", CHAIN, layout_chain),
    ("block_layout", CHAIN, block_layout_chain),
    ("rfactor", ROWSUM, rfactor_sum),
    ("reindex", MATMUL, reindex_mm),
    ("merge", CHAIN, merge_chain),
    ("unit", CHAIN, unit_chain),
    ("annotate", CHAIN, annotate_chain),
    ("blockize", MATMUL, blockize_mm),
    ("padding", PAD, padding),
    ("argmax_rfactor", ARGMAX, argmax_rfactor),
]


@pytest.mark.parametrize(("name", "text", "apply"), CASES, ids=[c[0] for c in CASES])
def test_primitive_matches_tvm(name: str, text: str, apply: Callable[[Schedule], None]) -> None:
    sch = schedule(text)
    apply(sch)
    out = sch.mod.script()
    assert out.rstrip() == EXPECTED[name].rstrip()
    assert tvmlite.structural_equal(tvmlite.parse(out), sch.mod)


def test_trace_replays_every_case() -> None:
    """A recorded trace replayed on a fresh schedule of the same input gives the
    same module."""
    for _, text, apply in CASES:
        first = schedule(text)
        apply(first)
        again = schedule(text)
        first.trace.apply_to_schedule(again)
        assert tvmlite.structural_equal(again.mod, first.mod)
        assert str(again.trace) == str(first.trace)
