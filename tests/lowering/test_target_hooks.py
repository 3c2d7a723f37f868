"""Targets as data plus hooks: parsing target text, the codegen machine honouring
-mcpu/-mattr, and a toy target kind registered from this file that drives all
three hooks (passes at the named points, relax_to_tir, tir_to_runtime)."""

from __future__ import annotations

import platform
from collections.abc import Iterator

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import relax
from tvmlite.dsl.call_tir import call_tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering import Target, register_target_kind, unregister_target_kind
from tvmlite.lowering.passes.partition_for_compiler import (
    PartitionForCompiler,
    compiler_functions,
    lower_compiler_calls,
)
from tvmlite.lowering.target import POINTS
from tvmlite.lowering.transform import ModulePass, Pass
from tvmlite.runtime.registry import list_global_func_names

HEADER = "from tvm.script import ir as I\nfrom tvm.script import tir as T\nfrom tvm.script import relax as R\n\n"
ADD_RELU = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            lv = R.add(x, y)
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv
"""
)
TOY_KERNEL = (
    HEADER
    + """@T.prim_func
def toy_add(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
    T.func_attr({"target": "toy"})
    for i in range(4):
        with T.block("c"):
            vi = T.axis.spatial(4, i)
            c[vi] = a[vi] + b[vi]
"""
)


def test_target_text_is_parsed_into_data() -> None:
    t = Target("llvm -mcpu=skylake-avx512 -mattr=+avx2,-fma -opt-level=2 -libs=blas")
    assert (t.kind, t.mcpu, t.mattr, t.opt_level, t.libs) == (
        "llvm",
        "skylake-avx512",
        ("+avx2", "-fma"),
        2,
        ("blas",),
    )
    assert Target(str(t)) == t and tvmlite.Target("llvm") == Target.of("llvm")
    assert [k.name for k in t.kinds] == ["llvm", "blas"]
    assert t.machine_options().features == "+avx2,-fma"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cuda", "unsupported target 'cuda'"),
        ("llvm -fast-math", "unknown option -fast-math"),
        ("llvm -opt-level=9", "-opt-level must be 0 to 3"),
        ("llvm -libs=nope", "unsupported target 'nope'"),
        ("-mcpu=x", "must start with a kind"),
    ],
)
def test_bad_targets_are_clear_errors(text: str, message: str) -> None:
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        Target(text)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 registers")
def test_codegen_honours_mcpu_and_mattr() -> None:
    src = (
        HEADER
        + """@T.prim_func
def scale(a: T.Buffer((1024,), "float32"), b: T.Buffer((1024,), "float32")):
    for i in range(1024):
        with T.block("b"):
            vi = T.axis.spatial(1024, i)
            b[vi] = a[vi] * T.float32(3.0)
"""
    )
    mod = tvmlite.parse(src)
    baseline = tvmlite.build(mod, target="llvm -mcpu=x86-64").assembly()
    wide = tvmlite.build(mod, target="llvm -mcpu=x86-64 -mattr=+avx2").assembly()
    assert "%ymm" not in baseline and "%xmm" in baseline
    assert "%ymm" in wide
    a = np.arange(1024, dtype="float32")
    b = np.zeros_like(a)
    tvmlite.build(mod, target="llvm -mcpu=x86-64 -opt-level=1")["scale"](a, b)
    np.testing.assert_array_equal(b, a * 3)


# ------------------------------------------------------------ a toy kind


class ToyLog:
    def __init__(self) -> None:
        self.points: list[str] = []
        self.blocks: dict[str, bool] = {}  # point -> any prim function still has blocks
        self.seen_ops: list[str] = []
        self.compiled: list[str] = []


def _toy_kind(log: ToyLog) -> None:
    def mark(point: str) -> Pass:
        def run(mod: IRModule) -> IRModule:
            log.points.append(point)
            log.blocks[point] = "T.block(" in mod.script()
            return mod

        return ModulePass(run, f"toy_{point}")

    def partition(target: Target) -> Pass:
        return PartitionForCompiler("toy", [["relax.add"]])

    def relax_to_tir(target: Target) -> Pass:
        def lower(mod: IRModule) -> IRModule:
            for func in compiler_functions(mod, "toy").values():
                for b in func.body.blocks[0].bindings:
                    log.seen_ops.append(b.value.op.name)
            kernel = tvmlite.parse(TOY_KERNEL)

            def call(func: relax.Function, args: tuple, sinfo: relax.StructInfo) -> relax.Expr:
                return call_tir(relax.GlobalVar("toy_add"), args, sinfo)

            out = lower_compiler_calls(mod, "toy", call)
            return out.with_functions({**out.functions, "toy_add": kernel})

        return ModulePass(lower, "toy_relax_to_tir")

    def tir_to_runtime(mod: IRModule, target: Target) -> dict[str, object]:
        log.compiled.extend(mod.functions)

        def toy_add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
            np.add(a, b, out=c)

        return {"toy_add": toy_add}

    register_target_kind(
        "toy",
        passes={
            "before_legalize": (partition, lambda t: mark("before_legalize")),
            "after_legalize": (lambda t: mark("after_legalize"),),
            "schedule": (lambda t: mark("schedule"),),
            "lower_tir": (lambda t: mark("lower_tir"),),
            "before_codegen": (lambda t: mark("before_codegen"),),
        },
        relax_to_tir=relax_to_tir,
        tir_to_runtime=tir_to_runtime,
        options=("flavour",),
    )


@pytest.fixture
def toy() -> Iterator[ToyLog]:
    log = ToyLog()
    _toy_kind(log)
    yield log
    unregister_target_kind("toy")


@pytest.mark.parametrize("pipeline", ["minimal", "default"])
@pytest.mark.parametrize("target", ["toy -flavour=sweet", "llvm -libs=toy"])
def test_toy_kind_drives_all_three_hooks(toy: ToyLog, pipeline: str, target: str) -> None:
    mod = tvmlite.parse(ADD_RELU)
    ex = tvmlite.build(mod, target=target, pipeline=pipeline)
    x, y = np.array([1, -5, 2, -1], "float32"), np.array([1, 1, -4, 3], "float32")
    np.testing.assert_array_equal(ex["main"](x, y), np.maximum(x + y, 0))
    assert toy.points == list(POINTS)
    # Prim functions reach the schedule point with their blocks, LowerTIR's inner
    # point and codegen without.
    assert toy.blocks["schedule"] and not toy.blocks["lower_tir"]
    assert not toy.blocks["before_codegen"]
    # The Compiler function reached the kind's own relax_to_tir with its
    # high-level op (relax_to_tir runs before the pipeline legalizes), and the
    # kernel it made for the kind was not fused into an LLVM one.
    assert toy.seen_ops == ["relax.add"]
    # Tagged kernels go to their kind; untagged ones too when the build target
    # is that kind. The hook declined relu (no code for it): LLVM compiled it.
    offered = ["relu", "toy_add"] if target.startswith("toy") else ["toy_add"]
    assert sorted(toy.compiled) == offered
    assert "tvmlite_toy_add" not in ex.llvm_ir() and "relu" in ex.llvm_ir()
    # The kind's code travels with the lowered module into the build: nothing is
    # registered in the process.
    assert not [n for n in list_global_func_names() if n.startswith("tvmlite.toy.")]
    if target.startswith("toy"):
        assert Target(target).attr("flavour") == "sweet"
    lowered = tvmlite.lower(mod, target, pipeline)  # (the hooks run again)
    assert [s.split(".")[:3] for s in lowered.external_code] == [["tvmlite", "toy", "toy_add"]]


def test_kinds_register_once_and_points_are_checked(toy: ToyLog) -> None:
    with pytest.raises(tvmlite.TVMLiteError, match="already exists"):
        register_target_kind("toy")
    with pytest.raises(tvmlite.TVMLiteError, match="unknown point 'middle'"):
        register_target_kind("toy2", passes={"middle": ()})


def test_compiler_function_without_a_kind_is_a_clear_error() -> None:
    mod = PartitionForCompiler("nowhere", ["relax.add"])(tvmlite.parse(ADD_RELU))
    with pytest.raises(tvmlite.TVMLiteError, match='codegen "nowhere".*no target kind'):
        tvmlite.build(mod)
