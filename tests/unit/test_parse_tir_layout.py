"""tirx buffer layouts: what `layout=` / `allocated_addr=` parse into, which
spellings are the same IR, and the errors bad specs get (the printed forms are
golden tests in tests/golden/tir/buffer_layout.tvms)."""

from __future__ import annotations

import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.tir_layout import DEFAULT_LAYOUT, ComposeLayout, TileLayout

HEADER = "# from tvm.script import tirx as T\n# from tvm.tirx.layout import Axis\n\n"


def _alloc(kwargs: str, flags: str = "") -> tir.Buffer:
    text = HEADER + (
        f'@T.prim_func({flags})\ndef main(A: T.Buffer((8, 4), "float32")):\n'
        f"    B = T.alloc_buffer((8, 4), {kwargs})\n    A[0, 0] = B[0, 0]\n"
    )
    body = tvmlite.parse(text).body
    assert isinstance(body, tir.SeqStmt) and isinstance(body.seq[0], tir.AllocBuffer)
    return body.seq[0].buffer


def test_tile_layout_iterators_axes_and_offset():
    spec = "T.S[(8, 4):(1 @ Axis.P, 8)] + T.R[2:1 @ Axis.warpid] + (1 @ Axis.laneid + 3)"
    layout = _alloc(f"layout=T.TileLayout({spec})").layout
    assert isinstance(layout, TileLayout)
    assert [(int(it.extent.value), int(it.stride.value), it.axis) for it in layout.shard] == [
        (8, 1, "P"),
        (4, 8, "m"),
    ]
    assert [(it.axis, int(it.stride.value)) for it in layout.replica] == [("warpid", 1)]
    assert [(axis, int(v.value)) for axis, v in layout.offset] == [("laneid", 1), ("m", 3)]


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        ("", ""),
        ("layout=T.TileLayout(T.S[(8, 4):(4, 1)])", ""),
        ("layout=T.TileLayout(T.S[8, 4])", ""),
        ('scope="trn.sbuf", layout=None', "s_tir=True"),
        ("layout=None", "s_tir=True"),
    ],
)
def test_spellings_of_the_default_layout(kwargs: str, flags: str):
    """What TVM prints as no `layout=` at all is one IR, however it was written."""
    assert _alloc(kwargs, flags).layout is DEFAULT_LAYOUT


def test_none_layout_and_addresses_are_kept():
    buffer = _alloc('scope="trn.psum", allocated_addr=[0, 64]')
    assert buffer.layout is None  # Trainium memories have none by default
    assert [a.value for a in buffer.allocated_addr] == [0, 64]
    assert _alloc("layout=None").layout is None
    swizzled = _alloc("layout=T.ComposeLayout(3, 3, 3, T.TileLayout(T.S[32:1]))").layout
    assert isinstance(swizzled, ComposeLayout) and swizzled.swizzle_inner


def test_layouts_take_part_in_equality():
    a = tvmlite.parse(HEADER + "@T.prim_func\ndef main(A: T.Buffer((4,), \"float32\")):\n"
                      "    B = T.alloc_buffer((4,), layout=T.TileLayout(T.S[4:2]))\n"
                      "    A[0] = B[0]\n")  # fmt: skip
    text = a.script(dialect="tvm-0.27")
    assert not tvmlite.structural_equal(a, tvmlite.parse(text.replace("T.S[4:2]", "T.S[4:3]")))
    assert tvmlite.structural_equal(a, tvmlite.parse(text))


@pytest.mark.parametrize(
    "layout, message",
    [
        ("5", "layout= expects T.TileLayout(...), T.ComposeLayout(...) or None"),
        ("T.TileLayout(T.R[4:1])", "a layout spec needs its shard T.S[shape:strides]"),
        ("T.TileLayout(T.S[(8, 4):(1,)])", "a layout needs one stride per extent"),
        ("T.TileLayout(T.S[4:1 @ laneid])", "expected an axis such as Axis.laneid after @"),
        ("T.TileLayout(T.S[4:1] + 1 @ Axis.x + 2 @ Axis.x)", "names Axis.x twice"),
        ("T.ComposeLayout(3, 3, T.TileLayout(T.S[4:1]))", "T.ComposeLayout expects"),
    ],
)
def test_bad_layouts_are_located(layout: str, message: str):
    with pytest.raises(tvmlite.ParseError) as info:
        _alloc(f"layout={layout}")
    assert message in info.value.message and info.value.span.line == 6
