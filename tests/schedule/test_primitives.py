"""Every primitive on small functions, against what TVM 0.27 prints for the same
schedule (schedule_expected.py). The verifier runs after every primitive
(debug_mask="all"), every result must parse back to the same module, and
builds to code that computes what the unscheduled module computes."""

from collections.abc import Callable

import numpy as np
import pytest
from schedule_expected import (
    ARGMAX,
    CHAIN,
    CHAIN3,
    EINSUM,
    EXPECTED,
    MATMUL,
    OFFSET,
    PAD,
    REDUCE_EPILOGUE,
    ROWSUM,
)

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


def rfactor_whole_sum(s: Schedule) -> None:
    _, k = s.get_loops(s.get_sblock("B"))
    s.rfactor(k, 0)


def rfactor_whole_argmax(s: Schedule) -> None:
    _, k = s.get_loops(s.get_sblock("argmax"))
    s.rfactor(k, 0)


def split_offset(s: Schedule) -> None:
    _, j = s.get_loops(s.get_sblock("C"))
    s.split(j, [None, 4])


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


def unannotate_chain(s: Schedule) -> None:
    b = s.get_sblock("B")
    i, _ = s.get_loops(b)
    s.annotate(i, "pragma_auto_unroll_max_step", 16)
    s.annotate(b, "meta_schedule.vectorize", 8)
    s.unannotate(i, "pragma_auto_unroll_max_step")


def param_layout_chain(s: Schedule) -> None:
    s.transform_layout(s.get_sblock("B"), ("read", 0), lambda i, j: (j, i))


