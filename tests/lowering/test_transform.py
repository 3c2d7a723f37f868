"""Pass infrastructure: contexts, sequences, instruments, verification."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

import tvmlite
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.transform import Pass
from tvmlite.transform import (
    LegalizeOps,
    PassContext,
    PassInstrument,
    PassTimingInstrument,
    PrintAfterAll,
    Sequential,
    function_pass,
    module_pass,
    register_config_option,
)

MOD = """
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((4,), dtype="float32") = R.exp(x)
            R.output(gv)
        return gv
"""


@module_pass(name="AddAttr")
def add_attr(mod: IRModule) -> IRModule:
    return IRModule(dict(mod.functions), {**mod.attrs, "seen": True}, dialect=mod.dialect)


@dataclass(frozen=True)
class CountPass(Pass):
    name: str = "CountPass"
    opt_level: int = 3

    def run(self, mod: IRModule) -> IRModule:
        return IRModule(dict(mod.functions), {**mod.attrs, "count": 1}, dialect=mod.dialect)


def test_module_pass_is_pure() -> None:
    mod = tvmlite.parse(MOD)
    out = add_attr(mod)
    assert out.attrs["seen"] is True and "seen" not in mod.attrs


def test_sequential_runs_in_order_and_records_timing() -> None:
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        out = Sequential([add_attr, CountPass()], name="Both")(tvmlite.parse(MOD))
    assert out.attrs == {"seen": True}  # CountPass needs opt_level 3 > 2
    names = [n for _, n, _ in timing.records]
    assert names == ["Both", "AddAttr"]
    assert "AddAttr" in timing.render()


def test_opt_level_and_disabled_and_required() -> None:
    mod = tvmlite.parse(MOD)
    with PassContext(opt_level=3):
        assert CountPass()(mod).attrs["count"] == 1
    with PassContext(opt_level=3, disabled_pass=["CountPass"]):
        assert "count" not in CountPass()(mod).attrs
    with PassContext(required_pass=["CountPass"]):
        assert CountPass()(mod).attrs["count"] == 1


def test_context_nesting_and_config() -> None:
    assert PassContext.current().opt_level == 2
    with PassContext(config={"relax.transform.apply_legalize_ops": False}) as outer:
        assert PassContext.current() is outer
        assert outer.get("relax.transform.apply_legalize_ops") is False
        with PassContext(opt_level=0) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current().get("relax.transform.apply_legalize_ops") is None


def test_print_after_all() -> None:
    stream = io.StringIO()
    with PassContext(instruments=[PrintAfterAll(stream)]):
        add_attr(tvmlite.parse(MOD))
    assert stream.getvalue().startswith("# IR after AddAttr")
    assert "def main" in stream.getvalue()


def test_instrument_can_skip_and_hooks_fire() -> None:
    events: list[str] = []

    class Skip(PassInstrument):
        def enter_pass_ctx(self) -> None:
            events.append("enter")

        def exit_pass_ctx(self) -> None:
            events.append("exit")

        def should_run(self, mod: IRModule, info: object) -> bool:
            return False

    mod = tvmlite.parse(MOD)
    with PassContext(instruments=[Skip()]):
        assert add_attr(mod) is mod
    assert events == ["enter", "exit"]


def test_function_pass_skips_marked_functions() -> None:
    seen: list[str] = []

    @function_pass(name="Visit", kinds=("relax",))
    def visit(func: object, mod: IRModule) -> object:
        seen.append("f")
        return func

    mod = tvmlite.parse(MOD)
    assert visit(mod) is mod
    assert seen == ["f"]


def test_verify_between_passes_catches_broken_module() -> None:
    from tvmlite.dsl import relax

    @module_pass(name="Break")
    def break_it(mod: IRModule) -> IRModule:
        main = mod["main"]
        bad = relax.Function(
            main.params,
            relax.SeqExpr((), relax.Var("ghost", relax.ObjectStructInfo())),
            main.ret_struct_info,
            main.is_pure,
            main.attrs,
        )
        return IRModule({"main": bad}, dialect=mod.dialect)

    mod = tvmlite.parse(MOD)
    with PassContext(verify=True), pytest.raises(tvmlite.VerifyError) as caught:
        break_it(mod)
    assert "after pass Break" in str(caught.value) and "ghost" in str(caught.value)
    # Contexts entered inside inherit the setting (the suite's autouse fixture
    # relies on it); an explicit verify=False turns it off.
    with PassContext(verify=True):
        inner = PassContext(config={"relax.FuseOps.max_depth": 4})
        with inner, pytest.raises(tvmlite.VerifyError, match="Break"):
            Sequential([break_it], name="outer")(mod)
        with PassContext(verify=False):
            assert PassContext.current().verifies() is False
            break_it(mod)
    with PassContext(verify=False):
        with PassContext(opt_level=3):
            assert not PassContext.current().verifies()


def test_legalize_under_verify() -> None:
    from tvmlite.transform import LegalizeOps

    with PassContext(verify=True):
        out = LegalizeOps()(tvmlite.parse(MOD))
    assert "tir_exp" in out


def test_apply_legalize_ops_false_turns_every_legalize_ops_off() -> None:
    mod = tvmlite.parse(MOD)
    assert "tir_exp" in LegalizeOps()(mod).functions  # on by default
    with PassContext(config={"relax.transform.apply_legalize_ops": False}):
        assert LegalizeOps()(mod) is mod  # an explicit pass is off too, as in TVM
        for pipeline in ("minimal", "default", [LegalizeOps()]):
            with pytest.raises(tvmlite.TVMLiteError, match="R.exp"):
                tvmlite.build(mod, pipeline=pipeline, cache=False)


def test_config_rejects_unknown_keys_and_wrong_types() -> None:
    with pytest.raises(tvmlite.TVMLiteError) as err:
        PassContext(config={"relax.transform.apply_legalize_op": False})
    message = str(err.value)
    assert "unknown key 'relax.transform.apply_legalize_op'" in message
    assert "known: relax.FuseOps.max_depth, relax.transform.apply_legalize_ops" in message
    with pytest.raises(tvmlite.TVMLiteError, match="apply_legalize_ops' must be True or False"):
        PassContext(config={"relax.transform.apply_legalize_ops": "no"})
    with pytest.raises(tvmlite.TVMLiteError, match="max_depth' must be a int, got True"):
        PassContext(config={"relax.FuseOps.max_depth": True})
    with pytest.raises(tvmlite.TVMLiteError, match="unknown key 'mine.flag'"):
        PassContext().with_config({"mine.flag": 1})


def test_registered_config_option_is_accepted() -> None:
    register_config_option("tests.transform.flag", bool)
    with PassContext(config={"tests.transform.flag": True}):
        assert PassContext.current().get("tests.transform.flag") is True
    with pytest.raises(tvmlite.TVMLiteError, match="already registered as bool"):
        register_config_option("tests.transform.flag", int)


def test_suite_verifies_between_passes() -> None:
    """tests/conftest.py turns verification on for the whole session."""
    assert PassContext.current().verifies()
    with PassContext(config={"relax.transform.apply_legalize_ops": False}):
        assert PassContext.current().verifies()


MARKED = """
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def marked(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({MARK})
        with R.dataflow():
            unused: R.Tensor((4,), dtype="float32") = R.negative(x)
            lv: R.Tensor((4,), dtype="float32") = R.exp(x)
            gv: R.Tensor((4,), dtype="float32") = R.exp(lv)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        lv: R.Tensor((4,), dtype="float32") = Module.marked(x)
        gv: R.Tensor((4,), dtype="float32") = R.sqrt(lv)
        return gv
"""


@pytest.mark.parametrize(
    "mark",
    ['"Primitive": True', '"Compiler": "ext"', '"Codegen": "ext"', '"Composite": "ext.exp"'],
)
def test_every_graph_pass_leaves_external_functions_alone(mark: str) -> None:
    from tvmlite.lowering.transform import is_external
    from tvmlite.transform import DeadCodeElimination, FuseOps, LegalizeOps

    mod = tvmlite.parse(MARKED.replace("MARK", mark))
    assert is_external(mod["marked"]) and not is_external(mod["main"])
    out = Sequential([LegalizeOps(), FuseOps(), DeadCodeElimination()])(mod)
    if mark.startswith('"Primitive"'):
        # A fusion group's operators are legalized (TVM's LegalizeOps does it too);
        # FuseOps and DeadCodeElimination leave it alone (its unused binding stays).
        legal = LegalizeOps()(mod)["marked"]
        assert tvmlite.structural_equal(out["marked"], legal) and "tir_exp" in out
        assert len(out["marked"].body.blocks[0].bindings) == 3
        return
    assert out["marked"] is mod["marked"]  # not legalized, fused or cleaned inside
    assert "tir_sqrt" in out and "exp" not in out  # main legalized, the marked function not
