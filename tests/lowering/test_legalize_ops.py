# ruff: noqa: E501  (TVMScript texts copied verbatim)
"""LegalizeOps behaviour: struct info, naming and sharing, idempotence,
overrides, untouched functions, symbolic shapes, op info."""

from __future__ import annotations

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import CallTIR
from tvmlite.dsl.ops import OpPatternKind, lookup, sinfo_of
from tvmlite.lowering.legalize import (
    LegalizeCtx,
    legalized_ops,
    op_info,
    register_legalize,
    registry,
)
from tvmlite.lowering.legalize.elementwise import unary_kernel
from tvmlite.transform import LegalizeOps

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"

TWO_ADDS = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((3,), dtype="float32"), z: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a: R.Tensor((2, 3), dtype="float32") = R.add(x, y)
            b: R.Tensor((2, 3), dtype="float32") = R.add(a, y)
            c: R.Tensor((4,), dtype="float32") = R.add(z, z)
            d: R.Tensor((2, 3), dtype="float32") = R.nn.relu(b)
            R.output(c)
        return c
"""
)

MARKED = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def ext(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Codegen": "dnnl"})
        gv: R.Tensor((4,), dtype="float32") = R.exp(x)
        return gv

    @R.function
    def prim(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": True})
        gv: R.Tensor((4,), dtype="float32") = R.exp(x)
        return gv

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        gv: R.Tensor((4,), dtype="float32") = R.exp(x)
        return gv
"""
)

SYMBOLIC = (
    HEADER
    + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n * 4",), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            gv: R.Tensor((n * 4,), dtype="float32") = R.reshape(x, R.shape([n * 4]))
            R.output(gv)
        return gv
"""
)


def _calls(func: relax.Function) -> list[relax.Call]:
    return [b.value for blk in func.body.blocks for b in blk.bindings]


def test_calls_become_call_tir_with_struct_info() -> None:
    mod = tvmlite.parse(TWO_ADDS)
    out = LegalizeOps()(mod)
    calls = _calls(out["main"])
    assert all(c.op == relax.Op("relax.call_tir") for c in calls)
    assert calls[0].sinfo_args[0] == mod["main"].body.blocks[0].bindings[0].var.struct_info
    assert [c.args[0].name for c in calls] == ["add", "add", "add1", "relu"]


def test_identical_kernels_are_shared_and_new_ones_numbered() -> None:
    out = LegalizeOps()(tvmlite.parse(TWO_ADDS))
    prims = sorted(k for k, f in out.functions.items() if isinstance(f, tir.PrimFunc))
    assert prims == ["add", "add1", "relu"]


def test_idempotent() -> None:
    once = LegalizeOps()(tvmlite.parse(TWO_ADDS))
    twice = LegalizeOps()(once)
    assert twice is once
    assert tvmlite.structural_equal(twice, once)


def test_codegen_functions_untouched_primitive_ones_legalized() -> None:
    mod = tvmlite.parse(MARKED)
    out = LegalizeOps()(mod)
    assert out["ext"] is mod["ext"]  # another codegen's: its ops stay for it
    for name in ("prim", "main"):  # a Primitive function is a fusion group: legalized
        body = out[name].body.blocks[0].bindings[0].value
        assert body.op == relax.Op("relax.call_tir")


def test_op_info_attributes() -> None:
    out = LegalizeOps()(tvmlite.parse(TWO_ADDS))
    info = op_info(out["add"])
    assert info == {"name": "relax.add", "kind": "broadcast", "attrs": {}}
    assert op_info(out["relu"])["kind"] == "elementwise"
    assert out["add"].attr("tir.noalias") is True


def test_op_info_survives_print_and_parse() -> None:
    src = (
        HEADER
        + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((3,), dtype="float32") = R.sum(x, axis=[1], keepdims=False)
            R.output(gv)
        return gv
"""
    )
    out = LegalizeOps()(tvmlite.parse(src))
    info = op_info(out["sum"])
    assert info["name"] == "relax.sum" and info["attrs"]["axis"] == (1,)
    again = tvmlite.parse(out.script())
    assert op_info(again["sum"]) == info
    assert tvmlite.structural_equal(again, out)


def test_customize_mapping_overrides_builtin() -> None:
    def my_exp(ctx: LegalizeCtx) -> relax.Expr:
        return unary_kernel(ctx, "my_exp", lambda x: tir.Call(x.dtype, "exp2", (x,)))

    out = LegalizeOps(customize_legalize_map={"relax.exp": my_exp})(tvmlite.parse(MARKED))
    assert "my_exp" in out.functions and "tir_exp" not in out.functions