def split_layout_chain(s: Schedule) -> None:
    s.transform_block_layout(s.get_sblock("C"), lambda i, j: (j // 3, i, j % 3))


def fused_layout_chain(s: Schedule) -> None:
    index = lambda i, j: i * 6 + j  # noqa: E731
    s.transform_block_layout(
        s.get_sblock("C"), lambda i, j: (index(i, j) // 12, index(i, j) % 12 // 3, index(i, j) % 3)
    )


def reduce_layout_mm(s: Schedule) -> None:
    s.transform_block_layout(s.get_sblock("C"), lambda i, j, k: (i * 8 + j, k))


def cache_at_mm(s: Schedule) -> None:
    b = s.get_sblock("C")
    i, j, k = s.get_loops(b)
    i0, i1 = s.split(i, [None, 4])
    s.reorder(i0, k, i1)
    a = s.cache_read(b, 0, "local", consumer_blocks=[b])
    s.compute_at(a, k)
    w = s.cache_write(b, 0, "local")
    s.reverse_compute_at(w, i0)


def at_after_split(s: Schedule) -> None:
    # B's loop is split with a predicate; computed at C's rows it needs none.
    s.split(s.get_loops(s.get_sblock("B"))[1], [None, 4])
    s.compute_at(s.get_sblock("B"), s.get_loops(s.get_sblock("C"))[0])


def cache_write_nested(s: Schedule) -> None:
    # C is computed inside D's row loop: its copy-back goes there too, before D.
    s.compute_at(s.get_sblock("C"), s.get_loops(s.get_sblock("D"))[0], preserve_unit_loops=True)
    s.cache_write(s.get_sblock("C"), 0, "global")


def cache_write_compact(s: Schedule) -> None:
    # The block writes rows 1..4 only: the cache holds just those.
    s.cache_write(s.get_sblock("C"), 0, "local")


def cache_read_nested(s: Schedule) -> None:
    s.compute_at(s.get_sblock("B"), s.get_loops(s.get_sblock("C"))[0])
    s.cache_read(s.get_sblock("C"), 0, "local")


def reindex_transposed(s: Schedule) -> None:
    s.reindex(s.get_sblock("C"), ("read", 1))


def reindex_offset(s: Schedule) -> None:
    s.reindex(s.get_sblock("C"), ("write", 0))


def layout_in_context(s: Schedule) -> None:
    s.transform_layout(s.get_sblock("C"), ("write", 0), lambda i: (i // 4, i % 4))


def blockize_argmax(s: Schedule) -> None:
    _, k = s.get_loops(s.get_sblock("argmax"))
    s.blockize(k)


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


def pad_einsum(s: Schedule) -> None:
    s.pad_einsum(s.get_sblock("C"), [4, 4, 1])


def pad_einsum_reduction(s: Schedule) -> None:
    s.pad_einsum(s.get_sblock("C"), [1, 4, 2])


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
    ("rfactor_whole", ROWSUM, rfactor_whole_sum),
    ("argmax_rfactor_whole", ARGMAX, rfactor_whole_argmax),
    ("split_offset", OFFSET, split_offset),
    ("reindex", MATMUL, reindex_mm),
    ("merge", CHAIN, merge_chain),
    ("unit", CHAIN, unit_chain),
    ("annotate", CHAIN, annotate_chain),
    ("unannotate", CHAIN, unannotate_chain),
    ("param_layout", CHAIN, param_layout_chain),
    ("split_layout", CHAIN, split_layout_chain),
    ("fused_layout", CHAIN, fused_layout_chain),
    ("reduce_layout", MATMUL, reduce_layout_mm),
    ("cache_at", MATMUL, cache_at_mm),
    ("at_after_split", CHAIN, at_after_split),
    ("cache_write_nested", CHAIN3, cache_write_nested),
    ("cache_write_compact", OFFSET, cache_write_compact),
    ("cache_read_nested", CHAIN, cache_read_nested),
    ("reindex_transposed", MATMUL, reindex_transposed),
    ("reindex_offset", OFFSET, reindex_offset),
    ("layout_in_context", REDUCE_EPILOGUE, layout_in_context),
    ("blockize_argmax", ARGMAX, blockize_argmax),
    ("blockize", MATMUL, blockize_mm),
    ("padding", PAD, padding),
    ("argmax_rfactor", ARGMAX, argmax_rfactor),
    ("pad_einsum", EINSUM, pad_einsum),
    ("pad_einsum_reduction", EINSUM, pad_einsum_reduction),
]


@pytest.mark.parametrize(("name", "text", "apply"), CASES, ids=[c[0] for c in CASES])
def test_primitive_matches_tvm(name: str, text: str, apply: Callable[[Schedule], None]) -> None:
    sch = schedule(text)
    apply(sch)
    out = sch.mod.script()
    assert out.rstrip() == EXPECTED[name].rstrip()
    assert tvmlite.structural_equal(tvmlite.parse(out), sch.mod)


def test_trace_replays_every_case() -> None:
    """A recorded trace replayed on a fresh schedule of the same input, and the
    trace printed as Python and run, give the same module."""
    for _, text, apply in CASES:
        first = schedule(text)
        apply(first)
        again = schedule(text)
        first.trace.apply_to_schedule(again)
        assert tvmlite.structural_equal(again.mod, first.mod)
        assert str(again.trace) == str(first.trace)
        namespace: dict[str, object] = {"tir": tvmlite.tir}
        exec(str(first.trace), namespace)  # noqa: S102 - the trace is our own output
        printed = schedule(text)
        namespace["apply_trace"](printed)  # type: ignore[operator]
        assert tvmlite.structural_equal(printed.mod, first.mod)


# Cases that change a parameter's layout take that argument transformed.
ARGUMENT_LAYOUTS: dict[str, dict[int, Callable[[np.ndarray], np.ndarray]]] = {
    "param_layout": {0: lambda a: np.ascontiguousarray(a.T)},
    "layout_in_context": {1: lambda a: a.reshape(1, 4)},
}


def random_arguments(mod: tvmlite.IRModule) -> list[np.ndarray]:
    func = mod["main"]
    rng = np.random.default_rng(0)
    out = []
    for _, buffer in func.buffer_map:
        shape = tuple(int(s.value) for s in buffer.shape)
        out.append(rng.standard_normal(shape).astype(buffer.dtype))
    return out


@pytest.mark.parametrize(("name", "text", "apply"), CASES, ids=[c[0] for c in CASES])
def test_scheduled_module_computes_the_same(
    name: str, text: str, apply: Callable[[Schedule], None]
) -> None:
    sch = schedule(text)
    apply(sch)
    plain = random_arguments(tvmlite.parse(text))
    scheduled = [ARGUMENT_LAYOUTS.get(name, {}).get(k, np.copy)(a) for k, a in enumerate(plain)]
    before = [np.copy(a) for a in plain]
    tvmlite.build(tvmlite.parse(text))["main"](*plain)
    assert any(not np.array_equal(a, b) for a, b in zip(plain, before, strict=True))
    tvmlite.build(sch.mod)["main"](*scheduled)
    for k, (want, got) in enumerate(zip(plain, scheduled, strict=True)):
        want = ARGUMENT_LAYOUTS.get(name, {}).get(k, np.copy)(want)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
