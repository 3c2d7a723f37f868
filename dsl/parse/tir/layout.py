"""`layout=` and `allocated_addr=` of tirx buffer declarations (dsl/tir_layout.py).

The spec inside `T.TileLayout(...)` is a sum: `T.S[shape:strides]` (the shard),
`T.R[shape:strides]` (replicas) and offset terms `value @ Axis.name` or a bare value
(memory axis). A stride is `value @ Axis.name` or a bare value.
"""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.dsl.parse.tir.expr import ExprParser
from tvmlite.dsl.tir_layout import (
    DEFAULT_LAYOUT,
    MEMORY_AXIS,
    ComposeLayout,
    DefaultLayout,
    Layout,
    LayoutIter,
    TileLayout,
    compact_extents,
    const_elements,
    row_major,
    settled,
)
from tvmlite.grammar import syntax

_TRAINIUM_SCOPES = ("trn.sbuf", "trn.psum")


def buffer_layout(
    p: ExprParser,
    node: syntax.Node | None,
    shape: tuple[tir.PrimExpr, ...],
    scope: str,
    s_tir: bool,
) -> Layout | DefaultLayout | None:
    """The layout as TVM's parser sets it, or DEFAULT_LAYOUT where that is what the
    declaration gets without one (so that both spellings are the same IR, as TVM
    prints them the same). A compact row-major layout over other extents is a
    default one `over` them (dsl/tir_layout.py): the elements sit where they would."""
    if node is None:
        return None if scope in _TRAINIUM_SCOPES and not s_tir else DEFAULT_LAYOUT
    if isinstance(node, syntax.Constant) and node.value is None:
        return DEFAULT_LAYOUT if s_tir else None
    layout = layout_value(p, node)
    extents = compact_extents(layout, shape)
    if extents is None:
        return layout
    if s_tir and const_elements(shape) == 1:
        return layout  # `T.S[1:1]` names an s_tir scalar bare, which None does not
    return settled(DefaultLayout(extents), shape)


def layout_value(p: ExprParser, node: syntax.Node) -> Layout:
    name = syntax.dotted(node.func) if isinstance(node, syntax.Call) else None
    if not isinstance(node, syntax.Call) or name not in ("T.TileLayout", "T.ComposeLayout"):
        raise p.error("layout= expects T.TileLayout(...), T.ComposeLayout(...) or None", node)
    if name == "T.TileLayout":
        if len(node.args) != 1 or node.keywords:
            raise p.error("T.TileLayout expects one spec such as T.S[(8, 4):(4, 1)]", node)
        return tile_layout(p, node.args[0])
    args = list(node.args)
    inner = {kw.name: kw.value for kw in node.keywords}
    unknown = set(inner) - {"swizzle_inner"}
    if len(args) != 4 or unknown:
        raise p.error("T.ComposeLayout expects (per_element, swizzle_len, atom_len, tile)", node)
    tile = layout_value(p, args[3])
    if not isinstance(tile, TileLayout):
        raise p.error("T.ComposeLayout composes a T.TileLayout", args[3])
    swizzle_inner = True
    if "swizzle_inner" in inner:
        flag = inner["swizzle_inner"]
        if not isinstance(flag, syntax.Constant) or not isinstance(flag.value, bool):
            raise p.error("swizzle_inner= must be True or False", flag)
        swizzle_inner = flag.value
    sizes = [p.int_arg(arg, "a swizzle size") for arg in args[:3]]
    return ComposeLayout(sizes[0], sizes[1], sizes[2], tile, swizzle_inner)


def tile_layout(p: ExprParser, spec: syntax.Node) -> TileLayout:
    terms: list[syntax.Node] = []
    _flatten_sum(spec, terms)
    shard: tuple[LayoutIter, ...] | None = None
    replica: tuple[LayoutIter, ...] = ()
    offset: list[tuple[str, tir.PrimExpr]] = []
    for term in terms:
        kind = syntax.dotted(term.value) if isinstance(term, syntax.Subscript) else None
        if kind == "T.S" and shard is None:
            shard = _iters(p, term)
        elif kind == "T.R" and not replica:
            replica = _iters(p, term)
        elif kind is not None:
            raise p.error(f"a layout spec has one {kind}[...]", term)
        else:
            axis, value = _on_axis(p, term)
            if any(axis == seen for seen, _ in offset):
                raise p.error(f"the layout offset names Axis.{axis} twice", term)
            offset.append((axis, value))
    if shard is None:
        raise p.error("a layout spec needs its shard T.S[shape:strides]", spec)
    return TileLayout(shard, replica, tuple(offset))


def _flatten_sum(node: syntax.Node, out: list[syntax.Node]) -> None:
    if isinstance(node, syntax.BinOp) and node.op == "+":
        _flatten_sum(node.left, out)
        _flatten_sum(node.right, out)
    else:
        out.append(node)


def _iters(p: ExprParser, node: syntax.Subscript) -> tuple[LayoutIter, ...]:
    """`T.S[(8, 4):(4, 1)]`, `T.S[32:1]`, or extents only (`T.S[8, 4]`, row-major)."""
    if len(node.indices) == 1 and isinstance(node.indices[0], syntax.Slice):
        part = node.indices[0]
        if part.start is None or part.stop is None or part.step is not None:
            raise p.error("expected shape:strides", part)
        extents = _items(part.start)
        strides = [_on_axis(p, s) for s in _items(part.stop)]
        if len(strides) != len(extents):
            raise p.error("a layout needs one stride per extent", part)
        return tuple(
            LayoutIter(p.expr(e), stride, axis)
            for e, (axis, stride) in zip(extents, strides, strict=True)
        )
    extents = [p.expr(e) for e in node.indices]
    return tuple(LayoutIter(e, s) for e, s in zip(extents, _row_major(extents), strict=True))


def _items(node: syntax.Node) -> tuple[syntax.Node, ...]:
    return node.elts if isinstance(node, syntax.Tuple) else (node,)


def _on_axis(p: ExprParser, node: syntax.Node) -> tuple[str, tir.PrimExpr]:
    """`4 @ Axis.laneid` or a bare value (the memory axis)."""
    if isinstance(node, syntax.BinOp) and node.op == "@":
        axis = node.right
        if not (isinstance(axis, syntax.Attribute) and syntax.dotted(axis.value) == "Axis"):
            raise p.error("expected an axis such as Axis.laneid after @", axis)
        return axis.attr, p.expr(node.left)
    return MEMORY_AXIS, p.expr(node)


def _row_major(extents: list[tir.PrimExpr]) -> list[tir.PrimExpr]:
    return [it.stride for it in row_major(tuple(extents)).shard]


def allocated_addr(p: ExprParser, node: syntax.Node) -> tuple[tir.PrimExpr, ...]:
    """`allocated_addr=5` or `[0, 0]` (TVM keeps a list either way)."""
    if isinstance(node, syntax.Constant) and node.value is None:
        return ()
    items = node.elts if isinstance(node, syntax.List | syntax.Tuple) else (node,)
    return tuple(p.expr(item) for item in items)
