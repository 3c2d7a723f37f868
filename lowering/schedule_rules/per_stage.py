"""The last rule: any kernel, one stage at a time. Elementwise, broadcast and
injective kernels (fused or not) get their whole schedule here; kernels mixing
reductions of several shapes (variance over all axes, group_norm, attention)
get each stage scheduled by the recipe for its kind.

Producers are inlined into their consumers first (injective.py). Then a
spatial stage runs parallel outside and vectorized inside (tiled when it
transposes), a reduction along its innermost axes keeps vectorized partial
results with its rows in parallel (row_reduction.py), a reduction whose
data runs along an output axis vectorizes that axis (pooling.py), and a
contraction no earlier rule took runs its output rows in parallel.
"""

from __future__ import annotations

from tvmlite.lowering.schedule import Schedule
from tvmlite.lowering.schedule_rules.injective import inline_producers, schedule_spatial
from tvmlite.lowering.schedule_rules.kernel import Kernel, Stage, current_stage
from tvmlite.lowering.schedule_rules.loops import parallel_outer
from tvmlite.lowering.schedule_rules.pooling import contiguous_output_axis, schedule_window
from tvmlite.lowering.schedule_rules.row_reduction import schedule_row_reduction


class PerStage:
    name = "per_stage"

    def matches(self, kernel: Kernel) -> bool:
        return True

    def apply(self, sch: Schedule, kernel: Kernel) -> None:
        for stage in inline_producers(sch, kernel):
            if not stage.is_reduction:
                schedule_spatial(sch, current_stage(sch, stage.name), kernel.traits)
            elif contiguous_output_axis(stage) is not None:
                schedule_window(sch, stage, kernel.traits)
            elif stage.reduces_along_rows() and _spatial_first(stage):
                schedule_row_reduction(sch, stage, kernel.traits)
            elif _spatial_first(stage):  # a contraction no rule took: rows in parallel
                rows = stage.kinds.count("S")
                parallel_outer(sch, sch.get_loops(stage.name)[:rows], stage.work)


def _spatial_first(stage: Stage) -> bool:
    rows = stage.kinds.count("S")
    return stage.kinds == "S" * rows + "R" * (len(stage.kinds) - rows)
