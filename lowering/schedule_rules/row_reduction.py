"""Reductions along the innermost axis, with whatever surrounds them per row:
sum/mean/max/min/prod over trailing axes, softmax, log_softmax, layer_norm,
rms_norm, and fused kernels of that shape.

The reductions of such a kernel share their spatial axes, the "rows", and so
does its last stage; what follows the rows differs (the reduced axes, or a row
of elements). The schedule, per row:

- each reduction over K elements keeps W partial results (`rfactor`, W the
  vector width): a vectorized loop accumulates W lanes at a time over
  ceil(K / W) steps, then W partial results are combined. When W does not
  divide K (197 tokens, 30522 columns, a symbolic sequence) a `T.where`
  guards the last step, which TIR lowering peels off the whole vectors
  (lowering/tir/partition_loops.py); a reduction of fewer than 2 W elements
  stays serial;
- each elementwise stage runs its row vectorized, W lanes at a time (cheap
  producers are inlined first, as for injective kernels);
- all stages share one row loop (`merge`), run in parallel, so a row's data
  is still in cache when the next stage reads it. Stages over other shapes (a
  cast of the weights) run on their own before.
"""

from __future__ import annotations

import math

from tvmlite.dsl.analysis import loads, stores
from tvmlite.lowering.codegen.cpu_traits import CPUTraits
from tvmlite.lowering.schedule import LoopRV, Schedule, ScheduleError
from tvmlite.lowering.schedule_rules.injective import inline_producers, schedule_spatial
from tvmlite.lowering.schedule_rules.kernel import Kernel, Stage, current_stage
from tvmlite.lowering.schedule_rules.loops import vectorize_tail, worth_parallel


def row_axes(kernel: Kernel) -> int | None:
    """How many leading loops are rows, when the kernel has this shape."""
    reductions = kernel.reductions
    if not reductions:
        return None
    first = reductions[0]
    rows = len(first.kinds) - len(first.kinds.lstrip("S"))
    shape = first.extents[:rows]
    for r in reductions:
        if r.kinds != "S" * rows + "R" * (len(r.kinds) - rows) or r.extents[:rows] != shape:
            return None
        if not r.reduces_along_rows():
            return None  # data running along an output axis: pooling, or a matmul
    if not _in_rows(kernel.stages[-1], shape) or not _row_local(kernel, shape):
        return None
    return rows


def _in_rows(stage: Stage, shape: tuple[int, ...]) -> bool:
    rows = len(shape)
    return stage.extents[:rows] == shape and "R" not in stage.kinds[:rows]


def _row_local(kernel: Kernel, shape: tuple[int, ...]) -> bool:
    """Whether each stage on the rows touches only its own row of what the
    stages on the rows write: merging their row loops is then safe (a stage
    reading another row, say a transposed intermediate, needs that row done)."""
    rows = len(shape)
    staged = [s for s in kernel.stages if _in_rows(s, shape)]
    shared = {w.buffer for s in staged for w in s.block.writes}
    for stage in staged:
        own = [iv.var for iv in stage.block.iter_vars[:rows]]
        accesses = [*stores(stage.block.body), *loads(stage.block.body)]
        for access in accesses:
            if access.buffer in shared and list(access.indices[:rows]) != own:
                return False
    return True


class RowReduction:
    name = "row_reduction"

    def matches(self, kernel: Kernel) -> bool:
        return row_axes(kernel) is not None

    def apply(self, sch: Schedule, kernel: Kernel) -> None:
        rows = row_axes(kernel)
        assert rows is not None
        shape = kernel.reductions[0].extents[:rows]
        partials: list[str] = []
        nests: list[str] = []  # the block of every nest on the rows, in order
        for stage in inline_producers(sch, kernel):
            if not _in_rows(stage, shape):
                schedule_spatial(sch, current_stage(sch, stage.name), kernel.traits)
                continue
            if stage.is_reduction:
                rf = _partial_results(sch, stage, rows, kernel.traits)
                if rf is not None:
                    partials.append(rf)
                    nests.append(rf)
            else:
                width = kernel.traits.lanes(stage.output.dtype)
                vectorize_tail(sch, sch.get_loops(stage.name)[rows:], width)
            nests.append(stage.name)
        if rows:
            work = sum(s.work for s in kernel.stages)
            _run_rows(sch, [_row_loop(sch, b, rows) for b in nests], work)
        # After parallel: TVM refuses to parallelize above a decomposed update.
        for rf in partials:
            sch.decompose_reduction(rf, sch.get_loops(rf)[-2])


def schedule_row_reduction(sch: Schedule, stage: Stage, traits: CPUTraits) -> None:
    """One reduction along its innermost axes on its own: partial results, rows
    in parallel."""
    rows = len(stage.kinds) - len(stage.kinds.lstrip("S"))
    rf = _partial_results(sch, stage, rows, traits)
    nests = [stage.name] if rf is None else [rf, stage.name]
    if rows:
        _run_rows(sch, [_row_loop(sch, b, rows) for b in nests], stage.work)
    if rf is not None:
        sch.decompose_reduction(rf, sch.get_loops(rf)[-2])


def _partial_results(sch: Schedule, stage: Stage, rows: int, traits: CPUTraits) -> str | None:
    """Split the stage's reduction into W vectorized partial results (the last
    step guarded when W does not divide it); the name of the block computing
    them, or None when the reduction is too short."""
    width = traits.lanes(stage.output.dtype)
    sizes = [e for e in stage.extents[rows:] if isinstance(e, int)]
    if len(sizes) == len(stage.extents[rows:]) and math.prod(sizes) < 2 * width:
        return None
    reduce = sch.get_loops(stage.name)[rows:]
    fused = sch.fuse(*reduce) if len(reduce) > 1 else reduce[0]
    _, inner = sch.split(fused, factors=[None, width])
    try:
        rf = sch.rfactor(inner, factor_axis=len(stage.output.shape))
    except ScheduleError:
        return None  # not a reduction rfactor knows: stays serial
    sch.vectorize(sch.get_loops(rf)[-1])
    return sch.get(rf).name


def _row_loop(sch: Schedule, block: str, rows: int) -> LoopRV:
    loops = sch.get_loops(block)[:rows]
    return sch.fuse(*loops) if len(loops) > 1 else loops[0]


def _run_rows(sch: Schedule, heads: list[LoopRV], work: int) -> None:
    """One parallel row loop for all nests; if they cannot share one (a stage
    between them depends on one and feeds another), one parallel loop each."""
    parallel = worth_parallel(work)
    if len(heads) > 1:
        try:
            heads = [sch.merge(*heads)]
        except ScheduleError:
            pass
    if parallel:
        for head in heads:
            sch.parallel(head)