def test_register_legalize_replaces_rule() -> None:
    old = registry.rule_for("relax.sigmoid")

    @register_legalize("relax.sigmoid")
    def keep(ctx: LegalizeCtx) -> None:  # declining leaves the call as it is
        return None

    try:
        src = MARKED.replace("R.exp", "R.sigmoid")
        out = LegalizeOps()(tvmlite.parse(src))
        assert out["main"].body.blocks[0].bindings[0].value.op == relax.Op("relax.sigmoid")
    finally:
        register_legalize("relax.sigmoid")(old)


def test_symbolic_shapes_get_kernel_vars() -> None:
    mod = tvmlite.parse(SYMBOLIC)
    out = LegalizeOps()(mod)
    kernel = out["reshape"]
    n_kernel = kernel.buffer_map[0][1].shape[0]
    n_main = mod["main"].params[0].struct_info.shape[0]
    assert isinstance(n_kernel, tir.Var) and n_kernel is not n_main
    assert len(kernel.params) == 2


def test_rule_may_return_other_ops() -> None:
    """A rule returning `R.*` calls (with helper bindings) has them legalized in turn."""

    def square_via_multiply(ctx: LegalizeCtx) -> relax.Expr:
        x = ctx.args[0]
        doubled = ctx.emit(ctx.make_op("relax.add", x, x))
        return ctx.make_op("relax.multiply", doubled, x)

    src = (
        HEADER
        + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 8), dtype="float32")) -> R.Tensor((3, 8), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((3, 8), dtype="float32") = R.square(x)
            R.output(gv)
        return gv
"""
    )
    out = LegalizeOps(customize_legalize_map={"relax.square": square_via_multiply})(
        tvmlite.parse(src)
    )
    names = [c.args[0].name for c in _calls(out["main"])]
    assert names == ["add", "multiply"]
    assert isinstance(out["main"].body.blocks[0].bindings[0].var, relax.DataflowVar)


def test_unlegalizable_calls_are_left() -> None:
    src = MARKED.replace("R.exp(x)", "R.stop_lift_params(x)")  # an op without a rule
    mod = tvmlite.parse(src)
    assert LegalizeOps()(mod) is mod


def test_dialects() -> None:
    classic = LegalizeOps()(tvmlite.parse(MARKED))
    assert classic["tir_exp"].s_tir is False and classic["tir_exp"].attr("tir.noalias")
    new = LegalizeOps(dialect="tvm-0.27")(tvmlite.parse(MARKED))
    assert new["tir_exp"].s_tir is True and new["tir_exp"].attr("tirx.noalias")
    assert "T.sblock" in new.script()


def test_registry_coverage() -> None:
    assert len(legalized_ops()) >= 110


class _RecordingSink:
    """A KernelSink that is not LegalizeOps: rules need nothing else of the pass."""

    s_tir = True

    def __init__(self) -> None:
        self.kernels: dict[str, tir.PrimFunc] = {}
        self.bindings: list[tuple[relax.Var, relax.Expr]] = []

    def add_kernel(self, name: str, func: tir.PrimFunc) -> relax.GlobalVar:
        self.kernels[name] = func
        return relax.GlobalVar(name)

    def emit(self, value: relax.Expr) -> relax.Var:
        var = relax.Var(f"lv{len(self.bindings)}", sinfo_of(value))
        self.bindings.append((var, value))
        return var

    def emit_match_cast(
        self, value: relax.Expr, struct_info: relax.StructInfo, name: str
    ) -> relax.Var:
        var = relax.Var(name, struct_info)
        self.bindings.append((var, value))
        return var


def test_rules_emit_into_any_kernel_sink() -> None:
    call = tvmlite.parse(TWO_ADDS)["main"].body.blocks[0].bindings[0].value
    sink = _RecordingSink()
    ctx = LegalizeCtx(call, lookup("relax.add"), sinfo_of(call), sink)
    result = registry.rule_for("relax.add")(ctx)
    view = CallTIR.of(result)
    assert view is not None and view.args == call.args
    kernel = sink.kernels[view.callee.name]
    assert kernel.attr("op_kind") == OpPatternKind.kBroadcast.spelling == "broadcast"
    assert kernel.attr("tirx.noalias") is True and kernel.s_tir  # the sink's spelling
    assert sink.bindings == []  # R.add binds no helper values
