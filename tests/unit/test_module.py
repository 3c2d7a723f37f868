"""IRModule is immutable: read-only tables copied on construction, new modules
through `replace` and `with_functions`, and passes that leave their input alone."""

from __future__ import annotations

import dataclasses

import pytest

import tvmlite
from tvmlite.dsl import relax
from tvmlite.dsl.module import TVM027, IRModule
from tvmlite.transform import LegalizeOps

TEXT = """# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    I.module_attrs({"system_lib_prefix": "lib_"})
    ext = R.ExternFunc("my_ext")

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y: R.Tensor((4,), dtype="float32") = R.exp(x)
        return y
"""


def test_fields_and_tables_are_read_only() -> None:
    mod = tvmlite.parse(TEXT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        mod.dialect = TVM027  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        mod.functions = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        mod.functions["other"] = mod["ext"]  # type: ignore[index]
    with pytest.raises(TypeError):
        mod.attrs["system_lib_prefix"] = "x"  # type: ignore[index]
    assert list(mod.functions) == ["ext", "main"]


def test_construction_copies_the_tables() -> None:
    functions = {"ext": relax.ExternFunc("f")}
    attrs = {"a": 1}
    mod = IRModule(functions, attrs)
    functions["other"] = relax.ExternFunc("g")
    attrs["a"] = 2
    assert list(mod.functions) == ["ext"] and mod.attrs == {"a": 1}


def test_with_functions_and_replace() -> None:
    mod = tvmlite.parse(TEXT)
    assert mod.with_functions(dict(mod.functions)) is mod  # nothing changed: the same module
    reordered = mod.with_functions({"main": mod["main"], "ext": mod["ext"]})
    assert reordered is not mod and list(reordered.functions) == ["main", "ext"]
    smaller = mod.with_functions({"main": mod["main"]})
    assert list(smaller.functions) == ["main"] and "ext" in mod
    assert smaller.attrs == mod.attrs and smaller.dialect == mod.dialect
    other = mod.replace(dialect=TVM027)
    assert other.dialect == TVM027 and mod.dialect != TVM027
    assert other.functions == mod.functions and other["main"] is mod["main"]


def test_a_pass_leaves_its_input_alone() -> None:
    mod = tvmlite.parse(TEXT)
    before = mod.script()
    out = LegalizeOps()(mod)
    assert "tir_exp" in out and "tir_exp" not in mod
    assert mod.script() == before
    assert out.attrs == {"system_lib_prefix": "lib_"}
