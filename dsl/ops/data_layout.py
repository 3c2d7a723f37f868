"""Data layouts of Relax operators (`NCHW`, `NHWC`, `NCHW16c`, `OIHW4o`) as TVM reads
them: what a layout string may be, and how a shape moves between a layout and the
plain layout an operator's rule is written in (`NCHW` for a 2-d convolution's data).

A layout is a sequence of axes: a primal axis is an upper-case letter, a sub-axis a
factor and the lower-case letter of the primal axis it splits (`16c` holds 16 of
`C`). Each letter appears once, a sub-axis only beside its primal axis and at most one
per primal axis. A layout converts to a plain one when both name the same primal
axes. Moving a shape to the plain layout multiplies a split axis by its factor
(`NCHW4c` of (2, 1, 26, 26, 4) is `NCHW` (2, 4, 26, 26)); moving back rounds the
outer axis up (`C // 4`, rounded up) and gives each sub-axis its factor: TVM's
`BijectiveLayout.ForwardShape` and `BackwardShape`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tvmlite.dsl import tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, Shape

_AXIS = re.compile(r"[A-Z]|[1-9][0-9]*[a-z]")


@dataclass(frozen=True, slots=True)
class DataLayout:
    name: str
    axes: tuple[str, ...]  # "N", "C", "16c"

    @property
    def ndim(self) -> int:
        return len(self.axes)

    @property
    def primal(self) -> str:
        return "".join(a for a in self.axes if a.isupper())

    def factor(self, letter: str) -> int | None:
        """The factor of the sub-axis splitting primal axis `letter`, if any."""
        for axis in self.axes:
            if axis[-1] == letter.lower() and not axis.isupper():
                return int(axis[:-1])
        return None


def parse_layout(name: str) -> DataLayout | None:
    """The layout `name` spells, None when TVM would reject it."""
    axes = tuple(_AXIS.findall(name))
    if not name or "".join(axes) != name:
        return None
    letters = [a[-1] for a in axes]
    if len(set(letters)) != len(letters):
        return None  # an axis twice, or two sub-axes of one primal axis
    if any(a[-1].upper() not in letters for a in axes if not a.isupper()):
        return None  # a sub-axis without its primal axis
    return DataLayout(name, axes)


def check_layout(ctx: InferCtx, name: str, plain: str, what: str) -> DataLayout:
    """`name` as a layout convertible to `plain`, or TVM's refusal."""
    layout = parse_layout(name)
    if layout is None or sorted(layout.primal) != sorted(plain):
        ctx.fail(
            f"the {what} layout {name} is not convertible from {plain} (TVM requires the "
            f"same axes, each once, sub-axes such as 4c beside their axis)"
        )
    return layout


def check_rank(ctx: InferCtx, layout: DataLayout, ndim: int, what: str) -> None:
    if ndim not in (-1, layout.ndim):
        ctx.fail(f"layout {layout.name} requires the {what} to have rank {layout.ndim}, got {ndim}")


def to_plain(
    ctx: InferCtx, layout: DataLayout, shape: Shape, plain: str
) -> dict[str, tir.PrimExpr]:
    """Dims by plain axis letter of a tensor of `layout` and `shape`."""
    dims: dict[str, tir.PrimExpr] = {}
    for axis, dim in zip(layout.axes, shape, strict=True):
        if axis.isupper():
            factor = layout.factor(axis)
            dims[axis] = dim if factor is None else sa.mul(dim, sa.const(factor))
        elif sa.differ(dim, sa.const(int(axis[:-1]))):
            ctx.fail(f"layout {layout.name} has a sub-axis {axis}, but the dim is {sa.show(dim)}")
    return {letter: dims[letter] for letter in plain}


def from_plain(layout: DataLayout, dims: dict[str, tir.PrimExpr]) -> Shape:
    """The shape in `layout` of a tensor whose dims by plain axis letter are `dims`."""
    out: list[tir.PrimExpr] = []
    for axis in layout.axes:
        if not axis.isupper():
            out.append(sa.const(int(axis[:-1])))
            continue
        factor = layout.factor(axis)
        out.append(dims[axis] if factor is None else sa.ceildiv(dims[axis], sa.const(factor)))
    return tuple(out)
