"""dsl/analysis.py and dsl/regions.py against hand-checked cases."""

from __future__ import annotations

import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import free_vars, loads, stores, substitute, used_buffers, uses
from tvmlite.dsl.regions import infer_regions

I32 = "int32"
x, y, n = tir.Var("x", I32), tir.Var("y", I32), tir.Var("n", I32)


def c(value: int) -> tir.IntImm:
    return tir.IntImm(I32, value)


def add(a: tir.PrimExpr, b: tir.PrimExpr) -> tir.BinaryOp:
    return tir.BinaryOp("add", a, b, I32)


def buffer(name: str, *shape: tir.PrimExpr) -> tir.Buffer:
    return tir.Buffer(name, tir.Var(f"{name}_data", "handle"), "float32", shape)


# ---------------------------------------------------------------- substitute


def test_substitute_replaces_uses_and_keeps_untouched_subtrees() -> None:
    right = tir.BinaryOp("mul", y, c(2), I32)
    e = add(x, right)
    out = substitute(e, {x: c(3)})
    assert out == add(c(3), right) and out.b is right
    assert substitute(e, {}) is e
    assert substitute(e, {n: c(1)}) is e
    # values are not substituted again
    assert substitute(x, {x: add(x, c(1))}) == add(x, c(1))


def test_substitute_in_a_statement_rebuilds_buffers_once() -> None:
    A = buffer("A", n)
    i = tir.Var("i", I32)
    load = tir.BufferLoad(A, (i,), "float32")
    loop = tir.For(i, c(0), n, tir.SERIAL, tir.BufferStore(A, load, (i,)))
    out = substitute(loop, {n: c(8)})
    assert out.extent == c(8)
    store = out.body
    assert store.buffer.shape == (c(8),)
    assert store.value.buffer is store.buffer  # one new buffer for both uses


# ---------------------------------------------------------------- variables


def test_free_vars_in_first_use_order() -> None:
    A = buffer("A", n)
    i = tir.Var("i", I32)
    body = tir.BufferStore(A, add(x, i), (i,))
    loop = tir.For(i, c(0), y, tir.SERIAL, body)
    # the loop's extent, then the store's buffer (its data var and shape), then x;
    # i is defined by the loop
    assert free_vars(loop) == [y, A.data, n, x]
    let = tir.Let(x, c(1), add(x, y), I32)
    assert free_vars(let) == [y]
    assert free_vars([add(y, x), n]) == [y, x, n]
    assert uses(loop, {x}) and uses(loop, {i})  # a use, even of a var the loop defines
    assert not uses(add(c(1), c(2)), {x})


def test_a_function_defines_its_params_and_matched_dims() -> None:
    m = tir.Var("m", I32)
    k = tir.Var("k", I32)
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    A, B = buffer("A", m), buffer("B", m)
    V = buffer("V", k)
    i, vi = tir.Var("i", I32), tir.Var("vi", I32)
    block = tir.Block(
        "copy",
        (tir.IterVar(vi, tir.Range(c(0), m), tir.SPATIAL),),
        (),
        (),
        tir.BufferStore(B, tir.BufferLoad(V, (c(0),), "float32"), (vi,)),
        match_buffers=(tir.MatchBufferRegion(V, tir.BufferRegion(A, (tir.Range(vi, c(1)),))),),
    )
    realize = tir.BlockRealize((i,), tir.IntImm("bool", 1), block)
    func = tir.PrimFunc((a, b), ((a, A), (b, B)), tir.For(i, c(0), m, tir.SERIAL, realize))
    assert free_vars(func) == []
    assert free_vars(func.body) == [m, A.data, B.data]  # the match source comes first


# ---------------------------------------------------------------- buffers


GATHER = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), idx: T.Buffer((8,), "int32"),
         B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[idx[i]] * T.float32(2)
        C[i] = B[i]
