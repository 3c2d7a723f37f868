"""Schedule primitives over loops of symbolic extent (a batch `n`, a sequence
`s`), against what TVM 0.27 prints for the same schedule on the same input
(symbolic_expected.py). The verifier runs after every primitive, every result
parses back to the same module, and builds to code that computes, at several
sizes (1, sizes no tile divides, a multiple of every tile), what the
unscheduled function computes."""

from collections.abc import Callable

import numpy as np
import pytest
from symbolic_expected import (
    AVG_POOL,
    BATCH_MATMUL,
    CONV,
    EXPECTED,
    MATMUL,
    ODD_BATCH_MATMUL,
    ROW_SOFTMAX,
    SCALE,
    SCALE_2D,
    SCALE_3D,
    SUM_ROWS,
)

import tvmlite
from tvmlite.dsl import tir
from tvmlite.tir import Schedule


def schedule(text: str) -> Schedule:
    return Schedule(tvmlite.parse(text), debug_mask="all")


def split_inner(s: Schedule) -> None:
    _, j = s.get_loops(s.get_sblock("B"))
    s.split(j, [None, 16])


def split_outer(s: Schedule) -> None:
    i, _ = s.get_loops(s.get_sblock("B"))
    s.split(i, [4, None])


def split_three(s: Schedule) -> None:
    _, j = s.get_loops(s.get_sblock("B"))
    s.split(j, [None, 4, 8])


def fuse_both(s: Schedule) -> None:
    i, j = s.get_loops(s.get_sblock("B"))
    s.fuse(i, j)


def fuse_split(s: Schedule) -> None:
    i, j = s.get_loops(s.get_sblock("B"))
    outer, inner = s.split(s.fuse(i, j), [None, 16])
    s.parallel(outer)
    s.vectorize(inner)


def split_then_fuse(s: Schedule) -> None:
    i, j = s.get_loops(s.get_sblock("B"))
    j0, j1 = s.split(j, [None, 16])
    s.parallel(s.fuse(i, j0))
    s.vectorize(j1)


def fuse_three_split(s: Schedule) -> None:
    i, j, k = s.get_loops(s.get_sblock("B"))
    outer, inner = s.split(s.fuse(i, j, k), [None, 16])
    s.parallel(outer)
    s.vectorize(inner)


def tile_2d(s: Schedule) -> None:
    i, j = s.get_loops(s.get_sblock("B"))
    i0, i1 = s.split(i, [None, 16])
    j0, j1 = s.split(j, [None, 16])
    s.reorder(i0, j0, i1, j1)
    s.parallel(s.fuse(i0, j0))
    s.vectorize(j1)


def softmax_rows(s: Schedule) -> None:
    """The row-reduction recipe over a symbolic number of rows."""
    partials = []
    for name in ("T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"):
        _, k = s.get_loops(name)
        _, k1 = s.split(k, [None, 16])
        if name.endswith(("maxelem", "expsum")):
            rf = s.rfactor(k1, factor_axis=1)
            s.vectorize(s.get_loops(rf)[-1])
            partials.append(rf)
        else:
            s.vectorize(k1)
    blocks = [
        "T_softmax_maxelem_rf",
        "T_softmax_maxelem",
        "T_softmax_exp",
        "T_softmax_expsum_rf",
        "T_softmax_expsum",
        "T_softmax_norm",
    ]
    s.parallel(s.merge(*(s.get_loops(b)[0] for b in blocks)))
    for rf in partials:
        s.decompose_reduction(rf, s.get_loops(rf)[1])


def sum_partials(s: Schedule) -> None:
    """Vectorized partial sums over a reduction of symbolic length: a predicate
    guards the tail."""
    _, k = s.get_loops(s.get_sblock("x_red"))
    _, k1 = s.split(k, [None, 16])
    rf = s.rfactor(k1, factor_axis=1)
    s.vectorize(s.get_loops(rf)[-1])
    s.decompose_reduction(rf, s.get_loops(rf)[1])


def matmul_tiles(s: Schedule) -> None:
    """The register-tile recipe with a symbolic number of rows."""
    b = s.get_sblock("matmul")
    i, j, k = s.get_loops(b)
    i0, i1 = s.split(i, [None, 8])
    j0, j1 = s.split(j, [None, 32])
    s.reorder(j0, i0, k, i1, j1)
    w = s.cache_write(b, 0, "local")
    s.reverse_compute_at(w, i0)
    s.vectorize(s.get_loops(w)[-1])
    s.unroll(i1)
    s.vectorize(j1)
    s.parallel(s.fuse(j0, i0))
    s.decompose_reduction(b, k)


def pad_columns(s: Schedule) -> None:
    """Only the constant axis grows: the symbolic batch keeps its extent."""
    s.pad_einsum(s.get_sblock("C"), [1, 1, 8, 1])


