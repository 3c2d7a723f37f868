"""The graph rewrites of the "fast" pipeline: FuseTransposeMatmul (a matmul reads a
transposed operand in place) and DecomposeOpsForInference (batch_norm as a
per-channel multiply-add), each against NumPy and against the module it
rewrites, with what they must leave alone."""

from __future__ import annotations

import numpy as np
import pytest
from relax_text import dataflow_main

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.dsl.walk import walk
from tvmlite.transform import (
    AnnotateTIROpPattern,
    DeadCodeElimination,
    DecomposeOpsForInference,
    FuseOps,
    FuseTIR,
    FuseTransposeMatmul,
    LegalizeOps,
    Sequential,
)

HEADER = "from tvm.script import ir as I\nfrom tvm.script import tir as T\nfrom tvm.script import relax as R\n\n"


def t(shape: str, dtype: str = "float32") -> str:
    return f'R.Tensor(({shape}), dtype="{dtype}")'


def module(params: str, ret: str, body: str) -> tvmlite.IRModule:
    return tvmlite.parse(dataflow_main(params, ret, body.strip() + "\nR.output(gv)", HEADER))


def ops(mod: tvmlite.IRModule) -> list[str]:
    """The operators main still calls, in order."""
    found = []
    for block in mod["main"].body.blocks:
        for b in block.bindings:
            if isinstance(b.value, relax.Call) and isinstance(b.value.op, relax.Op):
                found.append(b.value.op.name.removeprefix("relax."))
    return found


def run(mod: tvmlite.IRModule, *args: np.ndarray, pipeline: str = "fast") -> np.ndarray:
    return tvmlite.build(mod, pipeline=pipeline, cache=False)["main"](*args)


# ---------------------------------------------------------------- FuseTransposeMatmul

LINEAR = module(
    f"x: {t('2, 6, 8')}, w: {t('5, 8')}, b: {t('5,')}",
    t("2, 6, 5"),
    """
lv = R.permute_dims(w, axes=None)
lv1 = R.matmul(x, lv, out_dtype="float32")
gv = R.add(lv1, b)
""",
)


def test_linear_reads_its_weight_in_place() -> None:
    fused = Sequential([FuseTransposeMatmul(), DeadCodeElimination()])(LINEAR)
    assert ops(fused) == ["call_tir", "add"]  # the permute_dims is gone
    kernel = fused["NT_matmul"]
    assert kernel.attr("op_name") == "relax.matmul"
    assert kernel.attr("op_kind") == "out_ewise_fusible"
    loads = [n for n in walk(kernel.body) if isinstance(n, tir.BufferLoad)]
    (w_load,) = [n for n in loads if n.buffer.name == "w"]
    assert [i.name for i in w_load.indices] == ["v_i2", "v_k"]  # w[j, k]: as stored
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((2, 6, 8), (5, 8), (5,)))
    for pipeline in ("fast", "minimal"):
        np.testing.assert_allclose(run(LINEAR, x, w, b, pipeline=pipeline), x @ w.T + b, 1e-5, 1e-5)


def test_fused_kernel_takes_the_epilogue() -> None:
    lowered = Sequential(
        [
            FuseTransposeMatmul(),
            LegalizeOps(),
            AnnotateTIROpPattern(),
            FuseOps(),
            FuseTIR(),
            DeadCodeElimination(),
        ]
    )(LINEAR)
    assert sorted(lowered.functions) == ["fused_NT_matmul_add", "main"]


def test_attention_scores_with_symbolic_sequence() -> None:
    mod = tvmlite.parse(
        HEADER
        + """@I.ir_module
class Module:
    @R.function
    def main(q: R.Tensor((1, 2, "n", 4), "float32"), k: R.Tensor((1, 2, "n", 4), "float32")) -> R.Tensor((1, 2, "n", "n"), "float32"):
        n = T.int64()
        with R.dataflow():
            kt: R.Tensor((1, 2, 4, n), "float32") = R.permute_dims(k, axes=[0, 1, 3, 2])
            gv: R.Tensor((1, 2, n, n), "float32") = R.matmul(q, kt, out_dtype="void")
            R.output(gv)
        return gv
"""
    )
    assert "permute_dims" not in ops(
        Sequential([FuseTransposeMatmul(), DeadCodeElimination()])(mod)
    )
    f = tvmlite.build(mod, cache=False)["main"]
    rng = np.random.default_rng(1)
    for n in (1, 5, 33):
        q, k = (rng.standard_normal((1, 2, n, 4)).astype("float32") for _ in range(2))
        np.testing.assert_allclose(f(q, k), q @ k.transpose(0, 1, 3, 2), 1e-5, 1e-5)


