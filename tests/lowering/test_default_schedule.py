"""DefaultCPUSchedule: each rule on legalized (and fused) operators, checked
for its loop structure, a TVMScript round trip and NumPy numerics; the
verifier runs after every primitive (PassContext(verify=True)). Then the
pass's contract: the off switch, user-scheduled functions left alone, a
failing rule falling back to the plain function."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmlite
from tvmlite import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.lowering import schedule_rules
from tvmlite.lowering.build import lower
from tvmlite.lowering.passes import DefaultCPUSchedule
from tvmlite.lowering.passes.default_cpu_schedule import CONFIG_KEY
from tvmlite.lowering.schedule import ScheduleError
from tvmlite.lowering.target import Target
from tvmlite.transform import PassContext

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"

# The machine the schedules are checked for, whatever the host: the snippets name
# AVX-512's widths (16 float32 lanes, tiles of 32 columns). Only lowered for it;
# the numerics run the host's build.
AVX512 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"


def graph(params: dict[str, tuple[int, ...]], body: str) -> str:
    """A Relax module: `body` binds `gv` from the float32 parameters."""
    args = ", ".join(f'{n}: R.Tensor({s}, "float32")' for n, s in params.items())
    lines = "".join(f"            {line}\n" for line in body.strip().splitlines())
    return (
        f"{HEADER}@I.ir_module\nclass Module:\n    @R.function\n    def main({args}):\n"
        f"        with R.dataflow():\n{lines}            R.output(gv)\n        return gv\n"
    )


def at_schedule_point(mod: IRModule, pipeline: str = "minimal", **config: Any) -> IRModule:
    """The module the build hands TIR lowering, the verifier run after every primitive."""
    with PassContext(verify=True, disabled_pass=["LowerTIR"], config=config):
        return lower(mod, Target(AVX512), pipeline)


def scheduled(text: str, pipeline: str = "minimal") -> IRModule:
    return at_schedule_point(tvmlite.parse(text), pipeline)


def kernels(mod: IRModule) -> dict[str, tir.PrimFunc]:
    return {n: f for n, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}


def run(text: str, inputs: list[np.ndarray], pipeline: str = "minimal", **config: Any) -> Any:
    with PassContext(config=config):
        return tvmlite.build(tvmlite.parse(text), pipeline=pipeline, cache=False)["main"](*inputs)


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


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


# (id, relax body, parameters, NumPy reference, pipeline, rule, texts the schedule must contain)
Case = tuple[str, str, dict[str, tuple[int, ...]], Callable[..., Any], str, str, tuple[str, ...]]
CASES: list[Case] = [
    (
        "add_relu_fused",
        "c = R.add(a, b)\ngv = R.nn.relu(c)",
        {"a": (64, 48, 40), "b": (48, 40)},
        lambda a, b: np.maximum(a + b, 0),
        "default",
        "per_stage",
        ("T.parallel(", "T.vectorized(T.int64(16))", "T.where(", "T.max(a["),
    ),
    (
        "add_4x4",
        "gv = R.add(a, b)",
        {"a": (4, 4), "b": (4, 4)},
        lambda a, b: a + b,
        "minimal",
        "per_stage",
        ("T.vectorized(T.int64(16))",),
    ),
    (
        "broadcast_tail",
        "gv = R.multiply(a, b)",
        {"a": (7, 37), "b": (37,)},
        lambda a, b: a * b,
        "minimal",
        "per_stage",
        ("T.vectorized(T.int64(16))", "T.where("),
    ),
    (
        "transpose",
        "gv = R.permute_dims(a, [0, 2, 1])",
        {"a": (8, 40, 48)},
        lambda a: a.transpose(0, 2, 1),
        "minimal",
        "per_stage",
        ("ax0_ax1_0_ax2_0_fused, ax1_1 in T.grid(T.int64(72), T.int64(16))", "T.vectorized("),
    ),
    (
        "softmax",
        "gv = R.nn.softmax(a, axis=-1)",
        {"a": (32, 1024)},
        softmax,
        "minimal",
        "row_reduction",
        ("T.parallel(T.int64(32))", "T_softmax_maxelem_rf", "T_softmax_expsum_rf_init"),
    ),
    (
        "layer_norm",
        "gv = R.nn.layer_norm(a, g, b, axes=[-1], epsilon=1e-05)",
        {"a": (16, 256), "g": (256,), "b": (256,)},
        layer_norm,
        "minimal",
        "row_reduction",
        ("a_sum_rf_update", "a_var_sum_rf_update", "T.vectorized(T.int64(16))"),
    ),
    (
        "sum_rows_3d",
        "gv = R.sum(a, axis=[1, 2], keepdims=True)",
        {"a": (12, 8, 40)},
        lambda a: a.sum((1, 2), keepdims=True),
        "minimal",
        "row_reduction",
        ("_rf", "T.vectorized(T.int64(16))"),
    ),
    (
        "max_rows_tail",
        "gv = R.max(a, axis=-1)",
        {"a": (9, 30)},
        lambda a: a.max(-1),
        "minimal",
        "row_reduction",
        (),  # 30 is no multiple of 16: the reduction stays serial
    ),
    (
        "mean_all",
        "gv = R.mean(a)",
        {"a": (24, 40)},
        lambda a: a.mean(dtype="float32"),
        "minimal",
        "row_reduction",
        ("_rf", "T.vectorized(T.int64(16))"),
    ),
    (
        "matvec",
        "gv = R.matmul(a, v)",
        {"a": (64, 128), "v": (128,)},
        lambda a, v: a @ v,
        "minimal",
        "matvec",
        ("matmul_rf_local", "matmul_rf_update", "T.vectorized(T.int64(16))"),
    ),
    (
        "sum_axis0",
        "gv = R.sum(a, axis=[0])",
        {"a": (100, 80)},
        lambda a: a.sum(0),
        "minimal",
        "pooling",
        ("T.vectorized(T.int64(16))", "_init"),
    ),
    (
        "max_pool2d",
        "gv = R.nn.max_pool2d(a, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])",
        {"a": (1, 8, 33, 33)},
        max_pool,
        "minimal",
        "pooling",
        ("T.vectorized(T.int64(16))", "pool_max_init"),
    ),
    (
        "avg_pool2d_nhwc",
        'gv = R.nn.avg_pool2d(a, pool_size=[2, 2], strides=[2, 2], layout="NHWC")',
        {"a": (2, 8, 8, 32)},
        lambda a: a.reshape(2, 4, 2, 4, 2, 32).mean((2, 4)),
        "minimal",
        "pooling",
        ("T.vectorized(T.int64(16))",),
    ),
    (
        "variance_all",
        "gv = R.variance(a)",
        {"a": (6, 64)},
        lambda a: a.var(dtype="float32"),
        "minimal",
        "per_stage",
        ("T.vectorized(T.int64(16))",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rule(case: Case) -> None:
    _, body, params, ref, pipeline, rule, snippets = case
    text = graph(params, body)
    plain = tvmlite.parse(text)
    unscheduled = at_schedule_point(plain, pipeline, **{CONFIG_KEY: False})
    for name, func in kernels(unscheduled).items():
        kernel = schedule_rules.Kernel.of(name, func)
        assert kernel is not None and schedule_rules.rule_for(kernel).name == rule, name
    mod = scheduled(text, pipeline)
    funcs = kernels(mod)
    assert all(f.attr("tir.is_scheduled") is True for f in funcs.values())
    printed = mod.script()
    for snippet in snippets:
        assert snippet in printed, snippet
    assert tvmlite.structural_equal(tvmlite.parse(printed), mod)
    inputs = [rand(*shape, seed=i) for i, shape in enumerate(params.values())]
    got = run(text, inputs, pipeline)
    np.testing.assert_allclose(got, ref(*inputs), rtol=1e-5, atol=1e-5)


def test_small_kernels_run_on_one_thread() -> None:
    text = graph({"a": (4, 4), "b": (4, 4)}, "gv = R.add(a, b)")
    assert "T.parallel" not in scheduled(text).script()
    big = graph({"a": (256, 256), "b": (256, 256)}, "gv = R.add(a, b)")
    assert "T.parallel(T.int64(4096))" in scheduled(big).script()


HAND_WRITTEN = """# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def whatever(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64,), "float32")):
        for i, k in T.grid(64, 256):
            with T.block("acc"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk] * A[vi, vk]
