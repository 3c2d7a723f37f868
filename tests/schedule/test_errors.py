"""Each check a primitive makes raises ScheduleError (a TVMLiteError) naming the
block or loop, and leaves the module, the handles and the trace as they were."""

from collections.abc import Callable

import pytest
from schedule_expected import ARGMAX, CHAIN, MATMUL, PAD, ROWSUM

import tvmlite
from tvmlite.tir import Schedule, ScheduleError

# A reduction followed by an elementwise epilogue, and a three-stage chain.
REDUCE_EPILOGUE = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), C: T.Buffer((T.int64(4),), "float32")):
        B = T.sblock_alloc_buffer((T.int64(4),))
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
        for i in range(T.int64(4)):
            with T.sblock("C"):
                vi = T.axis.spatial(T.int64(4), i)
                T.reads(B[vi])
                T.writes(C[vi])
                C[vi] = B[vi] * T.float32(0.5)
"""

CHAIN3 = (
    CHAIN.replace(
        'C: T.Buffer((T.int64(4), T.int64(6)), "float32")):',
        'D: T.Buffer((T.int64(4), T.int64(6)), "float32")):',
    ).replace(
        "B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))",
        "B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))\n"
        "        C = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))",
    )
    + """        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = C[vi, vj] * T.float32(3.0)
"""
)


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


def block_layout_not_permutation(s: Schedule) -> None:
    s.transform_block_layout(s.get_sblock("C"), lambda i, j: (i + j, j))


FAILURES: list[tuple[str, Callable[[Schedule], None], str]] = [
    (MATMUL, split_too_small, "smaller than the extent 8 of loop 'j'"),
    (MATMUL, split_two_none, "only one factor can be None"),
    (MATMUL, fuse_gap, "loop 'i' is not the parent of the inner loop 'k'"),
    (CHAIN, reorder_two_nests, "not in one chain"),
    (MATMUL, vectorize_reduction, "loop 'k' is bound to the reduce axis 'vk' of block 'C'"),
    (ROWSUM, parallel_reduction, "block 'B'"),
    (MATMUL, vectorize_after_decompose, "block 'C_update' under it is neither"),
    (CHAIN, inline_output, "block 'C' writes 'C', an output"),
    (ROWSUM, inline_reduction, "block 'B' is a reduction"),
    (REDUCE_EPILOGUE, reverse_inline_after_reduction, "producer 'B' of block 'C'"),
    (CHAIN, compute_at_own_loop, "loop 'i' is a loop around block 'B' itself"),
    (CHAIN, compute_at_output, "block 'C' writes an output"),
    (CHAIN3, reverse_at_missing_producer, "missing: C"),
    (ROWSUM, rfactor_spatial, "loop 'i' is not a reduction loop of block 'B'"),
    (CHAIN, decompose_spatial, "block 'B' is not a reduction block"),
    (CHAIN, set_scope_param, "buffer 'C' is not allocated inside the function"),
    (CHAIN, set_scope_unknown, "unknown storage scope 'nowhere'"),
    (CHAIN, storage_align_axis, "axis 7 is out of range for buffer 'B'"),
    (MATMUL, cache_read_index, "block 'C' has 2 read buffers; index 5"),
    (CHAIN, unknown_block, "no block named 'no_such_block'"),
    (CHAIN, layout_arity, "takes 1 indices but buffer 'B' has 2"),
    (CHAIN, unannotate_missing, "block 'B' has no annotation 'no_such_key'"),
    (MATMUL, blockize_mixed, "bindings of block 'C' cannot be divided"),
    (PAD, padding_not_a_pad, "block 'C' is not a padding block"),
    (
        ARGMAX.replace("T.int64(-1)", "T.int64(0)"),
        rfactor_bad_identity,
        "init value of block 'argmax' is not the identity",
    ),
    (CHAIN, block_layout_not_permutation, "only permutations of the block axes"),
]


@pytest.mark.parametrize(
    ("text", "apply", "message"), FAILURES, ids=[f[1].__name__ for f in FAILURES]
)
def test_failing_primitive_raises_and_changes_nothing(
    text: str, apply: Callable[[Schedule], None], message: str
) -> None:
    sch = Schedule(tvmlite.parse(text), debug_mask="all")
    before_text, before_trace = sch.mod.script(), str(sch.trace)
    # Run every step but the last, then make sure the last one is refused cleanly.
    steps = []

    class Recorder:
        def __getattr__(self, name: str) -> Callable:
            method = getattr(sch, name)

            def call(*args: object, **kwargs: object) -> object:
                steps.append(name)
                return method(*args, **kwargs)

            return call

    with pytest.raises(ScheduleError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply(Recorder())  # type: ignore[arg-type]
    assert issubclass(ScheduleError, tvmlite.TVMLiteError)
    # The failed step is not in the trace; replaying the trace gives the module as it is.
    assert len(sch.trace) == len(steps) - 1
    replay = Schedule(tvmlite.parse(text))
    sch.trace.apply_to_schedule(replay)
    assert replay.mod.script() == sch.mod.script()
    if len(steps) == 1 or all(s.startswith("get_") for s in steps[:-1]):
        assert sch.mod.script() == before_text
    del before_trace
