"""DefaultCPUSchedule on kernels with symbolic extents (a batch `n`, a
sequence `s`): every rule that schedules the static kernel schedules it
(parallel and vectorized loops present, the vector axis static where there is
one), the result prints as TVMScript that parses back to the same module, and
the built kernel computes what NumPy computes at several sizes: 1, sizes no
tile divides, and a multiple of the vector width. Reductions whose length is
no multiple of the vector width keep vectorized partial results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.walk import walk
from tvmlite.lowering import schedule_rules
from tvmlite.lowering.build import lower
from tvmlite.lowering.passes.default_cpu_schedule import CONFIG_KEY
from tvmlite.lowering.target import Target
from tvmlite.transform import PassContext

Shape = tuple[int | str, ...]

# The machine the schedules are checked for, whatever the host: the snippets name
# AVX-512's widths (16 float32 lanes, tiles of 32 columns). Only lowered for it;
# the numerics run the host's build.
AVX512 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"


def graph(params: dict[str, Shape], body: str) -> str:
    """A Relax module: `body` binds `gv` from the float32 parameters; string
    dims are symbolic."""
    args = ", ".join(f'{n}: R.Tensor({tuple(s)!r}, "float32")' for n, s in params.items())
    lines = "".join(f"            {line}\n" for line in body.strip().splitlines())
    return (
        "@I.ir_module\nclass Module:\n    @R.function\n"
        f"    def main({args.replace(chr(39), chr(34))}):\n"
        f"        with R.dataflow():\n{lines}            R.output(gv)\n        return gv\n"
    )


def at_schedule_point(text: str, pipeline: str, **config: Any) -> IRModule:
    with PassContext(verify=True, disabled_pass=["LowerTIR"], config=config):
        return lower(tvmlite.parse(text), Target(AVX512), pipeline)


def kernels(mod: IRModule) -> dict[str, tir.PrimFunc]:
    return {n: f for n, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def rms_norm(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g


def max_pool(x: np.ndarray) -> np.ndarray:
    """3x3 windows, stride 2, padding 1, NCHW."""
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    n, c, h, w = x.shape
    oh, ow = (h - 1) // 2 + 1, (w - 1) // 2 + 1
    out = np.full((n, c, oh, ow), -np.inf, "float32")
    for i in range(3):
        for j in range(3):
            out = np.maximum(out, p[:, :, i : i + 2 * oh : 2, j : j + 2 * ow : 2])
    return out


def conv2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NCHW / OIHW, stride 1, padding 1."""
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    kh, kw = w.shape[2:]
    h, wd = x.shape[2:]
    windows = np.stack(
        [p[:, :, i : i + h, j : j + wd] for i in range(kh) for j in range(kw)], axis=2
    )  # n, c, kh*kw, h, w
    return np.einsum("nckhw,fck->nfhw", windows, w.reshape(*w.shape[:2], -1))


