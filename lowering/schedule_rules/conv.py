"""Convolutions (conv2d NCHW / NHWC, any kernel layout, strides, dilation,
groups) recognised from their block: a contraction over several reduction
variables in which one operand (the data) is read at sums of a spatial and a
reduction variable (`y * stride + ry`).

Direct schedule, NCHWc-like: the output-channel variable, which only the weight
reads, is vectorized over a packed copy of the weight ([f // NR, c, ry, rx,
f % NR]); the output's width (NCHW: its last axis; NHWC: the one before the
channels) gives the unrolled rows, so each reduction step is MR broadcasts of the
data and NR / 16 weight vectors (microkernel.py). With groups the data is read
along the output channels too: then the output's last axis is vectorized and
nothing is packed. The padding block stays a separate stage (a copy of the data
with a zero border, parallel), run once before the contraction: inlining it
would put a bounds test in front of every load of the inner loop.
"""

from __future__ import annotations

from tvmlite.lowering.schedule_rules.contraction import Contraction, Roles
from tvmlite.lowering.schedule_rules.microkernel import ContractionRule


class Conv(ContractionRule):
    name = "conv"

    def roles(self, c: Contraction) -> Roles | None:
        windowed = [op for op in c.operands if not op.is_plain()]
        if len(c.reduce) < 2 or len(windowed) != 1 or len(c.spatial) < 2:
            return None
        data = windowed[0]
        weight = next(op for op in c.operands if op is not data)
        weight_axes = weight.plain_axes() if weight.is_plain() else {}
        channels = [v for v in c.spatial if v in weight_axes and not data.reads(v)]
        vector = channels[-1] if channels else c.spatial[-1]
        rows = [v for v in c.spatial if v is not vector and data.reads(v) and not weight.reads(v)]
        rows = [v for v in rows if c.extents[v] > 1]
        if not rows:
            return None
        return Roles(vector=vector, row=rows[-1])
