# ruff: noqa: E501  (TVMScript texts)
"""The conv2d rule of the default CPU schedule (lowering/schedule_rules/conv.py):
legalized convolutions in NCHW and NHWC, with strides, padding, dilation, groups
and fused epilogues, scheduled and checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from rules_common import apply_rule, prim_funcs, random_inputs, run

from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules.conv import Conv
from tvmlite.lowering.schedule_rules.gemm import Gemm

CONV, GEMM = Conv(), Gemm()


def conv_nchw(
    x: np.ndarray, w: np.ndarray, stride: int, pad: int, dilation: int, groups: int
) -> np.ndarray:
    """NumPy conv2d, NCHW data and OIHW weights."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    span_h, span_w = dilation * (kh - 1) + 1, dilation * (kw - 1) + 1
    win = sliding_window_view(x, (span_h, span_w), axis=(2, 3))[..., ::dilation, ::dilation]
    win = win[:, :, ::stride, ::stride]  # n, c, oh, ow, kh, kw
    cg, fg = x.shape[1] // groups, w.shape[0] // groups
    outs = [
        np.einsum("nchwyx,fcyx->nfhw", win[:, g * cg : (g + 1) * cg], w[g * fg : (g + 1) * fg])
        for g in range(groups)
    ]
    return np.concatenate(outs, axis=1)


def module(
    x: tuple,
    w: tuple,
    out: tuple,
    attrs: str,
    layout: str = "NCHW",
    kernel: str = "OIHW",
    epilogue: bool = False,
) -> str:
    params = f'x: R.Tensor({x}, "float32"), w: R.Tensor({w}, "float32")'
    call = f'R.nn.conv2d(x, w, {attrs}, data_layout="{layout}", kernel_layout="{kernel}", out_dtype="float32")'
    body = f"gv = {call}"
    if epilogue:
        params += f', b: R.Tensor((1, {out[1]}, 1, 1), "float32")'
        body = f"y = {call}\n            gv = R.nn.relu(R.add(y, b))"
    return f"""
@I.ir_module
class Module:
    @R.function
    def main({params}) -> R.Tensor({out}, "float32"):
        with R.dataflow():
            {body}
            R.output(gv)
        return gv
"""


CASES = [
    # x shape, w shape, stride, pad, dilation, groups
    ((1, 8, 10, 10), (32, 8, 3, 3), 1, 1, 1, 1),  # resnet-like 3x3, packed channels
    ((1, 3, 23, 23), (32, 3, 7, 7), 2, 3, 1, 1),  # stem-like 7x7 stride 2
    ((2, 5, 9, 11), (20, 5, 3, 2), 1, 0, 1, 1),  # odd sizes, no padding, batch 2
    ((1, 4, 12, 12), (16, 4, 3, 3), 2, 2, 2, 1),  # dilation
    ((1, 8, 9, 9), (16, 4, 3, 3), 1, 1, 1, 2),  # groups: data read along the channels
    ((1, 16, 8, 8), (16, 1, 3, 3), 1, 1, 1, 16),  # depthwise
    ((1, 16, 16, 16), (16, 1, 3, 3), 2, 1, 1, 16),  # depthwise stride 2: data by phase
    ((1, 8, 15, 15), (8, 1, 3, 3), 2, 1, 1, 8),  # ... an odd padded width: no phases
]