# (id, relax body, parameters, NumPy reference, pipeline, rule, texts the schedule must contain)
Case = tuple[str, str, dict[str, Shape], Callable[..., Any], str, str, tuple[str, ...]]
CASES: list[Case] = [
    (
        "matmul_symbolic_rows",
        "gv = R.matmul(a, b)",
        {"a": ("n", 64), "b": (64, 96)},
        lambda a, b: a @ b,
        "minimal",
        "gemm",
        ("T.unroll(T.int64(12))", "T.vectorized(T.int64(32))", "< n)"),
    ),
    (
        "dense_symbolic_rows_many_panels",
        "gv = R.matmul(a, b)",
        {"a": ("n", 64), "b": (64, 512)},
        lambda a, b: a @ b,
        "minimal",
        "gemm",
        # 16 column panels: they run in parallel, the row tiles serially in each
        ("T.parallel(T.int64(16))", "range((n + T.int64(11)) // T.int64(12))"),
    ),
    (
        "batch_matmul_symbolic_sequence",
        "gv = R.matmul(a, b)",
        {"a": (2, "s", 32), "b": (2, 32, 48)},
        lambda a, b: a @ b,
        "minimal",
        "gemm",
        ("T.unroll(", "T.vectorized(T.int64(16))", "< s)"),
    ),
    (
        "attention_context",
        "gv = R.matmul(a, b)",
        {"a": (2, "s", "s"), "b": (2, "s", 32)},
        lambda a, b: a @ b,
        "minimal",
        "gemm",
        ("T.unroll(", "T.vectorized(T.int64(32))", "range(s)"),
    ),
    (
        "attention_scores",
        "gv = R.matmul(a, b)",
        {"a": (2, "s", 32), "b": (2, 32, "s")},
        lambda a, b: a @ b,
        "minimal",
        "gemm",
        ("T.unroll(", "T.vectorized(T.int64(32))", "< s)"),
    ),
    (
        "conv2d_symbolic_batch",
        "gv = R.nn.conv2d(a, w, padding=[1, 1, 1, 1])",
        {"a": ("n", 8, 10, 10), "w": (16, 8, 3, 3)},
        conv2d,
        "minimal",
        "conv",
        ("T.unroll(", "T.vectorized(T.int64(16))"),
    ),
    (
        "add_relu_fused",
        "c = R.add(a, b)\ngv = R.nn.relu(c)",
        {"a": ("n", 48, 40), "b": (48, 40)},
        lambda a, b: np.maximum(a + b, 0),
        "default",
        "per_stage",
        ("T.parallel(n * T.int64(144))", "T.vectorized(T.int64(16))"),
    ),
    (
        "broadcast_3_7",
        "gv = R.add(a, b)",
        {"a": ("n", 3, 7), "b": (7,)},
        lambda a, b: a + b,
        "minimal",
        "per_stage",
        ("T.vectorized(T.int64(16))", "T.where("),
    ),
    (
        "scale_columns",
        "gv = R.multiply(a, b)",
        {"a": ("n", 3), "b": (3,)},
        lambda a, b: a * b,
        "minimal",
        "per_stage",
        ("(n * T.int64(3) + T.int64(15)) // T.int64(16)", "T.vectorized(T.int64(16))"),
    ),
    (
        "symbolic_columns",
        "gv = R.exp(a)",
        {"a": (12, "s")},
        np.exp,
        "minimal",
        "per_stage",
        ("(s + T.int64(15)) // T.int64(16)", "T.vectorized(T.int64(16))"),
    ),
    (
        "transpose_heads",
        "gv = R.permute_dims(a, [0, 2, 1, 3])",
        {"a": ("n", "s", 4, 32)},
        lambda a: a.transpose(0, 2, 1, 3),
        "minimal",
        "per_stage",
        ("T.parallel(", "T.vectorized(T.int64(16))"),
    ),
    (
        "transpose_symbolic_last",
        "gv = R.permute_dims(a, [1, 0])",
        {"a": ("n", 40)},
        lambda a: a.T,
        "minimal",
        "per_stage",
        ("T.vectorized(T.int64(16))", "T.where("),
    ),
    (
        "concat",
        "gv = R.concat([a, b], axis=1)",
        {"a": ("n", 64), "b": ("n", 32)},
        lambda a, b: np.concatenate([a, b], 1),
        "minimal",
        "per_stage",
        ("range(n * T.int64(6))", "T.vectorized(T.int64(16))"),
    ),
    (
        "softmax_rows",
        "gv = R.nn.softmax(a, axis=-1)",
        {"a": ("n", 256)},
        softmax,
        "minimal",
        "row_reduction",
        ("T.parallel(n)", "T_softmax_maxelem_rf", "T.vectorized(T.int64(16))"),
    ),
    (
        "softmax_197",
        "gv = R.nn.softmax(a, axis=-1)",
        {"a": ("n", 197)},
        softmax,
        "minimal",
        "row_reduction",
        ("T_softmax_expsum_rf", "T.where(k_0 * T.int64(16) + k_1 < T.int64(197))"),
    ),
    (
        "attention_softmax",
        "gv = R.nn.softmax(a, axis=-1)",
        {"a": (2, "s", "s")},
        softmax,
        "minimal",
        "row_reduction",
        ("T_softmax_maxelem_rf", "T.where(k_0 * T.int64(16) + k_1 < s)"),
    ),
    (
        "log_softmax",
        "gv = R.nn.log_softmax(a, axis=-1)",
        {"a": ("n", 100)},
        lambda a: np.log(softmax(a)),
        "minimal",
        "row_reduction",
        ("_rf", "T.vectorized(T.int64(16))"),
    ),
    (
        "layer_norm",
        "gv = R.nn.layer_norm(a, g, b, axes=[-1], epsilon=1e-05)",
        {"a": ("n", 96), "g": (96,), "b": (96,)},
        layer_norm,
        "minimal",
        "row_reduction",
        ("a_sum_rf_update", "T.parallel(n)"),
    ),
    (
        "rms_norm",
        "gv = R.nn.rms_norm(a, g, axes=[-1], epsilon=1e-05)",
        {"a": ("n", 80), "g": (80,)},
        rms_norm,
        "minimal",
        "row_reduction",
        ("_rf", "T.vectorized(T.int64(16))"),
    ),
    (
        "sum_symbolic_axis",
        "gv = R.sum(a, axis=[1])",
        {"a": (40, "n")},
        lambda a: a.sum(1),
        "minimal",
        "row_reduction",
        ("a_red_rf", "T.where(k1_0 * T.int64(16) + k1_1 < n)"),
    ),
    (
        "mean_static_axis",
        "gv = R.mean(a, axis=[1])",
        {"a": ("n", 64)},
        lambda a: a.mean(1),
        "minimal",
        "row_reduction",
        ("_rf", "T.vectorized(T.int64(16))"),
    ),
    (
        "max_over_batch",
        "gv = R.max(a, axis=[0])",
        {"a": ("n", 48)},
        lambda a: a.max(0),
        "minimal",
        "pooling",
        ("T.vectorized(T.int64(16))", "_init"),
    ),
    (
        "max_pool2d",
        "gv = R.nn.max_pool2d(a, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])",
        {"a": ("n", 4, 17, 17)},
        max_pool,
        "minimal",
        "pooling",
        ("T.vectorized(T.int64(9))", "pool_max_init"),
    ),
    (
        "adaptive_avg_pool2d",
        "gv = R.nn.adaptive_avg_pool2d(a, output_size=[1, 1])",
        {"a": ("n", 32, 5, 5)},
        lambda a: a.mean((2, 3), keepdims=True),
        "minimal",
        "pooling",
        ("T.parallel(", "T.vectorized("),
    ),
]


