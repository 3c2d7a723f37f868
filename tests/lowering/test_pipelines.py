"""Named pipelines ("minimal", "default", registered ones), the two workflows of
the seed (passes then build; build does it all), op_info on every kind of prim
function (docs/extending.md runs in tests/docs)."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.lowering import get_pipeline, list_pipelines, op_info, register_pipeline
from tvmlite.lowering.build import lower
from tvmlite.lowering.pipeline import PIPELINES
from tvmlite.lowering.target import Target
from tvmlite.transform import (
    AnnotateTIROpPattern,
    DeadCodeElimination,
    DefaultCPUSchedule,
    FuseOps,
    FuseTIR,
    LegalizeOps,
    LowerTIR,
    Pass,
    PassContext,
    Sequential,
)

HEADER = "from tvm.script import ir as I\nfrom tvm.script import tir as T\nfrom tvm.script import relax as R\n\n"
MLP = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32"), w: R.Tensor((8, 6), dtype="float32"), b: R.Tensor((6,), dtype="float32")) -> R.Tensor((4, 6), dtype="float32"):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv
"""
)


def inputs() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(s).astype("float32") for s in ((4, 8), (8, 6), (6,)))


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(x @ w + b, 0)


def kinds(mod: tvmlite.IRModule) -> dict[str, str]:
    return {n: type(f).__name__ for n, f in mod.functions.items()}


def test_minimal_only_legalizes_and_default_fuses() -> None:
    mod = tvmlite.parse(MLP)
    minimal = lower(mod, Target("llvm"), "minimal")
    assert sorted(kinds(minimal)) == ["add", "main", "matmul", "relu"]
    assert all(f.attr("op_pattern") is None for f in minimal.functions.values())
    fused = lower(mod, Target("llvm"), "default")
    assert kinds(fused) == {"fused_matmul_add_relu": "PrimFunc", "main": "Function"}
    fast = lower(mod, Target("llvm"), None)  # build's default, "fast", fuses too
    assert kinds(fast) == {"fused_matmul_add_relu": "PrimFunc", "main": "Function"}
    assert fast.script() == lower(mod, Target("llvm"), "fast").script()


def test_workflow_1_user_passes_then_build_passes_through() -> None:
    mod = tvmlite.parse(MLP)
    mine = Sequential([LegalizeOps(), AnnotateTIROpPattern(), FuseOps(), FuseTIR()])(mod)
    # The graph passes leave it as it is: only its prim functions are scheduled
    # (DefaultCPUSchedule) and lowered; "fast" also drops the kernels FuseTIR
    # left unused (DeadCodeElimination, as "default" does).
    for pipeline, kept in (("minimal", mine), (None, DeadCodeElimination()(mine))):
        lowered = lower(mine, Target("llvm"), pipeline)
        assert lowered["main"] is mine["main"]
        assert tvmlite.structural_equal(lowered, LowerTIR()(DefaultCPUSchedule()(kept)))
        with PassContext(config={"tir.default_cpu_schedule": False}):
            plain = lower(mine, Target("llvm"), pipeline)
        assert tvmlite.structural_equal(plain, LowerTIR()(kept))
    np.testing.assert_allclose(
        tvmlite.build(mine)["main"](*inputs()), reference(*inputs()), rtol=1e-5
    )


@pytest.mark.parametrize("pipeline", [None, "fast", "minimal", "default", [LegalizeOps()], []])
def test_workflow_2_build_does_it_all(pipeline: object) -> None:
    ex = tvmlite.build(tvmlite.parse(MLP), target="llvm", pipeline=pipeline)
    np.testing.assert_allclose(ex["main"](*inputs()), reference(*inputs()), rtol=1e-5)


def test_legalize_can_be_turned_off() -> None:
    with PassContext(config={"relax.transform.apply_legalize_ops": False}):
        with pytest.raises(tvmlite.TVMLiteError, match="R.matmul"):
            tvmlite.build(tvmlite.parse(MLP), pipeline="default")


def test_register_and_get_pipelines() -> None:
    seen: list[Target] = []

    @register_pipeline("test_only_legalize")
    def only_legalize(target: Target) -> Pass:
        seen.append(target)
        return Sequential([LegalizeOps()], name="test_only_legalize")

    try:
        assert "test_only_legalize" in list_pipelines()
        ex = tvmlite.build(tvmlite.parse(MLP), "llvm -opt-level=2", pipeline="test_only_legalize")
        np.testing.assert_allclose(ex["main"](*inputs()), reference(*inputs()), rtol=1e-5)
        assert seen[-1].opt_level == 2
        with pytest.raises(tvmlite.TVMLiteError, match="already exists"):
            register_pipeline("test_only_legalize", only_legalize)
        assert get_pipeline("default").name == "default"
        with pytest.raises(tvmlite.TVMLiteError, match="unknown pipeline 'nope'"):
            get_pipeline("nope")
    finally:
        PIPELINES.pop("test_only_legalize", None)


# ------------------------------------------------------------ op_info


def test_op_info_of_legalized_fused_and_hand_written_functions() -> None:
    mod = tvmlite.parse(MLP)
    legal = lower(mod, Target("llvm"), "minimal")
    want = {"name": "relax.matmul", "kind": "out_ewise_fusible", "attrs": {"out_dtype": None}}
    assert op_info(legal["matmul"]) == want
    fused = lower(mod, Target("llvm"), "default")
    info = op_info(fused["fused_matmul_add_relu"])
    assert info["name"] is None and info["kind"] == "out_ewise_fusible"
    assert [o["name"] for o in info["ops"]] == ["relax.matmul", "relax.add", "relax.nn.relu"]
    hand = tvmlite.parse(
        HEADER
        + """@T.prim_func
def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            b[vi] = a[vi] * T.float32(2.0)
"""
    )
    assert op_info(hand) == {"name": None, "kind": "elementwise", "attrs": {}}
    annotated = AnnotateTIROpPattern()(tvmlite.IRModule({"double": hand}))["double"]
    assert op_info(annotated) == op_info(hand) and annotated.attr("op_pattern") == 0


def test_op_info_round_trips_through_text() -> None:
    fused = get_pipeline("default")(tvmlite.parse(MLP))
    text = fused.script()
    assert '"op_names": ["relax.matmul", "relax.add", "relax.nn.relu"]' in text
    again = tvmlite.parse(text)
    for name, func in fused.functions.items():
        if isinstance(func, tir.PrimFunc):
            assert op_info(again[name]) == op_info(func)
    assert tvmlite.structural_equal(again, fused)
    assert isinstance(again["main"], relax.Function)


def test_builds_pause_the_garbage_collector_and_restore_it() -> None:
    """Off during a build (also nested and in threads), back on after, even when
    the build fails; left off when the caller had turned it off."""
    import gc
    import threading

    seen: list[bool] = []

    def probe(mod: tvmlite.IRModule) -> tvmlite.IRModule:
        seen.append(gc.isenabled())
        return LegalizeOps()(mod)

    def fail(mod: tvmlite.IRModule) -> tvmlite.IRModule:
        raise tvmlite.TVMLiteError("stop")

    assert gc.isenabled()
    threads = [
        threading.Thread(
            target=tvmlite.build, args=(tvmlite.parse(MLP),), kwargs={"pipeline": probe}
        )
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with pytest.raises(tvmlite.TVMLiteError, match="stop"):
        tvmlite.build(tvmlite.parse(MLP), pipeline=fail)
    assert seen == [False] * 3 and gc.isenabled()
    gc.disable()
    try:
        tvmlite.build(tvmlite.parse(MLP), pipeline=probe)
        assert not gc.isenabled()
    finally:
        gc.enable()