"""


def test_loads_in_pre_and_post_order_and_stores_in_order() -> None:
    func = tvmlite.parse(GATHER)
    names = [ld.buffer.name for ld in loads(func)]
    assert names == ["A", "idx", "B"]
    assert [ld.buffer.name for ld in loads(func, post_order=True)] == ["idx", "A", "B"]
    assert [s.buffer.name for s in stores(func)] == ["B", "C"]


def test_used_buffers_in_first_use_order() -> None:
    func = tvmlite.parse(GATHER)
    assert [b.name for b in used_buffers(func.body)] == ["B", "A", "idx", "C"]


# ---------------------------------------------------------------- regions


def _regions(text: str, block: str) -> tuple[list[str], list[str]]:
    """The printed reads and writes tvmlite infers for `block` (written without)."""
    printed = tvmlite.parse(text).script()
    lines = printed.splitlines()
    at = next(k for k, line in enumerate(lines) if f'T.block("{block}")' in line)
    reads = next(line for line in lines[at:] if "T.reads(" in line).strip()
    writes = next(line for line in lines[at:] if "T.writes(" in line).strip()
    return reads, writes


def _block(body: str) -> str:
    return (
        """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32"),
         Idx: T.Buffer((16,), "int32")):
    for i in range(1, 15):
        with T.block("b"):
            vi = T.axis.spatial(16, i)
"""
        + "\n".join("            " + line for line in body.strip().splitlines())
        + "\n"
    )


@pytest.mark.parametrize(
    "body, reads, writes",
    [
        # a loop inside the block relaxes its index to the loop's range
        (
            "for k in range(4):\n    B[vi] = B[vi] + A[vi, k * 2]",
            "T.reads(B[vi], A[vi, 0:7])",
            "T.writes(B[vi])",
        ),
        # a stencil: the hull of the points (printed `min:min + extent`, as TVM does)
        (
            "B[vi] = A[vi - 1, 0] + A[vi + 1, 0]",
            "T.reads(A[vi - 1:vi - 1 + 3, 0])",
            "T.writes(B[vi])",
        ),
        # points whose distance is not constant: the whole axis; a load comes
        # before the loads in its indices
        (
            "B[vi] = A[Idx[vi], 0] + A[vi, 0]",
            "T.reads(A[0:16, 0], Idx[vi])",
            "T.writes(B[vi])",
        ),
        # a let-bound index is seen through
        ("j = vi + 1\nB[j] = A[j, 0]", "T.reads(A[vi + 1, 0])", "T.writes(B[vi + 1])"),
        # block-local allocations are not regions
        (
            'S = T.alloc_buffer((4,), "float32")\nS[0] = A[vi, 0]\nB[vi] = S[0]',
            "T.reads(A[vi, 0])",
            "T.writes(B[vi])",
        ),
    ],
)
def test_inferred_regions(body: str, reads: str, writes: str) -> None:
    assert _regions(_block(body), "b") == (reads, writes)


def test_nested_block_regions_are_relaxed_to_the_outer_loops() -> None:
    text = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    with T.block("outer"):
        for i, k in T.grid(16, 4):
            with T.block("inner"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk * 4:vk * 4 + 4])
                T.writes(B[vi])
                B[vi] = A[vi, vk * 4]
"""
    assert _regions(text, "outer") == ("T.reads(A[0:16, 0:16])", "T.writes(B[0:16])")


def test_match_buffer_access_is_its_source_region() -> None:
    A = buffer("A", c(16))
    V = buffer("V", c(4))
    vi = tir.Var("vi", I32)
    source = tir.BufferRegion(A, (tir.Range(vi, c(4)),))
    body = tir.BufferStore(V, tir.BufferLoad(V, (c(1),), "float32"), (c(0),))
    reads, writes = infer_regions(body, None, (), (tir.MatchBufferRegion(V, source),))
    assert reads == (source,) and writes == (source,)


def test_vector_access_covers_its_lanes() -> None:
    A = buffer("A", c(16))
    ramp = tir.Ramp(x, c(1), 4, "int32x4")
    body = tir.BufferStore(A, tir.Broadcast(tir.FloatImm("float32", 0.0), 4, "float32x4"), (ramp,))
    _, writes = infer_regions(body, None, (), ())
    assert writes == (tir.BufferRegion(A, (tir.Range(x, c(4)),)),)