def arguments(params: dict[str, Shape], size: int) -> list[np.ndarray]:
    """Random inputs, symbolic dims `size` (`s` the next size up, to tell them apart)."""
    rng = np.random.default_rng(size)
    dims = {"n": size, "s": size + 3}
    return [
        rng.standard_normal([dims.get(d, d) for d in shape]).astype("float32")  # type: ignore[misc]
        for shape in params.values()
    ]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_symbolic_rule(case: Case) -> None:
    _, body, params, ref, pipeline, rule, snippets = case
    text = graph(params, body)
    plain = at_schedule_point(text, pipeline, **{CONFIG_KEY: False})
    for name, func in kernels(plain).items():
        kernel = schedule_rules.Kernel.of(name, func)
        assert kernel is not None and schedule_rules.rule_for(kernel).name == rule, name
    mod = at_schedule_point(text, pipeline)
    assert all(f.attr("tir.is_scheduled") is True for f in kernels(mod).values())
    printed = mod.script()
    for snippet in snippets:
        assert snippet in printed, snippet
    assert tvmlite.structural_equal(tvmlite.parse(printed), mod)
    ex = tvmlite.build(tvmlite.parse(text), pipeline=pipeline, cache=False)
    for size in (1, 5, 33, 64):
        inputs = arguments(params, size)
        np.testing.assert_allclose(ex["main"](*inputs), ref(*inputs), rtol=1e-5, atol=1e-5)


def test_symbolic_kernels_count_as_large() -> None:
    """A kernel over (n, 256) may run on thousands of rows: it runs in parallel,
    as the static kernel over 128 rows does."""
    mod = at_schedule_point(graph({"a": ("n", 256)}, "gv = R.exp(a)"), "minimal")
    assert "T.parallel(n * T.int64(16))" in mod.script()


def test_odd_reduction_lengths_keep_vector_partials() -> None:
    """197 (ViT's tokens) and 30522 (BERT's vocabulary) columns: the partial
    sums are vectorized, the last step guarded, and TIR lowering runs the whole
    steps without the guard."""
    for columns in (197, 30522):
        text = graph({"a": (4, columns)}, "gv = R.nn.softmax(a, axis=-1)")
        printed = at_schedule_point(text, "minimal").script()
        assert "T_softmax_expsum_rf" in printed and "T.where(" in printed
        x = np.random.default_rng(0).standard_normal((4, columns)).astype("float32")
        got = tvmlite.build(tvmlite.parse(text), cache=False)["main"](x)
        np.testing.assert_allclose(got, softmax(x), rtol=1e-5, atol=1e-7)


def test_contraction_tiles_over_symbolic_extents() -> None:
    """A contraction over a symbolic row, batch or reduction extent keeps its
    register tile: with enough constant tiles (column panels) those run in
    parallel and the symbolic loops serially inside, else the symbolic loops go
    outermost in the fused parallel loop; either way every index divides by
    constants only (a division by a symbolic extent in the guarded rows is
    neither hoisted nor vectorized by LLVM), and the accumulator compacts to a
    constant MR x NR tile."""
    for case in CASES:
        name, body, params, _, pipeline, rule, _ = case
        if rule not in ("gemm", "conv"):
            continue
        mod = at_schedule_point(graph(params, body), pipeline)
        printed = mod.script()
        assert "// ((n" not in printed and "// ((s" not in printed, name
        assert "% ((n" not in printed and "% ((s" not in printed, name
        low = lower(tvmlite.parse(graph(params, body)), Target(AVX512), pipeline)
        local = [
            node.buffer
            for kernel in kernels(low).values()
            for node in walk(kernel.body)
            if isinstance(node, tir.AllocBuffer) and node.buffer.scope == "local"
        ]
        assert local and all(all(isinstance(d, tir.IntImm) for d in b.shape) for b in local), name


def test_symbolic_columns_keep_the_whole_tiles_in_registers() -> None:
    """A symbolic vector axis: whole column tiles and a guarded last one (after
    PartitionLoops, two copies of the tile loop, each allocating the
    accumulator). Each copy gets its own stack slot, so the whole tiles'
    accumulators become vector registers (phis in the optimized IR) although
    the last tile indexes its slot at run time."""
    text = graph({"a": (2, "s", 32), "b": (2, 32, "s")}, "gv = R.matmul(a, b)")
    ex = tvmlite.build(tvmlite.parse(text), pipeline="minimal", cache=False)
    assert "phi <16 x float>" in ex.llvm_ir()
