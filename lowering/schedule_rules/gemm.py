"""Matmul, batch matmul and dense (with the epilogues FuseOps fused after them):
a contraction over one reduction variable whose operands are indexed by plain
iteration variables, in any order (A[i, k] * B[k, j], x[i, k] * w[j, k],
A[b, i, k] * B[b, k, j], broadcast batch axes as constants). The output's last
axis is vectorized (its operand is packed, and padded when the columns do not
divide into whole registers: tiling.py), the axis before it that only the other
operand reads gives the unrolled rows: microkernel.py does the rest.
"""

from __future__ import annotations

from tvmlite.lowering.schedule_rules.contraction import Contraction, Roles
from tvmlite.lowering.schedule_rules.microkernel import ContractionRule


class Gemm(ContractionRule):
    name = "gemm"

    def roles(self, c: Contraction) -> Roles | None:
        if len(c.reduce) != 1 or len(c.spatial) < 2:
            return None  # a dot product or a matrix-vector product: the reductions' rules
        if not all(op.is_plain() for op in c.operands):
            return None
        j = c.spatial[-1]
        readers = c.readers(j)
        if len(readers) != 1:
            return None
        other = next(op for op in c.operands if op is not readers[0])
        rows = [v for v in c.spatial[:-1] if other.reads(v) and not readers[0].reads(v)]
        if not rows:
            return None  # the rows read by both operands (an outer batch only)
        return Roles(vector=j, row=rows[-1])
