# ruff: noqa: E501  (TVMScript texts)
"""The matrix-vector rule of the default CPU schedule (lowering/schedule_rules/matvec.py):
contractions with a few rows whose operands both run along the reduction (a dense
layer on one token, attention scores of one query) are computed as dot products,
the weight read in place, the partial sums in registers; the results match NumPy
for reductions the vector width does and does not divide."""

from __future__ import annotations

import numpy as np
import pytest
from rules_common import AVX512, apply_rule, random_inputs, run

import tvmlite
from tvmlite.dsl import tir
from tvmlite.lowering.build import lower
from tvmlite.lowering.schedule.tree import Tree
from tvmlite.lowering.schedule_rules import rule_for
from tvmlite.lowering.schedule_rules.kernel import Kernel
from tvmlite.lowering.schedule_rules.matvec import MAX_ROWS, MAX_UPDATE_ROWS, MatrixVector
from tvmlite.lowering.target import Target

MATVEC = MatrixVector()


def dense(m: int, n: int, k: int, bias: bool = False, along_outputs: bool = False) -> str:
    """x[m, k] @ w[n, k].T (+ bias, then relu), as a hand-written prim function;
    `along_outputs`: x[m, k] @ w[k, n] instead."""
    out = "T_mm" if bias else "C"
    w_shape, w_at = ((k, n), "w[vk, vj]") if along_outputs else ((n, k), "w[vj, vk]")
    params = f'x: T.Buffer(({m}, {k}), "float32"), w: T.Buffer({w_shape}, "float32")'
    alloc = ""
    if bias:
        params += f', b: T.Buffer(({n},), "float32")'
        alloc = f'    T_mm = T.alloc_buffer(({m}, {n}), "float32")\n'
    text = f"""
@T.prim_func
def main({params}, C: T.Buffer(({m}, {n}), "float32")):
{alloc}    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("mm"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                {out}[vi, vj] = T.float32(0)
            {out}[vi, vj] = {out}[vi, vj] + x[vi, vk] * {w_at}
"""
    if bias:
        text += f"""    for i, j in T.grid({m}, {n}):
        with T.block("bias_relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(T_mm[vi, vj] + b[vj], T.float32(0))
"""
    return text


ATTENTION_SCORES = """
@T.prim_func
def main(q: T.Buffer((4, 1, 40), "float32"), kc: T.Buffer((4, 37, 40), "float32"), C: T.Buffer((4, 1, 37), "float32")):
    for b, i, j, d in T.grid(4, 1, 37, 40):
        with T.block("mm"):
            vb, vi, vj, vd = T.axis.remap("SSSR", [b, i, j, d])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + q[vb, vi, vd] * kc[vb, vj, vd]
"""

ATTENTION_CONTEXT = """
@T.prim_func
def main(p: T.Buffer((4, 1, 37), "float32"), v: T.Buffer((4, 37, 64), "float32"), C: T.Buffer((4, 1, 64), "float32")):
    for b, i, j, s in T.grid(4, 1, 64, 37):
        with T.block("mm"):
            vb, vi, vj, vs = T.axis.remap("SSSR", [b, i, j, s])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + p[vb, vi, vs] * v[vb, vs, vj]
"""

VECTOR = """
@T.prim_func
def main(w: T.Buffer((45, 100), "float32"), x: T.Buffer((100,), "float32"), C: T.Buffer((45,), "float32")):
    for j, k in T.grid(45, 100):
        with T.block("mv"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                C[vj] = T.float32(0)
            C[vj] = C[vj] + w[vj, vk] * x[vk]
"""


def scheduled(text: str) -> tuple[tir.PrimFunc, tvmlite.tir.Schedule]:
    func = tvmlite.parse(text)
    sch = apply_rule(func, MATVEC)
    assert sch is not None, "the matvec rule did not take the block"
    return func, sch


@pytest.mark.parametrize(
    ("m", "n", "k"),
    [
        (1, 64, 96),  # whole vectors, pairs of weight rows
        (3, 45, 197),  # odd outputs (one row at a time), a guarded last step
        (MAX_ROWS, 30, 33),
        (1, 7, 1000),
    ],
)
def test_dense_rows_match_numpy(m: int, n: int, k: int) -> None:
    func, sch = scheduled(dense(m, n, k))
    x, w = random_inputs(func)
    np.testing.assert_allclose(run(sch.mod["main"], [x, w]), x @ w.T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("m", "n", "k", "bias"),
    [(1, 64, 96, False), (3, 48, 30, True), (MAX_UPDATE_ROWS, 1600, 17, False)],
)
def test_weight_along_the_outputs_is_read_row_by_row(m: int, n: int, k: int, bias: bool) -> None:
    """x[m, k] @ w[k, n] (GPT-2's layers on one token): per task a chunk of the
    outputs in a local tile, updated from a few weight rows at a time."""
    func, sch = scheduled(dense(m, n, k, bias=bias, along_outputs=True))
    names = [b.name for b in Tree(sch.mod["main"]).blocks]
    assert not any(name.endswith("_global") for name in names)  # the weight read in place
    assert "bias_relu" not in names
    inputs = random_inputs(func)
    want = inputs[0] @ inputs[1]
    if bias:
        want = np.maximum(want + inputs[2], 0)
    np.testing.assert_allclose(run(sch.mod["main"], inputs), want, rtol=1e-4, atol=1e-4)


