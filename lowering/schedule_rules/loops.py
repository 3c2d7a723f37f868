"""Loop recipes the rules share: when a loop is worth running in parallel, and
the parallel-outer / vectorized-inner shape of a stage's spatial loops (how wide
a vector is, the rules ask the target: `Kernel.traits`, codegen/cpu_traits.py).

Extents may be symbolic (`dsl.iter_map.Extent`: an int, or the expression of
a symbolic extent). The vector loop is kept static where the nest has
constant loops to make it of; a symbolic loop split by the vector width gets a
`T.where` guarding its last, partial vector (TIR lowering runs the whole
vectors without the test: lowering/tir/partition_loops.py).
"""

from __future__ import annotations

from tvmlite.dsl.iter_map import Extent, as_extent
from tvmlite.lowering.schedule import LoopRV, Schedule

# A parallel loop costs a thread-pool launch (a few microseconds): below this
# many block iterations a kernel runs faster on one thread.
PARALLEL_MIN_WORK = 1 << 15


def worth_parallel(work: int) -> bool:
    return work >= PARALLEL_MIN_WORK


def extent(sch: Schedule, loop: LoopRV) -> Extent:
    return as_extent(sch.get(loop).extent)


def exceeds(size: Extent, bound: int) -> bool:
    """Whether a loop of `size` iterations may run more than `bound` (a symbolic
    extent may)."""
    return not isinstance(size, int) or size > bound


def vectorize_tail(sch: Schedule, loops: list[LoopRV], width: int) -> list[LoopRV]:
    """Vectorize the innermost `width` iterations of the perfect nest `loops`:
    trailing loops of constant extent are fused until they hold at least
    `width` iterations, then split so the inner loop has `width` lanes (a
    `T.where` guards the tail when `width` does not divide). A symbolic loop
    joins the vector loop only when the constant loops after it hold less
    than half a register (an (n, 3) output is vectorized along n and 3 fused),
    or when it is the innermost loop. Returns the loops left outside the
    vector loop."""
    if not loops:
        return []
    sizes = [extent(sch, lp) for lp in loops]
    k, total = len(loops) - 1, sizes[-1]
    while isinstance(total, int) and total < width and k > 0 and isinstance(sizes[k - 1], int):
        k -= 1
        total *= sizes[k]
    if isinstance(total, int) and total < width // 2 and k > 0:
        k -= 1
        total = sizes[k]  # symbolic: the fused loop is too
    inner = sch.fuse(*loops[k:]) if k < len(loops) - 1 else loops[-1]
    outer = list(loops[:k])
    if exceeds(total, width):
        rest, inner = sch.split(inner, factors=[None, width])
        outer.append(rest)
    sch.vectorize(inner)
    return outer


def parallel_outer(sch: Schedule, loops: list[LoopRV], work: int) -> LoopRV | None:
    """Fuse `loops` (a perfect nest) into one loop and run it in parallel when
    the work under it is worth a thread-pool launch; the fused loop, or None."""
    if not loops:
        return None
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    if worth_parallel(work):
        sch.parallel(fused)
    return fused
