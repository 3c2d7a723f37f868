"""Text of tirx buffer layouts (dsl/tir_layout.py) and allocated addresses, as
TVM 0.27 prints them: `layout=T.TileLayout(T.S[(8, 4):(4 @ Axis.laneid, 1)])`."""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import tir
from tvmlite.dsl.tir_layout import (
    DEFAULT_LAYOUT,
    MEMORY_AXIS,
    ComposeLayout,
    LayoutIter,
    TileLayout,
    spelled,
)

Text = Callable[[tir.PrimExpr], str]


def layout_kwargs(buffer: tir.Buffer, text: Text) -> list[str]:
    """The `layout=` / `allocated_addr=` keywords a declaration of `buffer` needs."""
    kwargs = []
    if buffer.layout != DEFAULT_LAYOUT:
        kwargs.append(f"layout={layout_text(spelled(buffer.layout, buffer.shape), text)}")
    addr = buffer.allocated_addr
    if len(addr) == 1:
        kwargs.append(f"allocated_addr={text(addr[0])}")
    elif addr:
        kwargs.append(f"allocated_addr=[{', '.join(text(a) for a in addr)}]")
    return kwargs


def layout_text(layout: TileLayout | ComposeLayout | None, text: Text) -> str:
    if layout is None:
        return "None"
    if isinstance(layout, ComposeLayout):
        sizes = f"{layout.per_element}, {layout.swizzle_len}, {layout.atom_len}"
        inner = "" if layout.swizzle_inner else ", swizzle_inner=False"
        return f"T.ComposeLayout({sizes}, {layout_text(layout.tile, text)}{inner})"
    spec = _iters("T.S", layout.shard, text)
    if layout.replica:
        spec += " + " + _iters("T.R", layout.replica, text)
    terms = [_on_axis(axis, value, text) for axis, value in layout.offset]
    if len(terms) == 1:
        spec += f" + {terms[0]}"
    elif terms:
        spec += f" + ({' + '.join(terms)})"
    return f"T.TileLayout({spec})"


def _iters(builder: str, iters: tuple[LayoutIter, ...], text: Text) -> str:
    extents = [text(it.extent) for it in iters]
    strides = [_on_axis(it.axis, it.stride, text) for it in iters]
    if len(iters) == 1:
        return f"{builder}[{extents[0]}:{strides[0]}]"
    return f"{builder}[({', '.join(extents)}):({', '.join(strides)})]"


def _on_axis(axis: str, value: tir.PrimExpr, text: Text) -> str:
    return text(value) if axis == MEMORY_AXIS else f"{text(value)} @ Axis.{axis}"
