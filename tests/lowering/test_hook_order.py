"""Where a target kind's hooks act in the flow (issue 14, RFC 001): relax_to_tir
runs before the pipeline, so what a hook leaves is legalized (and fused) like
the rest; a kind may name its default pipeline; "lower_tir" passes run inside
TIR lowering, on loop nests whose buffers still have their dims."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pytest
from test_target_hooks import ADD_RELU

import tvmlite
from tvmlite.dsl import relax
from tvmlite.dsl.module import IRModule
from tvmlite.lowering import register_target_kind, unregister_target_kind
from tvmlite.lowering.passes.partition_for_compiler import (
    PartitionForCompiler,
    lower_compiler_calls,
)
from tvmlite.lowering.transform import ModulePass, Pass

ADD_2D = """from tvm.script import relax as R

@R.function
def main(x: R.Tensor((3, 5), dtype="float32"), y: R.Tensor((3, 5), dtype="float32")) -> R.Tensor((3, 5), dtype="float32"):
    with R.dataflow():
        gv = R.add(x, y)
        R.output(gv)
    return gv
"""
X = np.array([1, -5, 2, -1], "float32")
Y = np.array([1, 1, -4, 3], "float32")


@pytest.fixture
def half() -> Iterator[None]:
    """A kind whose relax_to_tir turns its R.add functions into R.multiply calls:
    high-level ops left for the pipeline."""

    def relax_to_tir(target: object) -> Pass:
        def lower(mod: IRModule) -> IRModule:
            def call(func: relax.Function, args: tuple, sinfo: object) -> relax.Expr:
                return relax.Call(relax.Op("relax.multiply"), tuple(args), (), ())

            return lower_compiler_calls(mod, "half", call)

        return ModulePass(lower, "half_relax_to_tir")

    register_target_kind(
        "half",
        passes={"before_legalize": (lambda t: PartitionForCompiler("half", [["relax.add"]]),)},
        relax_to_tir=relax_to_tir,
    )
    yield
    unregister_target_kind("half")


def kernels(mod: IRModule) -> list[str]:
    return sorted(n for n, f in mod.functions.items() if not isinstance(f, relax.Function))


@pytest.mark.parametrize(("pipeline", "fused"), [("minimal", False), ("default", True)])
def test_what_relax_to_tir_leaves_is_legalized_by_the_pipeline(
    half: None, pipeline: str, fused: bool
) -> None:
    mod = tvmlite.parse(ADD_RELU)
    lowered = tvmlite.lower(mod, "llvm -libs=half", pipeline)
    want = ["fused_multiply_relu"] if fused else ["multiply", "relu"]
    assert kernels(lowered) == want
    ex = tvmlite.build(mod, "llvm -libs=half", pipeline, cache=False)
    np.testing.assert_array_equal(ex["main"](X, Y), np.maximum(X * Y, 0))


@pytest.fixture
def plain() -> Iterator[None]:
    register_target_kind("plain", pipeline="minimal")
    yield
    unregister_target_kind("plain")


def test_a_kind_names_its_default_pipeline(plain: None) -> None:
    mod = tvmlite.parse(ADD_RELU)
    assert kernels(tvmlite.lower(mod)) == ["fused_add_relu"]  # the host's "fast"
    assert kernels(tvmlite.lower(mod, "llvm -libs=plain")) == ["add", "relu"]
    assert kernels(tvmlite.lower(mod, "plain")) == ["add", "relu"]
    # TVM's relax_pipeline="default" is the kind's pipeline too, and TVM's own
    # default build (no fusion) for a target whose kinds name none.
    tvm_default = tvmlite.lower(mod, "llvm -libs=plain", relax_pipeline="default")
    assert kernels(tvm_default) == ["add", "relu"]
    assert kernels(tvmlite.lower(mod, relax_pipeline="default")) == ["add", "relu"]
    assert kernels(tvmlite.lower(mod, "llvm -libs=plain", "default")) == ["fused_add_relu"]
    ex = tvmlite.build(mod, "plain", cache=False)
    np.testing.assert_array_equal(ex["main"](X, Y), np.maximum(X + Y, 0))


@pytest.fixture
def inner() -> Iterator[list[str]]:
    """A kind with a pass inside LowerTIR; records each prim function's script."""
    seen: list[str] = []

    def record(mod: IRModule) -> IRModule:
        seen.extend(f.script() for f in mod.functions.values() if not isinstance(f, relax.Function))
        return mod

    register_target_kind("inner", passes={"lower_tir": (lambda t: ModulePass(record, "rec"),)})
    yield seen
    unregister_target_kind("inner")


def test_lower_tir_passes_see_loops_over_buffers_with_dims(inner: list[str]) -> None:
    mod = tvmlite.parse(ADD_2D)
    lowered = tvmlite.lower(mod, "llvm -libs=inner")
    (script,) = inner
    assert "T.block(" not in script and "T.sblock(" not in script  # blocks lowered
    assert re.search(r"\w+\[\w+, \w+\] = ", script)  # 2-D stores: not flattened yet
    assert not re.search(r"\w+\[\w+, \w+\] = ", lowered["add"].script())
    x = np.arange(15, dtype="float32").reshape(3, 5)
    ex = tvmlite.build(mod, "llvm -libs=inner", cache=False)
    np.testing.assert_array_equal(ex["main"](x, x), x + x)


SUM = """from tvm.script import relax as R

@R.function
def main(x: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    gv = R.sum(x, axis=[1])
    return gv
"""


def test_a_failing_schedule_pass_is_named_and_a_declined_function_runs_as_written() -> None:
    from tvmlite.tir import Schedule, ScheduleError

    def parallel_inner(mod: IRModule) -> IRModule:
        sch = Schedule(mod)
        sch.work_on("sum")
        block = sch.get_child_blocks(sch.get_sblock("root"))[0]
        sch.parallel(sch.get_loops(block)[1])  # the reduction loop: refused
        return sch.mod

    def declining(mod: IRModule) -> IRModule:
        try:
            return parallel_inner(mod)
        except ScheduleError:
            return mod  # declined: the function keeps its loops

    register_target_kind("bad", passes={"schedule": (lambda t: ModulePass(parallel_inner, "Bad"),)})
    register_target_kind("shy", passes={"schedule": (lambda t: ModulePass(declining, "Shy"),)})
    try:
        mod = tvmlite.parse(SUM)
        with pytest.raises(
            tvmlite.TVMLiteError, match=r"schedule pass 'Bad' failed: parallel: .*k1"
        ):
            tvmlite.build(mod, "llvm -libs=bad", cache=False)
        ex = tvmlite.build(mod, "llvm -libs=shy", cache=False)
        x = np.arange(32, dtype="float32").reshape(4, 8)
        np.testing.assert_array_equal(ex["main"](x), x.sum(axis=1))
    finally:
        unregister_target_kind("bad")
        unregister_target_kind("shy")
