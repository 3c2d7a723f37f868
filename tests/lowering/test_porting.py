"""TVM's pipeline names and keywords with TVM's meaning (`relax_pipeline=`,
`tir_pipeline=`, "zero", "default", "default_build", None), and the porting
table of docs/extending.md, every tvmlite cell evaluated."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from test_pipelines import MLP, inputs, reference

import tvmlite
from tvmlite.dsl.module import IRModule
from tvmlite.lowering import get_pipeline
from tvmlite.lowering.cache import cache_key
from tvmlite.lowering.target import Target
from tvmlite.transform import LegalizeOps, LowerTIR, PassContext, PassInstrument, Sequential

DOCS = Path(__file__).resolve().parents[2] / "docs" / "extending.md"


def porting_rows() -> list[tuple[str, str]]:
    text = DOCS.read_text().split("## Porting from TVM", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(.+?)` \| `(.+?)` \|$", text, flags=re.M)


def test_porting_table_runs() -> None:
    rows = porting_rows()
    assert len(rows) >= 10
    x, w, b = inputs()
    want = reference(x, w, b)
    for tvm_call, call in rows:
        assert tvm_call.startswith(("tvm.", "relax.")), tvm_call
        scope = {
            "tvmlite": tvmlite,
            "get_pipeline": get_pipeline,
            "LegalizeOps": LegalizeOps,
            "Sequential": Sequential,
            "mod": tvmlite.parse(MLP),
            "x": x,
            "w": w,
            "b": b,
        }
        result = eval(call, scope)  # noqa: S307 - our own docs
        if isinstance(result, IRModule):
            result = tvmlite.build(result)
        if not isinstance(result, np.ndarray):
            result = result["main"](x, w, b)
        np.testing.assert_allclose(result, want, rtol=1e-5, atol=1e-5, err_msg=call)


def kernels(**pipelines: object) -> list[str]:
    lowered = tvmlite.lower(tvmlite.parse(MLP), **pipelines)
    return sorted(n for n in lowered.functions if n != "main")


def test_tvm_names_mean_what_tvm_means() -> None:
    separate = ["add", "matmul", "relu"]
    assert kernels(relax_pipeline="zero") == ["fused_matmul_add_relu"]
    assert kernels(relax_pipeline="default") == separate  # TVM's default does not fuse
    assert kernels(relax_pipeline="default_build") == separate
    assert kernels(pipeline="default") == ["fused_matmul_add_relu"]  # tvmlite's name kept
    assert kernels(pipeline="zero") == ["fused_matmul_add_relu"]
    assert kernels(pipeline="default_build") == separate


class Names(PassInstrument):
    def __init__(self) -> None:
        self.names: list[str] = []

    def run_before_pass(self, mod: IRModule, info: object) -> None:
        self.names.append(info.name)


def passes_run(**pipelines: object) -> list[str]:
    names = Names()
    with PassContext(instruments=[names]):
        tvmlite.lower(tvmlite.parse(MLP), **pipelines)
    return names.names


def test_relax_pipeline_none_runs_no_pipeline() -> None:
    assert "minimal" in passes_run(relax_pipeline="default")  # TVM's default build
    assert "fast" in passes_run()  # tvmlite's
    ran = passes_run(relax_pipeline=None)
    assert not {"minimal", "default_build", "zero", "default"} & set(ran)
    assert "LegalizeOps" in ran  # what is left is still legalized: nothing else could run it
    x, w, b = inputs()
    ex = tvmlite.build(tvmlite.parse(MLP), relax_pipeline=None, cache=False)
    np.testing.assert_allclose(ex["main"](x, w, b), reference(x, w, b), rtol=1e-5, atol=1e-5)


def test_tir_pipeline_replaces_lower_tir() -> None:
    assert "LowerTIR" in passes_run(tir_pipeline="s_tir")
    assert "LowerTIR" in passes_run(tir_pipeline=None)
    ran = passes_run(tir_pipeline=[LowerTIR(), Sequential([], name="mine")])
    assert "mine" in ran
    with pytest.raises(tvmlite.TVMLiteError, match="run LowerBlocks first"):
        tvmlite.build(tvmlite.parse(MLP), tir_pipeline=[], cache=False)


def test_pipeline_keywords_reject_bad_values() -> None:
    mod = tvmlite.parse(MLP)
    with pytest.raises(tvmlite.TVMLiteError, match=r"unknown tir_pipeline 'fast' \(known: default"):
        tvmlite.build(mod, tir_pipeline="fast")
    with pytest.raises(tvmlite.TVMLiteError, match="tir_pipeline must be a pass"):
        tvmlite.build(mod, tir_pipeline=3)
    with pytest.raises(tvmlite.TVMLiteError, match="not both"):
        tvmlite.build(mod, pipeline="default", relax_pipeline="zero")
    with pytest.raises(tvmlite.TVMLiteError, match="unknown pipeline 'nope'.*zero"):
        tvmlite.lower(mod, relax_pipeline="nope")


def test_cache_key_tells_the_pipelines_apart() -> None:
    mod, target = tvmlite.parse(MLP), Target.of("llvm")
    default = cache_key(mod, target, "minimal", "default")
    assert default == cache_key(mod, target, "minimal", "default")
    assert default != cache_key(mod, target, "zero", "default")
    assert default != cache_key(mod, target, "minimal", [LowerTIR(), LegalizeOps()])