"""


def test_hand_written_kernels_are_scheduled_by_what_they_compute() -> None:
    mod = DefaultCPUSchedule()(tvmlite.parse(HAND_WRITTEN))
    printed = mod.script()
    assert "acc_rf" in printed and "T.vectorized(16)" in printed, printed
    a = rand(64, 256)
    b = np.zeros(64, "float32")
    tvmlite.build(mod)["whatever"](a, b)
    np.testing.assert_allclose(b, (a * a).sum(1), rtol=1e-5)


def test_user_scheduled_functions_are_left_alone() -> None:
    marked = HAND_WRITTEN.replace("    def whatever(", "    def whatever(\n").replace(
        '"float32")):\n', '"float32")):\n        T.func_attr({"tir.is_scheduled": True})\n', 1
    )
    mod = tvmlite.parse(marked)
    assert mod["whatever"].attr("tir.is_scheduled") is True
    assert DefaultCPUSchedule()(mod) is mod


def test_config_turns_the_pass_off() -> None:
    text = graph({"a": (64, 64)}, "gv = R.nn.softmax(a)")
    off = at_schedule_point(tvmlite.parse(text), **{CONFIG_KEY: False})
    assert all(f.attr("tir.is_scheduled") is None for f in kernels(off).values())
    assert "T.vectorized" not in off.script()
    a = rand(64, 64)
    np.testing.assert_allclose(run(text, [a], **{CONFIG_KEY: False}), softmax(a), rtol=1e-5)
    with pytest.raises(TVMLiteError, match=f"'{CONFIG_KEY}' must be True or False, got 'no'"):
        PassContext(config={CONFIG_KEY: "no"})  # refused where it is given


class _Failing:
    name = "failing"

    def matches(self, kernel: schedule_rules.Kernel) -> bool:
        return True

    def apply(self, sch: Any, kernel: schedule_rules.Kernel) -> None:
        sch.parallel(sch.get_loops(kernel.stages[0].name)[0])
        raise ScheduleError("this rule gives up half way")


def test_a_failing_rule_leaves_the_function_unscheduled(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(schedule_rules, "RULES", (_Failing(),))
    mod = tvmlite.parse(HAND_WRITTEN)
    with caplog.at_level(logging.DEBUG, logger="tvmlite.schedule"):
        assert DefaultCPUSchedule()(mod) is mod
    assert "rule failing failed on whatever" in caplog.text
    a, b = rand(64, 256), np.zeros(64, "float32")
    tvmlite.build(mod)["whatever"](a, b)
    np.testing.assert_allclose(b, (a * a).sum(1), rtol=1e-5)


SCATTER = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((8,), "float32"), i: R.Tensor((4,), "int64"), u: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = R.scatter_elements(a, i, u)
            R.output(gv)
        return gv
"""
)


