"""BYOC functions as TVM prints them (issue 14 item 5): a `Codegen`-tagged
function goes to the relax_to_tir hook of the kind it names (TVM's RunCodegen,
the hook `Compiler` functions use), a module-level `Primitive` function holding
operators is legalized, and a function nothing consumes is an error naming it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import relax
from tvmlite.dsl.module import IRModule
from tvmlite.lowering import register_target_kind, unregister_target_kind
from tvmlite.lowering.passes.partition_for_compiler import lower_compiler_calls
from tvmlite.lowering.transform import ModulePass, Pass
from tvmlite.runtime.registry import remove_global_func

GROUP = """from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function(private=True)
    def fused_add_relu(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        R.func_attr(ATTRS)
        with R.dataflow():
            a = R.add(x, y)
            b = R.nn.relu(a)
            R.output(b)
        return b

    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        with R.dataflow():
            gv = cls.fused_add_relu(x, y)
            R.output(gv)
        return gv
"""
X, Y = np.array([1, -5, 2, -1], "float32"), np.ones(4, "float32")


def group(attrs: str) -> IRModule:
    return tvmlite.parse(GROUP.replace("ATTRS", attrs))


@pytest.mark.parametrize("pipeline", ["minimal", "default"])
def test_a_primitive_function_holding_ops_is_legalized(pipeline: str) -> None:
    mod = group('{"Primitive": True}')
    ex = tvmlite.build(mod, pipeline=pipeline, cache=False)
    np.testing.assert_array_equal(ex["main"](X, Y), np.maximum(X + Y, 0))


@pytest.fixture
def mylib() -> Iterator[list[str]]:
    """A codegen named like TVM's BYOC backends: it offloads each function to a
    packed function of its own (NumPy here) and records what it was given."""
    seen: list[str] = []

    def offload(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        np.maximum(x + y, 0, out=out)

    def relax_to_tir(target: object) -> Pass:
        def run(mod: IRModule) -> IRModule:
            def call(func: relax.Function, args: tuple, sinfo: relax.StructInfo) -> relax.Expr:
                ops = [b.value.op.name for blk in func.body.blocks for b in blk.bindings]
                seen.extend(ops)
                packed = relax.ExternFunc("mylib.add_relu")
                op = relax.Op("relax.call_dps_packed")
                return relax.Call(op, (packed, relax.Tuple(tuple(args))), (), (sinfo,))

            return lower_compiler_calls(mod, "mylib", call)

        return ModulePass(run, "mylib_codegen")

    tvmlite.register_func("mylib.add_relu", offload, override=True)
    register_target_kind("mylib", relax_to_tir=relax_to_tir)
    yield seen
    unregister_target_kind("mylib")
    remove_global_func("mylib.add_relu")


@pytest.mark.parametrize("pipeline", ["minimal", "default"])
def test_a_codegen_function_goes_to_its_kind(mylib: list[str], pipeline: str) -> None:
    mod = group('{"Codegen": "mylib"}')
    ex = tvmlite.build(mod, "llvm -libs=mylib", pipeline, cache=False)
    np.testing.assert_array_equal(ex["main"](X, Y), np.maximum(X + Y, 0))
    assert mylib == ["relax.add", "relax.nn.relu"]  # the ops, as TVM printed them


def test_functions_nothing_consumes_are_named() -> None:
    with pytest.raises(
        tvmlite.TVMLiteError,
        match=r"function 'fused_add_relu' is for the codegen \"mylib\".*no target kind 'mylib'",
    ):
        tvmlite.build(group('{"Codegen": "mylib"}'), cache=False)
    with pytest.raises(
        tvmlite.TVMLiteError,
        match=r"function 'fused_add_relu' is a Composite function \(pattern 'mylib.add_relu'\) "
        "outside any Codegen function",
    ):
        tvmlite.build(group('{"Composite": "mylib.add_relu", "Primitive": True}'), cache=False)