def batch_matmul_tiles(s: Schedule) -> None:
    b = s.get_sblock("matmul")
    batch, i, j, k = s.get_loops(b)
    i0, i1 = s.split(i, [None, 8])
    j0, j1 = s.split(j, [None, 32])
    s.reorder(batch, j0, i0, k, i1, j1)
    w = s.cache_write(b, 0, "local")
    s.reverse_compute_at(w, i0)
    s.vectorize(s.get_loops(w)[-1])
    s.unroll(i1)
    s.vectorize(j1)
    s.parallel(s.fuse(batch, j0, i0))
    s.decompose_reduction(b, k)


def conv_tiles(s: Schedule) -> None:
    """The conv recipe over a symbolic batch: packed weight, accumulator laid
    out with the channels last, padding stage in parallel."""
    b = s.get_sblock("conv2d_nchw")
    (pad,) = s.get_producers(b)
    s.parallel(s.fuse(*s.get_loops(pad)[:-1]))
    packed = s.cache_read(b, 1, "global")
    s.transform_layout(packed, ("write", 0), lambda o, i, y, x: (o // 16, i, y, x, o % 16))
    s.parallel(s.fuse(*s.get_loops(packed)[:-1]))
    nn, ff, yy, xx, rc, ry, rx = s.get_loops(b)
    x0, x1 = s.split(xx, [None, 6])
    f0, f1 = s.split(ff, [None, 16])
    s.reorder(f0, nn, yy, x0, rc, ry, rx, x1, f1)
    w = s.cache_write(b, 0, "local")
    s.transform_layout(b, ("write", 0), lambda n, f, y, x: (n, y, x, f))
    s.reverse_compute_at(w, x0)
    loops = s.get_loops(w)
    s.reorder(loops[-1], loops[-2])
    s.vectorize(loops[-2])
    s.unroll(x1)
    s.vectorize(f1)
    s.parallel(s.fuse(f0, nn, yy, x0))
    s.decompose_reduction(b, rc)


def pool_channels(s: Schedule) -> None:
    """Pooling's recipe: the average computed inside the parallel loop, whose
    predicate is provably true (`fused // 32 < n`)."""
    n, c, y, x, ry, rx = s.get_loops("adaptive_pool_sum")
    s.reorder(n, c, y, ry, rx, x)
    s.vectorize(x)
    fused = s.fuse(n, c, y)
    s.parallel(fused)
    s.decompose_reduction("adaptive_pool_sum", s.get_loops("adaptive_pool_sum")[1])
    s.reverse_compute_at("adaptive_pool_avg", fused)


CASES: list[tuple[str, str, Callable[[Schedule], None]]] = [
    ("split_inner", SCALE_2D, split_inner),
    ("split_outer", SCALE_2D, split_outer),
    ("split_three", SCALE_2D, split_three),
    ("fuse_both", SCALE, fuse_both),
    ("fuse_split_exact", SCALE, fuse_split),
    ("fuse_split", SCALE_2D, fuse_split),
    ("split_then_fuse", SCALE, split_then_fuse),
    ("fuse_three_split", SCALE_3D, fuse_three_split),
    ("tile_2d", SCALE_2D, tile_2d),
    ("softmax_rows", ROW_SOFTMAX, softmax_rows),
    ("sum_partials", SUM_ROWS, sum_partials),
    ("matmul_tiles", MATMUL, matmul_tiles),
    ("batch_matmul_tiles", BATCH_MATMUL, batch_matmul_tiles),
    ("pad_einsum_symbolic_batch", ODD_BATCH_MATMUL, pad_columns),
    ("conv_tiles", CONV, conv_tiles),
    ("pool_channels", AVG_POOL, pool_channels),
]


@pytest.mark.parametrize(("name", "text", "apply"), CASES, ids=[c[0] for c in CASES])
def test_symbolic_primitive_matches_tvm(
    name: str, text: str, apply: Callable[[Schedule], None]
) -> None:
    sch = schedule(text)
    apply(sch)
    out = sch.mod.script()
    assert out.rstrip() == EXPECTED[name].rstrip()
    assert tvmlite.structural_equal(tvmlite.parse(out), sch.mod)


def arguments(func: tir.PrimFunc, size: int, seed: int) -> list[np.ndarray]:
    """Random arguments, the first symbolic dimension `size`, the next `size + 3`."""
    rng = np.random.default_rng(seed)
    sizes: dict[tir.Var, int] = {}
    out = []
    for _, buffer in func.buffer_map:
        shape = []
        for d in buffer.shape:
            if isinstance(d, tir.Var):
                shape.append(sizes.setdefault(d, size + 3 * len(sizes)))
            else:
                shape.append(d.value)
        out.append(rng.standard_normal(shape).astype(buffer.dtype))
    return out


@pytest.mark.parametrize(("name", "text", "apply"), CASES, ids=[c[0] for c in CASES])
def test_symbolic_schedule_computes_the_same(
    name: str, text: str, apply: Callable[[Schedule], None]
) -> None:
    sch = schedule(text)
    apply(sch)
    plain, scheduled = tvmlite.build(tvmlite.parse(text)), tvmlite.build(sch.mod)
    for size in (1, 7, 37, 64):
        want = arguments(sch.mod["main"], size, size)
        got = [np.copy(a) for a in want]
        plain["main"](*want)
        scheduled["main"](*got)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
