"""Default CPU schedule rules (docs/default-schedule.md): the registry that
DefaultCPUSchedule consults, in order, for the first rule matching a kernel.

Each rule lives in its own module (see `rule.Rule`). More specific rules come
first: a matmul is a reduction too, so its rule must be asked before the
general reduction rules. Add a rule by importing it here and placing it in
`RULES` before the first rule that would also match its kernels.
"""

from __future__ import annotations

from tvmlite.lowering.schedule_rules.conv import Conv
from tvmlite.lowering.schedule_rules.gemm import Gemm
from tvmlite.lowering.schedule_rules.kernel import Kernel, Stage
from tvmlite.lowering.schedule_rules.matvec import MatrixVector
from tvmlite.lowering.schedule_rules.per_stage import PerStage
from tvmlite.lowering.schedule_rules.pooling import Pooling
from tvmlite.lowering.schedule_rules.row_reduction import RowReduction
from tvmlite.lowering.schedule_rules.rule import Rule

RULES: tuple[Rule, ...] = (
    MatrixVector(),  # few rows, both operands along the reduction (matvec.py)
    Gemm(),  # matmul, batch matmul, dense (gemm.py)
    Conv(),  # conv2d (conv.py)
    RowReduction(),
    Pooling(),
    PerStage(),  # matches every kernel: last
)


def rule_for(kernel: Kernel) -> Rule | None:
    """The first rule of `RULES` that matches `kernel`."""
    return next((rule for rule in RULES if rule.matches(kernel)), None)


__all__ = ["RULES", "Kernel", "Rule", "Stage", "rule_for"]