@pytest.mark.parametrize(
    ("params", "ret", "body", "why"),
    [
        (
            f"x: {t('3, 4, 8')}, w: {t('8, 3, 5')}",
            t("3, 4, 5"),
            "lv = R.permute_dims(w, axes=[1, 0, 2])\ngv = R.matmul(x, lv)",
            "a batch axis moves",
        ),
        (
            f"x: {t('8, 4')}, w: {t('8, 5')}",
            t("4, 5"),
            "lv = R.permute_dims(x, axes=None)\ngv = R.matmul(lv, w)",
            "the first operand is the transposed one",
        ),
        (
            f"x: {t('8,')}, w: {t('5, 8')}",
            t("5,"),
            "lv = R.permute_dims(w, axes=None)\ngv = R.matmul(x, lv)",
            "a vector has no rows",
        ),
    ],
    ids=lambda v: v if " " in str(v) and "R." not in str(v) else "",
)
def test_left_alone(params: str, ret: str, body: str, why: str) -> None:
    mod = module(params, ret, body)
    assert FuseTransposeMatmul()(mod) is mod, why


def test_a_transpose_with_other_users_stays_for_them() -> None:
    mod = module(
        f"x: {t('4, 8')}, w: {t('5, 8')}",
        "R.Tuple(" + t("4, 5") + ", " + t("8, 5") + ")",
        "lv = R.permute_dims(w, axes=None)\nlv1 = R.matmul(x, lv)\ngv = (lv1, lv)",
    )
    fused = Sequential([FuseTransposeMatmul(), DeadCodeElimination()])(mod)
    assert ops(fused) == ["permute_dims", "call_tir"]
    rng = np.random.default_rng(2)
    x, w = (
        rng.standard_normal((4, 8)).astype("float32"),
        rng.standard_normal((5, 8)).astype("float32"),
    )
    got, wt = run(mod, x, w)
    np.testing.assert_allclose(got, x @ w.T, 1e-5, 1e-5)
    np.testing.assert_array_equal(wt, w.T)


# ---------------------------------------------------------------- DecomposeOpsForInference


def batch_norm_module(layout: str = "NCHW", attrs: str = "", training: bool = False) -> str:
    axis, x, y = (
        (1, "1, 4, 5, 5", "1, 3, 3, 3") if layout == "NCHW" else (3, "1, 5, 5, 4", "1, 3, 3, 3")
    )
    c = "3,"
    conv_layout = "" if layout == "NCHW" else ', data_layout="NHWC", kernel_layout="OHWI"'
    w = "3, 4, 3, 3" if layout == "NCHW" else "3, 3, 3, 4"
    y = "1, 3, 3, 3"
    stats = "R.Tuple(" + ", ".join([t(y), t(c), t(c)]) + ")"
    return dataflow_main(
        f"x: {t(x)}, w: {t(w)}, g: {t(c)}, b: {t(c)}, m: {t(c)}, v: {t(c)}",
        "R.Tuple(" + ", ".join([t(y), t(c), t(c)]) + ")",
        f"""lv = R.nn.conv2d(x, w{conv_layout})
lv1: {stats} = R.nn.batch_norm(lv, g, b, m, v, axis={axis}, epsilon=1e-3{attrs}, training={training})
lv2 = lv1[0]
lv3 = R.nn.relu(lv2)
lv4 = lv1[1]
gv = (lv3, lv4, lv1[2])
R.output(gv)""",
        HEADER,
    )


def bn_inputs(layout: str) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    x = (1, 4, 5, 5) if layout == "NCHW" else (1, 5, 5, 4)
    w = (3, 4, 3, 3) if layout == "NCHW" else (3, 3, 3, 4)
    arrays = [rng.standard_normal(x), rng.standard_normal(w)]
    arrays += [rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)]
    arrays.append(rng.uniform(0.5, 2.0, 3))  # a variance
    return [a.astype("float32") for a in arrays]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("attrs", ["", ", center=False", ", scale=False"])
def test_batch_norm_is_a_per_channel_multiply_add(layout: str, attrs: str) -> None:
    mod = tvmlite.parse(batch_norm_module(layout, attrs))
    decomposed = DecomposeOpsForInference()(mod)
    assert "nn.batch_norm" not in ops(decomposed)
    arrays = bn_inputs(layout)
    want = run(mod, *arrays, pipeline="minimal")  # batch_norm's own kernel
    got = run(mod, *arrays, pipeline="fast")
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[1], arrays[4])  # the moving mean, passed through


def test_convolution_takes_the_normalization_and_relu() -> None:
    mod = tvmlite.parse(batch_norm_module())
    fused = tvmlite.lower(mod, "llvm", "fast")
    (conv,) = [n for n in fused.functions if "conv2d" in n]
    assert conv.endswith("relu") and "batch_norm" not in conv


def test_training_batch_norm_is_left() -> None:
    mod = tvmlite.parse(batch_norm_module(training=True))
    assert DecomposeOpsForInference()(mod) is mod
