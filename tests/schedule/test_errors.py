"""Each check a primitive makes raises ScheduleError (a TVMLiteError) naming the
block or loop, and leaves the module, the handles and the trace as they were."""

import re
from collections.abc import Callable

import pytest
from schedule_expected import (
    ARGMAX,
    CHAIN,
    CHAIN3,
    EINSUM,
    MATMUL,
    OFFSET,
    PAD,
    REDUCE_EPILOGUE,
    ROWSUM,
)
from symbolic_expected import ODD_BATCH_MATMUL

import tvmlite
from tvmlite.tir import Schedule, ScheduleError


def loops(s: Schedule, block: str) -> list:
    return s.get_loops(s.get_sblock(block))


def split_too_small(s: Schedule) -> None:
    s.split(loops(s, "C")[1], factors=[2, 3])


def split_two_none(s: Schedule) -> None:
    s.split(loops(s, "C")[1], factors=[None, None])


def fuse_gap(s: Schedule) -> None:
    i, _, k = loops(s, "C")
    s.fuse(i, k)


def reorder_two_nests(s: Schedule) -> None:
    s.reorder(loops(s, "C")[1], loops(s, "B")[0])


def vectorize_reduction(s: Schedule) -> None:
    s.vectorize(loops(s, "C")[2])


def parallel_reduction(s: Schedule) -> None:
    s.parallel(loops(s, "B")[1])


def vectorize_after_decompose(s: Schedule) -> None:
    b = s.get_sblock("C")
    _, j, k = s.get_loops(b)
    s.reorder(k, j)
    s.decompose_reduction(b, k)
    s.vectorize(j)


def inline_output(s: Schedule) -> None:
    s.compute_inline(s.get_sblock("C"))


def inline_reduction(s: Schedule) -> None:
    s.compute_inline(s.get_sblock("B"))


def reverse_inline_after_reduction(s: Schedule) -> None:
    s.reverse_compute_inline(s.get_sblock("C"))


def compute_at_own_loop(s: Schedule) -> None:
    s.compute_at(s.get_sblock("B"), loops(s, "B")[0])


def compute_at_output(s: Schedule) -> None:
    s.compute_at(s.get_sblock("C"), loops(s, "B")[0])


def reverse_at_missing_producer(s: Schedule) -> None:
    s.reverse_compute_at(s.get_sblock("D"), loops(s, "B")[0])


def rfactor_spatial(s: Schedule) -> None:
    s.rfactor(loops(s, "B")[0], 0)


def decompose_spatial(s: Schedule) -> None:
    s.decompose_reduction(s.get_sblock("B"), loops(s, "B")[0])


def set_scope_param(s: Schedule) -> None:
    s.set_scope(s.get_sblock("C"), 0, "local")


def set_scope_unknown(s: Schedule) -> None:
    s.set_scope(s.get_sblock("B"), 0, "nowhere")


def storage_align_axis(s: Schedule) -> None:
    s.storage_align(s.get_sblock("B"), 0, 7, 16, 1)


def cache_read_index(s: Schedule) -> None:
    s.cache_read(s.get_sblock("C"), 5, "global")


def unknown_block(s: Schedule) -> None:
    s.get_sblock("no_such_block")


def layout_arity(s: Schedule) -> None:
    s.transform_layout(s.get_sblock("B"), ("write", 0), lambda i: (i,))


def unannotate_missing(s: Schedule) -> None:
    s.unannotate(s.get_sblock("B"), "no_such_key")


def blockize_mixed(s: Schedule) -> None:
    i, j, k = loops(s, "C")
    k0, k1 = s.split(k, [None, 3])
    s.reorder(k0, i, k1, j)
    s.blockize(i)


def padding_not_a_pad(s: Schedule) -> None:
    b = s.get_sblock("C")
    s.decompose_padding(b, s.get_loops(b)[0])


def rfactor_bad_identity(s: Schedule) -> None:
    _, k = loops(s, "argmax")
    _, k1 = s.split(k, [None, 2])
    s.rfactor(k1, 0)


def block_layout_not_affine(s: Schedule) -> None:
    s.transform_block_layout(s.get_sblock("C"), lambda i, j: (i + j, j))