def test_irregular_kernels_are_not_the_rules_business() -> None:
    """A scatter stores at loaded indices: vectorizing it could reorder colliding
    writes, so it is no Kernel and stays as written."""
    funcs = kernels(scheduled(SCATTER))
    assert funcs and all(f.attr("tir.is_scheduled") is None for f in funcs.values())
    assert all(schedule_rules.Kernel.of(n, f) is None for n, f in funcs.items())


def test_missed_vectorization_is_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    """A vectorized loop LLVM cannot vectorize (a libm call per lane) builds
    without LLVM's "loop not vectorized" lines on stderr."""
    text = graph({"a": (64, 64), "b": (64, 64)}, "gv = R.atan2(a, b)")
    assert "T.vectorized" in scheduled(text).script()
    a, b = rand(64, 64), rand(64, 64, seed=1)
    np.testing.assert_allclose(run(text, [a, b]), np.arctan2(a, b), rtol=1e-5, atol=1e-6)
    assert "not vectorized" not in capfd.readouterr().err


def test_doc_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/default-schedule.md's example runs and prints the loops it shows."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "default-schedule.md"
    text = doc.read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S)
    shown = re.search(r"division loops:\n\n```text\n(.*?)```", text, re.S)
    assert code is not None and shown is not None
    exec(compile(code.group(1), str(doc), "exec"), {"__name__": "default_schedule_md"})  # noqa: S102
    out = capsys.readouterr().out
    for line in shown.group(1).splitlines():
        if line.strip() != "...":
            assert line.strip() in out, line


