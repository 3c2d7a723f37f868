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
    as nothing."""


Layout = TileLayout | ComposeLayout
DEFAULT_LAYOUT = DefaultLayout()