def _out_shape(x: tuple, w: tuple, stride: int, pad: int, dilation: int) -> tuple:
    span = [dilation * (k - 1) + 1 for k in w[2:]]
    return (x[0], w[0], *((x[d + 2] + 2 * pad - span[d]) // stride + 1 for d in range(2)))


@pytest.mark.parametrize(("x", "w", "stride", "pad", "dilation", "groups"), CASES)
def test_nchw_matches_numpy(
    x: tuple, w: tuple, stride: int, pad: int, dilation: int, groups: int
) -> None:
    out = _out_shape(x, w, stride, pad, dilation)
    attrs = f"strides=[{stride}, {stride}], padding=[{pad}, {pad}, {pad}, {pad}], dilation=[{dilation}, {dilation}], groups={groups}"
    (func,) = prim_funcs(module(x, w, out, attrs)).values()
    sch = apply_rule(func, CONV)
    assert sch is not None, "the conv rule did not take the block"
    data, weight = random_inputs(func)
    got = run(sch.mod["main"], [data, weight])
    np.testing.assert_allclose(
        got, conv_nchw(data, weight, stride, pad, dilation, groups), rtol=1e-4, atol=1e-4
    )


def test_strided_depthwise_reads_its_data_by_phase() -> None:
    """Stride 2 along the vectorized width: the padding stage writes the data as
    [..., w % 2, w // 2], and the convolution reads it contiguously in x."""
    text = module(
        (1, 16, 16, 16),
        (16, 1, 3, 3),
        (1, 16, 8, 8),
        "strides=[2, 2], padding=[1, 1, 1, 1], groups=16",
    )
    (func,) = prim_funcs(text).values()
    sch = apply_rule(func, CONV)
    assert sch is not None
    text = sch.mod.script().replace("T.int64(", "(")
    assert "pad_temp = T.alloc_buffer(((1), (16), (18), (2), (9)))" in text
    assert "v_rx % (2), v_rx // (2) + v_xx]" in text


@pytest.mark.parametrize("groups", [1, 2])
def test_nhwc_hwio_matches_numpy(groups: int) -> None:
    x, w = (1, 11, 13, 8), (3, 3, 8 // groups, 32)
    attrs = f"strides=[2, 2], padding=[1, 1, 1, 1], groups={groups}"
    out = (1, 6, 7, 32)
    (func,) = prim_funcs(module(x, w, out, attrs, "NHWC", "HWIO")).values()
    sch = apply_rule(func, CONV)
    assert sch is not None
    data, weight = random_inputs(func)
    got = run(sch.mod["main"], [data, weight])
    want = conv_nchw(data.transpose(0, 3, 1, 2), weight.transpose(3, 2, 0, 1), 2, 1, 1, groups)
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


def test_bias_relu_epilogue_is_fused() -> None:
    x, w, out = (1, 6, 9, 9), (32, 6, 3, 3), (1, 32, 9, 9)
    (func,) = prim_funcs(
        module(x, w, out, "strides=[1, 1], padding=[1, 1, 1, 1]", epilogue=True)
    ).values()
    sch = apply_rule(func, CONV)
    assert sch is not None
    blocks = [b.name for b in Tree(sch.mod["main"]).blocks]
    assert len(blocks) == 6, blocks  # root, pad, packed weight, init, update, write-back + epilogue
    data, weight, bias = random_inputs(func)
    got = run(sch.mod["main"], [data, weight, bias])
    want = np.maximum(conv_nchw(data, weight, 1, 1, 1, 1) + bias, 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv_and_gemm_rules_do_not_overlap() -> None:
    x, w, out = (1, 4, 6, 6), (16, 4, 3, 3), (1, 16, 6, 6)
    (func,) = prim_funcs(module(x, w, out, "strides=[1, 1], padding=[1, 1, 1, 1]")).values()
    assert apply_rule(func, GEMM) is None


def test_nchw_write_back_reads_the_tile_along_its_registers() -> None:
    """The accumulator tile is [x, f] (channels last, whole registers); the write
    back to NCHW runs the channel loop innermost, vectorized, so the tile is never
    gathered (a gathered stack tile would stay in memory)."""
    x, w, out = (1, 4, 8, 8), (32, 4, 3, 3), (1, 32, 8, 8)
    (func,) = prim_funcs(module(x, w, out, "strides=[1, 1], padding=[1, 1, 1, 1]")).values()
    sch = apply_rule(func, CONV)
    assert sch is not None
    write_back = sch.mod.script().split('T.block("conv2d_nchw_local")')[0].rsplit("for ", 2)
    assert "T.vectorized(T.int64(32))" in write_back[-1]
    assert "range(T.int64(8))" in write_back[-2]
