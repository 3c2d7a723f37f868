"""Buffer layouts of TVM 0.27's tirx dialect: `layout=T.TileLayout(T.S[...])`.

A tile layout maps a buffer's logical index to storage: shard iterators
(extent, stride, axis) written `T.S[(8, 4):(4 @ Axis.laneid, 1)]`, optional replica
iterators (`+ T.R[2:1 @ Axis.warpid]`) and an offset per axis (`+ 3 @ Axis.laneid`).
An axis names where a stride steps: memory (`m`, written as a bare stride) or a
hardware dimension (`P`, `F`, `laneid`, `warpid`, ...). `T.ComposeLayout` adds a
swizzle on top of a tile layout.

tvmlite keeps layouts as data so that they print back and compare; nothing lowers
through them (a CPU build of such a buffer refuses it by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tvmlite.dsl.tir import PrimExpr

MEMORY_AXIS = "m"  # the axis of plain strides
# The axes TVM 0.27 counts as threads: iterators on them spread a buffer over threads,
# and each thread's own storage (TVM's `Layout.storage()`) leaves them out.
THREAD_AXES = frozenset({"laneid", "warpid", "tid_in_wg", "wid_in_wg", "wgid", "tx", "bx", "cbx"})


@dataclass(frozen=True, slots=True)
class LayoutIter:
    """One iterator of a tile layout: `extent` steps of `stride` along `axis`."""

    extent: PrimExpr
    stride: PrimExpr
    axis: str = MEMORY_AXIS


@dataclass(frozen=True, slots=True)
class TileLayout:
    shard: tuple[LayoutIter, ...]
    replica: tuple[LayoutIter, ...] = ()
    offset: tuple[tuple[str, PrimExpr], ...] = ()  # (axis, value), as written


@dataclass(frozen=True, slots=True)
class ComposeLayout:
    """A swizzle (`per_element`, `swizzle_len`, `atom_len`) over a tile layout."""

    per_element: int
    swizzle_len: int
    atom_len: int
    tile: TileLayout
    swizzle_inner: bool = True


@dataclass(frozen=True, slots=True)
class DefaultLayout:
    """The layout a buffer declared without one gets from its context (row-major in
    a tirx function, none in an `s_tir` one or on Trainium's memories); it prints
    as nothing.

    With `over`, it is the row-major layout of another shape: what a view keeps of
    the buffer it reshapes (TVM 0.27 gives `A.view(16, 64)` of a `(1024,)` buffer the
    layout `T.S[1024:1]`), or a compact layout written so (`T.S[64:1]` on an `(8, 8)`
    buffer). Its elements sit where row-major ones would, and it prints as written."""

    over: tuple[PrimExpr, ...] | None = None


Layout = TileLayout | ComposeLayout
DEFAULT_LAYOUT = DefaultLayout()


def inherited(
    layout: Layout | DefaultLayout | None, shape: tuple[PrimExpr, ...]
) -> Layout | DefaultLayout | None:
    """The layout a view keeps of a buffer of `shape` laid out by `layout`: its own
    default layout is the row-major one of `shape`, spelled out."""
    if layout == DEFAULT_LAYOUT:
        return DefaultLayout(shape)
    return layout


def settled(
    layout: Layout | DefaultLayout | None, shape: tuple[PrimExpr, ...]
) -> Layout | DefaultLayout | None:
    """`layout` for a buffer of `shape`: a row-major layout over that very shape is
    the default one (`T.S[(4, 4):(4, 1)]` on a `(4, 4)` buffer prints as nothing)."""
    if isinstance(layout, DefaultLayout) and layout.over is not None:
        if _same_consts(layout.over, shape):
            return DEFAULT_LAYOUT
    return layout


def spelled(layout: Layout | DefaultLayout | None, shape: tuple[PrimExpr, ...]) -> Layout | None:
    """The layout as a tile layout would write it (a default one: row-major)."""
    if isinstance(layout, DefaultLayout):
        return row_major(shape if layout.over is None else layout.over)
    return layout


def compact_extents(
    layout: Layout | DefaultLayout | None, shape: tuple[PrimExpr, ...]
) -> tuple[PrimExpr, ...] | None:
    """The extents of a tile layout that is row-major over them in memory, with as
    many elements as `shape` (`T.S[(4, 4):(4, 1)]` or `T.S[16:1]` for a `(16,)`
    buffer): its elements sit where row-major ones would. None for any other layout."""
    if not isinstance(layout, TileLayout) or layout.replica or layout.offset:
        return None
    extents = tuple(it.extent for it in layout.shard)
    expected = row_major(extents).shard
    for it, want in zip(layout.shard, expected, strict=True):
        if it.axis != MEMORY_AXIS or _const(it.stride) is None:
            return None
        if _const(it.stride) != _const(want.stride):
            return None
    count = const_elements(extents)
    return extents if count is not None and count == const_elements(shape) else None


def _same_consts(a: tuple[PrimExpr, ...], b: tuple[PrimExpr, ...]) -> bool:
    if len(a) != len(b):
        return False
    values = [_const(x) for x in (*a, *b)]
    return None not in values and values[: len(a)] == values[len(a) :]


@dataclass(frozen=True, slots=True)
class Storage:
    """What one thread holds of a buffer: `size` elements spread over `span` slots."""

    span: int
    size: int


def thread_distributed(layout: Layout | DefaultLayout | None) -> bool:
    """Whether the layout spreads its buffer over threads (an iterator on a thread axis)."""
    tile = layout.tile if isinstance(layout, ComposeLayout) else layout
    return isinstance(tile, TileLayout) and any(it.axis in THREAD_AXES for it in tile.shard)


def per_thread_storage(
    layout: Layout | DefaultLayout | None, shape: tuple[PrimExpr, ...]
) -> Storage | None:
    """Span and size of one thread's storage (TVM's `layout.storage()`: the iterators
    off thread axes); a default layout is row-major over `shape`. None when they are not
    constants, or the buffer has no layout."""
    tile = layout.tile if isinstance(layout, ComposeLayout) else layout
    if isinstance(tile, DefaultLayout):
        size = const_elements(shape)
        return None if size is None else Storage(size, size)
    if not isinstance(tile, TileLayout):
        return None
    span, size = 1, 1
    for it in tile.shard:
        if it.axis in THREAD_AXES:
            continue
        extent, stride = _const(it.extent), _const(it.stride)
        if extent is None or stride is None:
            return None
        span += (extent - 1) * abs(stride)
        size *= extent
    return Storage(span, size)


def row_major(shape: tuple[PrimExpr, ...]) -> TileLayout:
    """The layout a buffer of `shape` gets by default, written out."""
    from tvmlite.dsl import tir  # tir imports this module

    strides: list[PrimExpr] = []
    step: PrimExpr = tir.IntImm("int32", 1)
    for extent in reversed(shape):
        strides.append(step)
        if isinstance(step, tir.IntImm) and isinstance(extent, tir.IntImm):
            step = tir.IntImm(extent.dtype, step.value * extent.value)
        else:
            step = tir.BinaryOp("mul", step, extent, extent.dtype)
    pairs = zip(shape, reversed(strides), strict=True)
    return TileLayout(tuple(LayoutIter(extent, stride) for extent, stride in pairs))


def const_elements(shape: tuple[PrimExpr, ...]) -> int | None:
    """The number of elements of a shape, when it is constant."""
    count = 1
    for dim in shape:
        value = _const(dim)
        if value is None:
            return None
        count *= value
    return count


def _const(value: PrimExpr) -> int | None:
    from tvmlite.dsl import tir

    return value.value if isinstance(value, tir.IntImm) else None
