"""`T.index_map` in `R.layout_transform`: parsed without evaluation, printed as
TVM 0.27 prints it (the expected lines are TVM's output for the same input),
output shapes as TVM infers them, and located errors."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.index_map import IndexMap, IndexMapError, analyze
from tvmlite.transform import LegalizeOps

HEAD = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n"
HEAD += "# from tvm.script import relax as R\n\n"


def module(shape: str, dtype: str, call: str) -> str:
    return (
        HEAD
        + "@I.ir_module\nclass Module:\n    @R.function\n"
        + f'    def main(x: R.Tensor({shape}, dtype="{dtype}")):\n'
        + f"        gv = {call}\n        return gv\n"
    )


def printed_binding(text: str) -> str:
    out = tvmlite.parse(text).script()
    return next(line.strip() for line in out.splitlines() if line.strip().startswith("gv:"))


# (input shape, dtype, what is written, the binding TVM 0.27 prints)
PRINTED = [
    (
        "(8, 6)",
        "int32",
        'R.layout_transform(x, index_map=T.index_map(lambda i, j: (i // 4, j, i % 4), index_dtype="int32"))',
        'gv: R.Tensor((2, 6, 4), dtype="int32") = R.layout_transform(x, index_map=T.index_map(lambda i, j: (i // 4, j, i % 4)), pad_value=None)',
    ),
    (
        "(8, 6)",
        "int32",
        "R.layout_transform(x, index_map=T.index_map(lambda i, j: (i // 3, j, i % 3)), pad_value=T.int32(3))",
        'gv: R.Tensor((3, 6, 3), dtype="int32") = R.layout_transform(x, index_map=T.index_map(lambda i, j: (i // 3, j, i % 3)), pad_value=3)',
    ),
    (
        "(8, 6)",
        "int32",
        "R.layout_transform(x, index_map=lambda i, j: (j, i))",
        'gv: R.Tensor((6, 8), dtype="int32") = R.layout_transform(x, index_map=T.index_map(lambda i, j: (j, i)), pad_value=None)',
    ),
    (
        "(8, 6)",
        "int32",
        "R.layout_transform(x, index_map=T.index_map(lambda i, j: (i * 6 + j,)))",
        'gv: R.Tensor((48,), dtype="int32") = R.layout_transform(x, index_map=T.index_map(lambda i, j: (i * 6 + j,)), pad_value=None)',
    ),
    (
        "(8, 6)",
        "int32",
        "R.layout_transform(x, index_map=T.index_map(lambda i, j: (i, j), inverse_index_map=lambda i, j: (i, j)))",
        'gv: R.Tensor((8, 6), dtype="int32") = R.layout_transform(x, index_map=T.index_map(lambda i, j: (i, j), inverse_index_map=lambda i, j: (i, j)), pad_value=None)',
    ),
    (
        "(8, 6)",
        "int32",
        "R.layout_transform(x, index_map=T.index_map(lambda i, j: ((i * 6 + j) // 5, (i * 6 + j) % 5)), pad_value=7)",
        'gv: R.Tensor((10, 5), dtype="int32") = R.layout_transform(x, index_map=T.index_map(lambda i, j: ((i * 6 + j) // 5, (i * 6 + j) % 5)), pad_value=7)',
    ),
    (
        "(10, 20, 2, 2)",
        "float32",
        "R.layout_transform(x, index_map=T.index_map(lambda n, c, h, w: (n, c // 3, h, w, c % 3)), pad_value=2)",
        'gv: R.Tensor((10, 7, 2, 2, 3), dtype="float32") = R.layout_transform(x, index_map=T.index_map(lambda n, c, h, w: (n, c // 3, h, w, c % 3)), pad_value=T.float32(2.0))',
    ),
    # Lines of the corpus (TVM's own tests, printed by TVM 0.27), printed back.
    (
        "(850, 2048)",
        "float16",
        "R.layout_transform(x, index_map=T.index_map(lambda i, j: (i, j // 1024, j % 1024)), pad_value=None)",
        'gv: R.Tensor((850, 2, 1024), dtype="float16") = R.layout_transform(x, index_map=T.index_map(lambda i, j: (i, j // 1024, j % 1024)), pad_value=None)',
    ),
    (
        "(2, 3, 4, 5)",
        "float32",
        "R.layout_transform(x, index_map=T.index_map(lambda n, c, h, w: (n, h, w, c)), pad_value=None)",
        'gv: R.Tensor((2, 4, 5, 3), dtype="float32") = R.layout_transform(x, index_map=T.index_map(lambda n, c, h, w: (n, h, w, c)), pad_value=None)',
    ),
    (
        "(16,)",
        "float32",
        "R.layout_transform(x, index_map=T.index_map(lambda i: (i % 16,)), pad_value=None)",
        'gv: R.Tensor((16,), dtype="float32") = R.layout_transform(x, index_map=T.index_map(lambda i: (i % 16,)), pad_value=None)',
    ),
]


@pytest.mark.parametrize("shape,dtype,written,expected", PRINTED)
def test_prints_as_tvm(shape: str, dtype: str, written: str, expected: str) -> None:
    text = module(shape, dtype, written)
    assert printed_binding(text) == expected
    printed = tvmlite.parse(text).script()
    assert tvmlite.parse(printed).script() == printed


def test_symbolic_shape() -> None:
    text = module(
        '("n", "c")', "float32", "R.layout_transform(x, index_map=lambda i, j: (j // 4, i, j % 4))"
    )
    line = printed_binding(text)
    assert line.startswith('gv: R.Tensor(((c + 3) // 4, n, 4), dtype="float32")')
    x = np.arange(30, dtype="float32").reshape(3, 10)
    out = tvmlite.build(tvmlite.parse(text))["main"](x)
    want = np.pad(x, ((0, 0), (0, 2))).reshape(3, 3, 4).transpose(1, 0, 2)
    np.testing.assert_array_equal(out, want)


def test_padding_is_never_read() -> None:
    """The kernel reads the input only outside the padding (a checked build
    would raise on an out-of-bounds load)."""
    text = module(
        "(5,)", "float32", "R.layout_transform(x, index_map=lambda i: (i // 4, i % 4), pad_value=9)"
    )
    mod = tvmlite.parse(text)
    legal = LegalizeOps()(mod)
    assert "te_layout_transform_with_pad" in legal.functions
    x = np.arange(5, dtype="float32")
    out = tvmlite.build(mod, checked=True)["main"](x)
    np.testing.assert_array_equal(out, [[0, 1, 2, 3], [4, 9, 9, 9]])


def test_no_padding_kernel_name() -> None:
    text = module("(4, 8)", "float32", "R.layout_transform(x, index_map=lambda i, j: (j, i))")
    legal = LegalizeOps()(tvmlite.parse(text))
    assert "te_layout_transform" in legal.functions


@pytest.mark.parametrize(
    "written,message",
    [
        (
            "R.layout_transform(x, index_map=T.index_map(lambda i, j: (j + 1, i)))",
            "index_map: an index does not start at 0",
        ),
        ("R.layout_transform(x, index_map=T.index_map(lambda i: (i,)))", "takes 1 indices"),
        ("R.layout_transform(x, index_map=3)", "index_map must be T.index_map"),
        (
            "R.layout_transform(x, index_map=T.index_map(lambda i, j: (i, j), axis=1))",
            "unexpected keyword argument 'axis'",
        ),
        (
            "R.layout_transform(x, index_map=lambda i, j: (i, j), axis_separators=[1])",
            "unknown keyword argument 'axis_separators'",
        ),
        ("R.layout_transform(x, index_map=T.index_map(lambda i, i: (i,)))", "repeats"),
        ("R.layout_transform(x, index_map=T.index_map(lambda i, j: (k, i)))", "undefined name"),
        (
            'R.layout_transform(x, index_map=lambda i, j: (i, j), pad_value="a")',
            "pad_value must be a number",
        ),
    ],
)
def test_errors(written: str, message: str) -> None:
    with pytest.raises(tvmlite.ParseError, match=message) as info:
        tvmlite.parse(module("(8, 6)", "float32", written))
    assert ":9:" in str(info.value)  # located at the call's line


def _map(final: callable, n: int) -> IndexMap:
    vs = tuple(tir.Var(f"v{k}", "int64") for k in range(n))
    return IndexMap(vs, tuple(final(*vs)))


def _i(v: int) -> tir.IntImm:
    return tir.IntImm("int64", v)


def test_analyze_rejects_non_tilings() -> None:
    def fd(a, b):
        return tir.BinaryOp("floordiv", a, _i(b), "int64")

    def fm(a, b):
        return tir.BinaryOp("floormod", a, _i(b), "int64")

    shape = (_i(8), _i(6))
    with pytest.raises(IndexMapError, match="drops"):  # j unused
        analyze(_map(lambda i, j: (i,), 2), shape)
    with pytest.raises(IndexMapError, match="tile"):  # i // 4 and i % 2 leave a gap
        analyze(_map(lambda i, j: (fd(i, 4), j, fm(i, 2)), 2), shape)
    i, j = tir.Var("i", "int64"), tir.Var("j", "int64")
    fused = tir.BinaryOp("add", tir.BinaryOp("mul", i, _i(6), "int64"), j, "int64")
    with pytest.raises(IndexMapError, match="two different"):  # i alone and in i * 6 + j
        analyze(IndexMap((i, j), (i, fused)), shape)
    layout = analyze(_map(lambda i, j: (fd(i, 3), j, fm(i, 3)), 2), shape)
    assert [d.value for d in layout.shape] == [3, 6, 3]
    assert layout.padded
