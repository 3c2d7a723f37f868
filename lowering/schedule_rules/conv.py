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
with a zero border), run once before the contraction: inlining it would put a
bounds test in front of every load of the inner loop.
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


def conv_roles(c: Contraction) -> Roles | None:
    """The roles of a convolution-shaped contraction, None for anything else."""
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


def is_conv(sch: Schedule, block: BlockRV) -> bool:
    c = match_contraction(sch, block)
    return c is not None and conv_roles(c) is not None


def schedule_conv(sch: Schedule, block: BlockRV) -> None:
    """Apply the direct schedule to a block `is_conv` accepts."""
    c = match_contraction(sch, block)
    roles = None if c is None else conv_roles(c)
    if c is None or roles is None:
        raise ValueError("schedule_conv: the block is not a convolution")
    _schedule_conv(sch, block, c, roles)


def _schedule_conv(sch: Schedule, block: BlockRV, c: Contraction, roles: Roles) -> None:
    for producer in sch.get_producers(block):
        loops = sch.get_loops(producer)
        if len(loops) > 1:  # the padding copy: parallel over all but its rows
            sch.parallel(sch.fuse(*loops[:-1]))
    schedule_tiled(sch, block, c, roles)


@dataclass(frozen=True)
class Conv:
    """The rule for DefaultCPUSchedule's registry (schedule_rules.RULES)."""

    name: str = "conv"

    def matches(self, kernel: Kernel) -> bool:
        return find_contraction(kernel, conv_roles) is not None

    def apply(self, sch: Schedule, kernel: Kernel) -> None:
        found = find_contraction(kernel, conv_roles)
        assert found is not None, "apply follows matches"
        name, c, roles = found
        _schedule_conv(sch, sch.get_sblock(name), c, roles)