CROSS_ROW = """# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def k(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
        B = T.alloc_buffer((32, 32))
        S = T.alloc_buffer((32,))
        for i, j in T.grid(32, 32):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj])
        for i, k in T.grid(32, 32):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0.0)
                S[vi] = S[vi] + B[vi, vk]
        for i, j in T.grid(32, 32):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vj, vi] + S[vi]
"""


def test_rows_are_not_merged_when_a_stage_reads_another_row() -> None:
    """C reads B transposed: row i of C needs every row of B, so the stages
    cannot share one row loop (they are scheduled one by one)."""
    mod = tvmlite.parse(CROSS_ROW)
    kernel = schedule_rules.Kernel.of("k", mod["k"])
    assert schedule_rules.rule_for(kernel).name == "per_stage"
    with PassContext(verify=True):
        out = DefaultCPUSchedule()(mod)
    assert out["k"].attr("tir.is_scheduled") is True
    a, c = rand(32, 32), np.zeros((32, 32), "float32")
    tvmlite.build(out)["k"](a, c)
    b = np.exp(a)
    np.testing.assert_allclose(c, b.T + b.sum(1)[:, None], rtol=1e-5)


def test_kernels_calling_extern_code_are_left_alone() -> None:
    """A kernel calling extern code may have effects the loops must not reorder."""
    text = HAND_WRITTEN.replace(
        "B[vi] = B[vi] + A[vi, vk] * A[vi, vk]",
        'B[vi] = B[vi] + T.call_extern("float32", "sqrtf", A[vi, vk])',
    )
    mod = tvmlite.parse(text)
    assert schedule_rules.Kernel.of("whatever", mod["whatever"]) is None
    assert DefaultCPUSchedule()(mod) is mod
    assert schedule_rules.Kernel.of("whatever", tvmlite.parse(HAND_WRITTEN)["whatever"])


def test_an_opaque_fusion_pattern_alone_does_not_stop_the_schedule() -> None:
    """op_pattern 8, as TVM's analysis gives a reshape over a symbolic batch for
    its `% n` index, says nothing about effects: the kernel is scheduled."""
    text = HAND_WRITTEN.replace(
        '"float32")):\n', '"float32")):\n        T.func_attr({"op_pattern": 8})\n', 1
    )
    mod = DefaultCPUSchedule()(tvmlite.parse(text))
    assert mod["whatever"].attr("tir.is_scheduled") is True


def doubling_chain(n: int) -> str:
    """`n` bindings alternating v + v and relu: each add reads its producer twice."""
    body = [
        f"v{i} = R.{'add' if i % 2 == 0 else 'nn.relu'}({prev}{', ' + prev if i % 2 == 0 else ''})"
        for i, prev in enumerate(["x"] + [f"v{i}" for i in range(n - 1)])
    ]
    return graph({"x": (4, 8)}, "\n".join(body) + f"\ngv = v{n - 1}")


def test_inlining_a_producer_read_twice_does_not_double_the_expression() -> None:
    """Inlining every stage of a fused `v = v + v; v = relu(v)` chain into the last
    one would copy each add's operand twice: 2^20 nodes for 40 bindings (the
    build never ended). Producers whose copies would add much are kept as stages."""
    mod = scheduled(doubling_chain(40), pipeline="default")
    (func,) = kernels(mod).values()
    nodes = 0

    class Count(StmtExprVisitor):
        def visit_expr(self, e: tir.PrimExpr) -> None:
            nonlocal nodes
            nodes += 1
            super().visit_expr(e)

    Count().visit_stmt(func.body)
    assert nodes < 4000
    x = rand(4, 8)
    want = x
    for i in range(40):
        want = want + want if i % 2 == 0 else np.maximum(want, 0)
    got = run(doubling_chain(40), [x], pipeline="default")
    np.testing.assert_allclose(got, want, rtol=1e-6)
