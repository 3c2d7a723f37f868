"""Matmul, batch matmul and dense (with the epilogues FuseOps fused after them):
a contraction over one reduction variable whose operands are indexed by plain
iteration variables, in any order (A[i, k] * B[k, j], x[i, k] * w[j, k],
A[b, i, k] * B[b, k, j], broadcast batch axes as constants). The output's last
axis is vectorized (its operand is packed), the axis before it that only the
other operand reads gives the unrolled rows: microkernel.py does the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tvmlite.lowering.schedule import BlockRV, Schedule
from tvmlite.lowering.schedule_rules.contraction import (
    Contraction,
    find_contraction,
    match_contraction,
)
from tvmlite.lowering.schedule_rules.microkernel import Roles, schedule_tiled

if TYPE_CHECKING:
    from tvmlite.lowering.schedule_rules.kernel import Kernel


def gemm_roles(c: Contraction) -> Roles | None:
    """The roles of a matmul-shaped contraction, None for anything else."""
    if len(c.reduce) != 1 or not all(op.is_plain() for op in c.operands):
        return None
    j = c.spatial[-1]
    readers = c.readers(j)
    if len(readers) != 1:
        return None
    other = next(op for op in c.operands if op is not readers[0])
    rows = [v for v in c.spatial[:-1] if other.reads(v) and not readers[0].reads(v)]
    if not rows:
        return None
    return Roles(vector=j, row=rows[-1])


def is_gemm(sch: Schedule, block: BlockRV) -> bool:
    c = match_contraction(sch, block)
    return c is not None and gemm_roles(c) is not None


def schedule_gemm(sch: Schedule, block: BlockRV) -> None:
    """Apply the tiled micro-kernel schedule to a block `is_gemm` accepts."""
    c = match_contraction(sch, block)
    roles = None if c is None else gemm_roles(c)
    if c is None or roles is None:
        raise ValueError("schedule_gemm: the block is not a matmul-shaped contraction")
    schedule_tiled(sch, block, c, roles)


@dataclass(frozen=True)
class Gemm:
    """The rule for DefaultCPUSchedule's registry (schedule_rules.RULES)."""

    name: str = "gemm"

    def matches(self, kernel: Kernel) -> bool:
        return find_contraction(kernel, gemm_roles) is not None

    def apply(self, sch: Schedule, kernel: Kernel) -> None:
        found = find_contraction(kernel, gemm_roles)
        assert found is not None, "apply follows matches"
        name, c, roles = found
        schedule_tiled(sch, sch.get_sblock(name), c, roles)