def block_layout_not_bijective(s: Schedule) -> None:
    s.transform_block_layout(s.get_sblock("C"), lambda i, j: (i // 2, j))


def block_layout_mixed_kinds(s: Schedule) -> None:
    s.transform_block_layout(s.get_sblock("C"), lambda i, j, k: (i * 8 + k, j))


def block_layout_reordered_loops(s: Schedule) -> None:
    i, j = loops(s, "C")
    s.reorder(j, i)
    s.transform_block_layout(s.get_sblock("C"), lambda i, j: (j, i))


def block_layout_arity(s: Schedule) -> None:
    s.transform_block_layout(s.get_sblock("C"), lambda i: (i,))


def layout_holes(s: Schedule) -> None:
    s.transform_layout(s.get_sblock("B"), ("write", 0), lambda i, j: (i * 2, j))


def layout_padding(s: Schedule) -> None:
    s.transform_layout(s.get_sblock("B"), ("write", 0), lambda i, j: (i, j // 4, j % 4))


def layout_dependent_outputs(s: Schedule) -> None:
    s.transform_layout(s.get_sblock("B"), ("write", 0), lambda i, j: (i // 2, i, j))


def unroll_removed_loop(s: Schedule) -> None:
    i = loops(s, "C")[0]
    s.split(i, [None, 2])
    s.unroll(i)


def vectorize_fused_loop(s: Schedule) -> None:
    i, j = loops(s, "C")
    s.fuse(i, j)
    s.vectorize(j)


def get_loops_inlined(s: Schedule) -> None:
    b = s.get_sblock("B")
    s.compute_inline(b)
    s.get_loops(b)


def get_producers_inlined(s: Schedule) -> None:
    b = s.get_sblock("B")
    s.compute_inline(b)
    s.get_producers(b)


def get_consumers_inlined(s: Schedule) -> None:
    b = s.get_sblock("B")
    s.compute_inline(b)
    s.get_consumers(b)


def get_child_blocks_fused(s: Schedule) -> None:
    i, j, _ = loops(s, "C")
    s.fuse(i, j)
    s.get_child_blocks(i)


def split_zero(s: Schedule) -> None:
    s.split(loops(s, "C")[1], factors=[0, None])


def reorder_twice(s: Schedule) -> None:
    i, _, _ = loops(s, "C")
    s.reorder(i, i)


def merge_depths(s: Schedule) -> None:
    s.merge(loops(s, "B")[0], loops(s, "C")[1])


def decompose_under_repeat(s: Schedule) -> None:
    # B is computed again for every row of C: its init must stay inside that loop.
    s.reverse_compute_at(s.get_sblock("B"), loops(s, "C")[0], preserve_unit_loops=True)
    s.decompose_reduction(s.get_sblock("B"), loops(s, "B")[0])


def merge_twice(s: Schedule) -> None:
    s.merge(loops(s, "B")[0], loops(s, "B")[0])


def merge_reversed(s: Schedule) -> None:
    s.merge(loops(s, "C")[0], loops(s, "B")[0])


def merge_past_a_reader(s: Schedule) -> None:
    # B's nest would move to D's place, after C, which reads B.
    s.merge(loops(s, "B")[0], loops(s, "D")[0])


def reverse_inline_partial(s: Schedule) -> None:
    # C reads rows 1..4 of the cache only: inlined into the copy it would write rows 0 and 5.
    s.cache_read(s.get_sblock("C"), 0, "shared")
    s.reverse_compute_inline(s.get_sblock("C"))


def reindex_updated(s: Schedule) -> None:
    s.decompose_reduction(s.get_sblock("B"), loops(s, "B")[1])
    s.reindex(s.get_sblock("B_update"), ("read", 0))


def reindex_in_nest(s: Schedule) -> None:
    s.compute_at(s.get_sblock("B"), loops(s, "C")[0])
    s.reindex(s.get_sblock("C"), ("read", 0))


def reverse_at_before_consumer(s: Schedule) -> None:
    s.reverse_compute_at(s.get_sblock("B"), loops(s, "D")[0])


def compute_at_predicated(s: Schedule) -> None:
    # k splits into 8 * 1 * 4 > 8 iterations: the predicate keeps the sums right.
    _, k = loops(s, "B")
    s.split(k, [8, 1, 4])
    s.rfactor(loops(s, "B")[2], 1)
    s.reverse_compute_at(s.get_sblock("B_rf"), loops(s, "B")[0])


def rfactor_shared_loop(s: Schedule) -> None:
    # The k_0 loop the rfactor block leaves behind also computes the cache of A.
    _, k = loops(s, "B")
    k0, k1 = s.split(k, [None, 4])
    s.compute_at(s.cache_read(s.get_sblock("B"), 0, "local"), k0)
    s.rfactor(k1, 0)


def rfactor_after_producer(s: Schedule) -> None:
    # A copy of A computed first under i: the rfactor block would run before it.
    s.compute_at(s.cache_read(s.get_sblock("B"), 0, "global"), loops(s, "B")[0])
    s.rfactor(loops(s, "B")[1], 0)


def merge_init_and_body(s: Schedule) -> None:
    i, k = loops(s, "B")
    s.blockize(s.fuse(i, k))
    s.merge(loops(s, "B_init")[0], loops(s, "B")[0])


def cache_write_index(s: Schedule) -> None:
    s.cache_write(s.get_sblock("C"), 1, "global")


def cache_write_scope(s: Schedule) -> None:
    s.cache_write(s.get_sblock("C"), 0, "nowhere")


def compute_at_breaks_dependence(s: Schedule) -> None:
    # C reads B before D's loop runs: B cannot move under it.
    s.compute_at(s.get_sblock("B"), loops(s, "D")[0])


def decompose_loop_elsewhere(s: Schedule) -> None:
    s.decompose_reduction(s.get_sblock("B"), loops(s, "C")[0])


def rfactor_axis(s: Schedule) -> None:
    s.rfactor(loops(s, "B")[1], 5)


def rfactor_spatial_loop(s: Schedule) -> None:
    s.rfactor(loops(s, "C")[0], 0)


def annotate_object(s: Schedule) -> None:
    s.annotate(s.get_sblock("B"), "key", object())


def unannotate_loop(s: Schedule) -> None:
    s.unannotate(loops(s, "B")[0], "no_such_key")


def storage_align_factor(s: Schedule) -> None:
    s.storage_align(s.get_sblock("B"), 0, 0, 0, 1)


def set_scope_index(s: Schedule) -> None:
    s.set_scope(s.get_sblock("B"), 3, "local")


def reindex_index(s: Schedule) -> None:
    s.reindex(s.get_sblock("C"), ("read", 5))


def add_unit_loop_inlined(s: Schedule) -> None:
    b = s.get_sblock("B")
    s.compute_inline(b)
    s.add_unit_loop(b)


def blockize_blocks(s: Schedule) -> None:
    s.blockize([s.get_sblock("C")])


def padding_loop_elsewhere(s: Schedule) -> None:
    s.decompose_padding(s.get_sblock("P"), loops(s, "C")[0])


def pad_einsum_arity(s: Schedule) -> None:
    s.pad_einsum(s.get_sblock("C"), [4, 4])


def pad_einsum_not_einsum(s: Schedule) -> None:
    s.pad_einsum(s.get_sblock("P"), [1, 4])


def pad_einsum_symbolic(s: Schedule) -> None:
    s.pad_einsum(s.get_sblock("C"), [4, 1, 8, 1])


def pad_einsum_split(s: Schedule) -> None:
    s.split(loops(s, "C")[0], [None, 2])
    s.pad_einsum(s.get_sblock("C"), [4, 4, 1])


FAILURES: list[tuple[str, Callable[[Schedule], None], str]] = [
    # lookups and stale handles
    (CHAIN, unknown_block, "no block named 'no_such_block'"),
    (CHAIN, get_loops_inlined, "block 'B' (BlockRV(b0)) no longer exists: compute_inline"),
    (CHAIN, get_producers_inlined, "block 'B' (BlockRV(b0)) no longer exists"),
    (CHAIN, get_consumers_inlined, "block 'B' (BlockRV(b0)) no longer exists"),
    (MATMUL, get_child_blocks_fused, "loop 'i' (LoopRV(l1)) no longer exists: fuse removed it"),
    # loops
    (MATMUL, split_too_small, "smaller than the extent 8 of loop 'j'"),
    (MATMUL, split_two_none, "only one factor can be None (or -1), splitting loop 'j'"),
    (MATMUL, split_zero, "factor 0 of loop 'j' is not a positive integer"),
    (MATMUL, fuse_gap, "loop 'i' is not the parent of the inner loop 'k'"),
    (CHAIN, reorder_two_nests, "loop 'i' is not in the loop nest of loop 'j'"),
    (MATMUL, reorder_twice, "reorder: loop 'i' appears more than once"),
    (CHAIN, merge_depths, "loop 'i' and loop 'j' are at different depths"),
    (CHAIN, merge_twice, "merge: loop 'i' appears more than once"),
    (ROWSUM, merge_init_and_body, "is in the init of block 'B_o', the others are not"),
    (CHAIN, merge_reversed, "block 'C' depends on block 'B', which would run after it"),
    (CHAIN3, merge_past_a_reader, "block 'C' depends on block 'B', which would run after it"),
    (CHAIN, add_unit_loop_inlined, "block 'B' (BlockRV(b0)) no longer exists"),
    # loop kinds
    (MATMUL, vectorize_reduction, "loop 'k' is bound to the reduce axis 'vk' of block 'C'"),
    (ROWSUM, parallel_reduction, "block 'B'"),
    (MATMUL, vectorize_after_decompose, "block 'C_update' under it is neither"),
    (MATMUL, unroll_removed_loop, "loop 'i' (LoopRV(l1)) no longer exists: split removed it"),
    (CHAIN, vectorize_fused_loop, "loop 'j' (LoopRV(l2)) no longer exists: fuse removed it"),
    # compute location
    (CHAIN, inline_output, "block 'C' writes 'C', an output"),
    (ROWSUM, inline_reduction, "block 'B' is a reduction"),
    (REDUCE_EPILOGUE, reverse_inline_after_reduction, "producer 'B' of block 'C'"),
    (CHAIN, compute_at_own_loop, "loop 'i' is a loop around block 'B' itself"),
    (CHAIN, compute_at_output, "block 'C' writes an output"),
    (CHAIN3, compute_at_breaks_dependence, "not every consumer of block 'B' is under the target"),
    (CHAIN3, reverse_at_missing_producer, "missing: C"),
    (CHAIN3, reverse_at_before_consumer, "block 'C' reads what block 'B' writes before loop 'i'"),
    (ROWSUM, compute_at_predicated, "of block 'B_rf' bounds its reduction axes"),
    (OFFSET, reverse_inline_partial, "axis 'vi' of block 'C' does not run over the whole of"),
    # reductions
    (ROWSUM, rfactor_spatial, "loop 'i' is not a reduction loop of block 'B'"),
    (MATMUL, rfactor_spatial_loop, "loop 'i' is not a reduction loop of block 'C'"),
    (ROWSUM, rfactor_axis, "factor_axis 5 is out of range for buffer 'B'"),
    (
        ARGMAX.replace("T.int64(-1)", "T.int64(0)"),
        rfactor_bad_identity,
        "init value of block 'argmax' is not the identity",
    ),
    (CHAIN, decompose_spatial, "block 'B' is not a reduction block"),
    (ROWSUM, rfactor_shared_loop, "rfactor: loop 'k_0' holds other blocks than 'B'"),
    (ROWSUM, rfactor_after_producer, "the first block under loop 'i' is not block 'B'"),
    (REDUCE_EPILOGUE, decompose_loop_elsewhere, "loop 'i' is not a loop above block 'B'"),
    (REDUCE_EPILOGUE, decompose_under_repeat, "loop 'i' is bound to no axis of block 'B'"),
    # annotations
    (CHAIN, annotate_object, "unsupported annotation value <object object at"),
    (CHAIN, unannotate_missing, "block 'B' has no annotation 'no_such_key'"),
    (CHAIN, unannotate_loop, "loop 'i' has no annotation 'no_such_key'"),
    # caches and storage
    (MATMUL, cache_read_index, "block 'C' has 2 read buffers; index 5"),
    (MATMUL, cache_write_index, "block 'C' has 1 write buffer; index 1"),
    (MATMUL, cache_write_scope, "cache_write: unknown storage scope 'nowhere'"),
    (MATMUL, reindex_index, "block 'C' has 2 read buffers; index 5"),
    (ROWSUM, reindex_updated, "reindex: block 'B_update' both reads and writes 'B'"),
    (REDUCE_EPILOGUE, reindex_in_nest, "block 'B' writes 'B' in the loop nest of block 'C'"),
    (CHAIN, set_scope_param, "buffer 'C' is not allocated inside the function"),
    (CHAIN, set_scope_unknown, "unknown storage scope 'nowhere'"),
    (CHAIN, set_scope_index, "block 'B' has 1 write buffer; index 3"),
    (CHAIN, storage_align_axis, "axis 7 is out of range for buffer 'B'"),
    (CHAIN, storage_align_factor, "buffer 'B' of block 'B' must be a positive integer, got 0"),
    # layouts
    (CHAIN, layout_arity, "takes 1 indices but buffer 'B' has 2"),
    (CHAIN, layout_holes, "buffer 'B': output 0 of the index map lambda i, j: (i * 2"),
    (CHAIN, layout_padding, "buffer 'B': the index map lambda i, j: (i, j // 4"),
    (CHAIN, layout_dependent_outputs, "buffer 'B': the outputs of the index map"),
    (CHAIN, block_layout_not_affine, "block 'C': the index map lambda i, j: (i + j, j) is not"),
    (CHAIN, block_layout_not_bijective, "block 'C': the index map lambda i, j: (i // 2"),
    (MATMUL, block_layout_mixed_kinds, "block 'C': output 0 of the index map mixes axes"),
    (CHAIN, block_layout_reordered_loops, "block 'C': the block's bindings must be the loops"),
    (CHAIN, block_layout_arity, "block 'C': the index map takes 1 indices but the block has 2"),
    # blockize and padding
    (MATMUL, blockize_mixed, "bindings of block 'C' cannot be divided"),
    (MATMUL, blockize_blocks, "blockize: expected a loop handle"),
    (PAD, padding_not_a_pad, "block 'C' is not a padding block"),
    (PAD, padding_loop_elsewhere, "loop 'i' is not a loop above block 'P'"),
    (EINSUM, pad_einsum_arity, "block 'C' must be a list of 3 positive integers"),
    (PAD, pad_einsum_not_einsum, "block 'P' is not an einsum"),
    (EINSUM, pad_einsum_split, "block 'C' must be bound trivially"),
    (ODD_BATCH_MATMUL, pad_einsum_symbolic, "block 'C' would pad an axis of symbolic extent"),
]


@pytest.mark.parametrize(
    ("text", "apply", "message"), FAILURES, ids=[f[1].__name__ for f in FAILURES]
)
def test_failing_primitive_raises_and_changes_nothing(
    text: str, apply: Callable[[Schedule], None], message: str
) -> None:
    sch = Schedule(tvmlite.parse(text), debug_mask="all")
    # Snapshot the module and trace before every call: the failing (last) call
    # must leave both as they were.
    steps: list[tuple[str, str, str]] = []

    class Recorder:
        def __getattr__(self, name: str) -> Callable:
            method = getattr(sch, name)

            def call(*args: object, **kwargs: object) -> object:
                steps.append((name, sch.mod.script(), str(sch.trace)))
                return method(*args, **kwargs)

            return call

    with pytest.raises(ScheduleError, match=re.escape(message)) as info:
        apply(Recorder())  # type: ignore[arg-type]
    assert isinstance(info.value, tvmlite.TVMLiteError)
    _, module_before, trace_before = steps[-1]
    assert sch.mod.script() == module_before
    assert str(sch.trace) == trace_before
    # The trace holds the steps that succeeded, and replays to the module as it is.
    replay = Schedule(tvmlite.parse(text))
    sch.trace.apply_to_schedule(replay)
    assert tvmlite.structural_equal(replay.mod, sch.mod)
