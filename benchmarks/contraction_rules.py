"""The matmul and conv2d rules of the default CPU schedule (lowering/schedule_rules/
gemm.py, conv.py) on the anchor workloads, against NumPy, from one run: each
workload is legalized and fused as `build` does, every prim function the rules
take is scheduled, the result is checked against NumPy, then both are timed,
interleaved round by round.

  OPENBLAS_NUM_THREADS=1 python benchmarks/contraction_rules.py [--rounds 20]

Until the native thread pool lands, `T.parallel` loops run serially: compare with
NumPy on one BLAS thread (as above) to see the single-thread code. Times are
medians in ms; GFLOP/s count 2 flops per multiply-add.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _timing import interleaved
from numpy.lib.stride_tricks import sliding_window_view

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.pipeline import get_pipeline
from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules.conv import is_conv, schedule_conv
from tvmlite.lowering.schedule_rules.gemm import is_gemm, schedule_gemm
from tvmlite.tir import Schedule

HERE = Path(__file__).parent / "workloads"


def conv_im2col(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """NCHW conv2d as NumPy does it best: pad, im2col copy, one sgemm."""
    f, c, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = sliding_window_view(x[0], (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
    oh, ow = win.shape[1:3]
    cols = np.ascontiguousarray(win.transpose(0, 3, 4, 1, 2)).reshape(c * kh * kw, oh * ow)
    return (w.reshape(f, -1) @ cols).reshape(1, f, oh, ow)


def mlp(x, w1, b1, w2, b2, w3, b3):  # noqa: ANN001, ANN201 - NumPy arrays
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return h @ w3 + b3


# name: (file, input shapes, NumPy reference, flops)
WORKLOADS = {
    "matmul 256": ("matmul_256", [(256, 256)] * 2, np.matmul, 2 * 256**3),
    "matmul 512": ("matmul_512", [(512, 512)] * 2, np.matmul, 2 * 512**3),
    "matmul 1024": ("matmul_1024", [(1024, 1024)] * 2, np.matmul, 2 * 1024**3),
    "bmm 16x128x64x128": (
        "bmm_16x128x64x128",
        [(16, 128, 64), (16, 64, 128)],
        np.matmul,
        2 * 16 * 128 * 64 * 128,
    ),
    "conv2d 3x3 (1,64,56,56)": (
        "conv2d_resnet_3x3",
        [(1, 64, 56, 56), (64, 64, 3, 3)],
        lambda x, w: conv_im2col(x, w, 1, 1),
        2 * 64 * 56 * 56 * 64 * 9,
    ),
    "conv2d 7x7 s2 stem": (
        "conv2d_stem_7x7s2",
        [(1, 3, 224, 224), (64, 3, 7, 7)],
        lambda x, w: conv_im2col(x, w, 2, 3),
        2 * 64 * 112 * 112 * 3 * 49,
    ),
    "MLP 64x784-512-512-10": (
        "mlp_64x784_512_512_10",
        [(64, 784), (784, 512), (512,), (512, 512), (512,), (512, 10), (10,)],
        mlp,
        2 * 64 * (784 * 512 + 512 * 512 + 512 * 10),
    ),
}


def with_rules(text: str) -> IRModule:
    """The module as `build` fuses it, its contractions scheduled by the rules."""
    mod = get_pipeline("default").run(tvmlite.parse(text))
    functions = dict(mod.functions)
    for name, func in mod.functions.items():
        if not isinstance(func, tir.PrimFunc):
            continue
        sch = Schedule(IRModule({name: func}, dialect=mod.dialect))
        for block in Tree(func).blocks:
            rv = sch.get_sblock(block.name) if block.name != "root" else None
            if rv is not None and is_gemm(sch, rv):
                schedule_gemm(sch, rv)
                break
            if rv is not None and is_conv(sch, rv):
                schedule_conv(sch, rv)
                break
        functions[name] = sch.mod[name]
    return IRModule(functions, dict(mod.attrs), dict(mod.global_infos), dict(mod.metadata))


def call(fn: Callable[..., Any], inputs: list[np.ndarray]) -> Callable[[], Any]:
    return lambda: fn(*inputs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'workload':26} {'tvmlite ms':>10} {'numpy ms':>9} {'ratio':>6} {'GFLOP/s':>8}")
    for label, (file, shapes, reference, flops) in WORKLOADS.items():
        inputs = [rng.standard_normal(s).astype("float32") for s in shapes]
        if file.startswith("mlp"):
            inputs[1:] = [a * np.float32(0.05) for a in inputs[1:]]
        fn = tvmlite.build(with_rules((HERE / f"{file}.tvms").read_text()))["main"]
        np.testing.assert_allclose(fn(*inputs), reference(*inputs), rtol=1e-3, atol=1e-3)
        contenders = {"tvmlite": call(fn, inputs), "numpy": call(reference, inputs)}
        ms = interleaved(contenders, args.rounds)
        ratio = ms["tvmlite"] / ms["numpy"]
        gflops = flops / ms["tvmlite"] / 1e6
        print(f"{label:26} {ms['tvmlite']:10.3f} {ms['numpy']:9.3f} {ratio:6.2f} {gflops:8.1f}")


if __name__ == "__main__":
    main()