def test_attention_context_of_one_query_matches_numpy() -> None:
    func, sch = scheduled(ATTENTION_CONTEXT)
    p, v = random_inputs(func)
    np.testing.assert_allclose(run(sch.mod["main"], [p, v]), p @ v, rtol=1e-4, atol=1e-4)


def test_attention_scores_of_one_query_match_numpy() -> None:
    func, sch = scheduled(ATTENTION_SCORES)
    q, kc = random_inputs(func)
    got = run(sch.mod["main"], [q, kc])
    np.testing.assert_allclose(got, q @ kc.transpose(0, 2, 1), rtol=1e-4, atol=1e-4)


def test_matrix_times_vector_matches_numpy() -> None:
    func, sch = scheduled(VECTOR)
    w, x = random_inputs(func)
    np.testing.assert_allclose(run(sch.mod["main"], [w, x]), w @ x, rtol=1e-4, atol=1e-4)


def test_partial_sums_stay_in_registers_and_the_weight_is_read_in_place() -> None:
    _, sch = scheduled(dense(1, 64, 96))
    text = sch.mod.script()
    names = [b.name for b in Tree(sch.mod["main"]).blocks]
    assert not any(name.endswith("_global") for name in names)  # no copy of the weight
    assert 'scope="local"' in text.split("C_rf_local = ")[1].split("\n")[0]
    assert "T.vectorized(16)" in text  # the reduction, 16 lanes (AVX-512) at a time
    assert "T.unroll(2)" in text  # two weight rows side by side
    assert "T.parallel" not in text  # 6144 multiply-adds: one thread


def test_epilogue_runs_once_per_output() -> None:
    func, sch = scheduled(dense(2, 48, 64, bias=True))
    names = [b.name for b in Tree(sch.mod["main"]).blocks]
    assert "bias_relu" not in names  # inlined into the write-back of the sums
    x, w, b = random_inputs(func)
    got = run(sch.mod["main"], [x, w, b])
    np.testing.assert_allclose(got, np.maximum(x @ w.T + b, 0), rtol=1e-4, atol=1e-4)


REJECTED = {
    "many rows": dense(MAX_ROWS + 1, 64, 96),
    "short reduction": dense(1, 64, 20),  # under two vectors: gemm.py's tile
    "dot product": """
@T.prim_func
def main(a: T.Buffer((100,), "float32"), b: T.Buffer((100,), "float32"), C: T.Buffer((), "float32")):
    for k in range(100):
        with T.block("dot"):
            vk = T.axis.remap("R", [k])
            with T.init():
                C[()] = T.float32(0)
            C[()] = C[()] + a[vk] * b[vk]
""",
    "many rows, weight along the outputs": dense(MAX_UPDATE_ROWS + 1, 64, 96, along_outputs=True),
    "outputs in part of a vector": dense(1, 45, 96, along_outputs=True),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rule_leaves_other_contractions_to_gemm(name: str) -> None:
    func = tvmlite.parse(REJECTED[name])
    assert apply_rule(func, MATVEC) is None
    kernel = Kernel.of("main", func, AVX512)
    assert kernel is not None
    rule = rule_for(kernel)
    assert rule is not None and rule.name != "matvec"
    assert not MATVEC.matches(kernel)


def test_default_build_of_a_dense_layer_on_one_token() -> None:
    """Relax's `linear` on one token, bias and gelu fused after it, with a
    symbolic number of outputs as well: one dot-product kernel, NumPy's result."""
    text = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 200), "float32"), w: R.Tensor(("n", 200), "float32"), b: R.Tensor(("n",), "float32")) -> R.Tensor((1, "n"), "float32"):
        n = T.int64()
        with R.dataflow():
            gv = R.nn.gelu(R.add(R.matmul(x, R.permute_dims(w, axes=[1, 0])), b))
            R.output(gv)
        return gv
"""
    mod = tvmlite.parse(text)
    lowered = lower(mod, Target("llvm"))
    kernels = [f for f in lowered.functions.values() if isinstance(f, tir.PrimFunc)]
    assert any("_rf_local" in f.script() for f in kernels)
    rng = np.random.default_rng(3)
    for n in (64, 37):
        x, w, b = (rng.standard_normal(s).astype("float32") for s in [(1, 200), (n, 200), (n,)])
        got = tvmlite.build(mod)["main"](x, w, b)
        y = x @ w.T + b
        want = 0.5 * y * (1 + np.vectorize(__import__("math").erf)(y / np.sqrt(2)))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
