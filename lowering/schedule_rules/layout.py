"""Transposes and layout changes: stages that write along one axis while the
data they read runs along another (permute_dims, layout_transform, NCHW to
NHWC, a transposed operand of an elementwise op).

Walking the output in order would read the input with a stride of a whole
row per element. The schedule tiles the two axes instead: a tile of `TILE`
input rows by `W` output elements is written W lanes at a time, and each
cache line read from the input serves every step of the tile.
"""

from __future__ import annotations

from tvmlite.lowering.codegen.cpu_traits import CPUTraits
from tvmlite.lowering.schedule import Schedule
from tvmlite.lowering.schedule_rules.kernel import Stage
from tvmlite.lowering.schedule_rules.loops import exceeds, parallel_outer

TILE = 16  # input rows per tile: 16 cache lines in flight


def crossed_axis(stage: Stage) -> int | None:
    """The loop along which the stage's data is contiguous, when it is not the
    loop along which it writes (the innermost)."""
    axes = stage.innermost_axes()
    last = len(stage.loops) - 1
    if stage.is_reduction or len(axes) != 1 or axes[0] == last:
        return None
    axis = axes[0]
    return None if stage.extents[axis] == 1 or stage.extents[last] == 1 else axis


def tile_transpose(sch: Schedule, stage: Stage, axis: int, traits: CPUTraits) -> None:
    """Tile the write axis (innermost) by W lanes and `axis` by TILE, both tile
    loops innermost, the write axis vectorized; the rest runs in parallel."""
    loops = sch.get_loops(stage.name)
    write, read = loops[-1], loops[axis]
    width = traits.lanes(stage.output.dtype)
    outer = [lp for i, lp in enumerate(loops) if i not in (axis, len(loops) - 1)]
    if exceeds(stage.extents[axis], TILE):
        tile_out, read = sch.split(read, factors=[None, TILE])
        outer.append(tile_out)
    if exceeds(stage.extents[-1], width):
        tile_out, write = sch.split(write, factors=[None, width])
        outer.append(tile_out)
    sch.reorder(*outer, read, write)
    sch.vectorize(write)
    parallel_outer(sch, outer, stage.work)
