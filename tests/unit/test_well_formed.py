"""TVM's WellFormed rules the Relax verifier adds (issue 14 item 1): purity of
dataflow blocks and pure functions, each var bound once, a public function's
global_symbol. One invalid program per rule, each rejected at parse time with
its location, as TVM's parser rejects it; the valid spelling of each parses."""

from __future__ import annotations

import pytest

import tvmlite
from tvmlite.diagnostics import VerifyError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.verify.relax import verify_function, verify_module

HEAD = "from tvm.script import ir as I\nfrom tvm.script import relax as R\n\n"
T4 = 'R.Tensor((4,), "float32")'


def function(body: str, decorator: str = "@R.function") -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"{HEAD}{decorator}\ndef main(x: {T4}) -> {T4}:\n{lines}\n"


PACKED = f'y = R.call_packed("f", x, sinfo_args={T4})'
INVALID = {
    "packed call in a pure function": (
        function(f"{PACKED}\nreturn y"),
        r"m.tvms:6:9: error: R.call_packed\('f'\) has side effects, but main is pure "
        r"\(declare it @R.function\(pure=False\)\)",
    ),
    "packed call in a dataflow block": (
        function(
            f"with R.dataflow():\n    {PACKED}\n    R.output(y)\nreturn y",
            "@R.function(pure=False)",
        ),
        r"m.tvms:7:13: error: R.call_packed\('f'\) has side effects: it cannot be inside a dataflow block",
    ),
    "R.print in a pure function": (
        function('R.print(x, format="{}")\nreturn x'),
        r"error: R.print has side effects, but main is pure",
    ),
    "R.assert_op in a dataflow block": (
        function(
            'with R.dataflow():\n    R.assert_op(R.const(True, "bool"), format="no")\n'
            "    y = R.add(x, x)\n    R.output(y)\nreturn y",
            "@R.function(pure=False)",
        ),
        r"error: R.assert_op has side effects: it cannot be inside a dataflow block",
    ),
    "impure function called from a pure one": (
        HEAD
        + f"""@I.ir_module
class Module:
    @R.function(pure=False)
    def log(x: {T4}) -> {T4}:
        R.print(x, format="{{}}")
        return x

    @R.function
    def main(x: {T4}) -> {T4}:
        y = Module.log(x)
        return y
""",
        r"error: the call of log \(pure=False\) has side effects, but main is pure",
    ),
    "impure callable parameter called in a pure function": (
        function(
            "y = f(x)\nreturn y",
        ).replace(f"(x: {T4})", f"(x: {T4}, f: R.Callable(({T4},), {T4}, False))"),
        r"error: the call of f \(an impure callable\) has side effects, but main is pure",
    ),
    "private function with a global_symbol": (
        function('R.func_attr({"global_symbol": "main"})\nreturn x', "@R.function(private=True)"),
        r"m.tvms:5:1: error: private function main has a global_symbol",
    ),
    "module member whose global_symbol is not its name": (
        HEAD
        + f"""@I.ir_module
class Module:
    @R.function
    def main(x: {T4}) -> {T4}:
        R.func_attr({{"global_symbol": "other"}})
        return x
""",
        r'm.tvms:7:5: error: function main has global_symbol "other"',
    ),
}

VALID = {
    "packed call in an impure function, outside the block": function(
        f"with R.dataflow():\n    z = R.add(x, x)\n    R.output(z)\n{PACKED}\nreturn y",
        "@R.function(pure=False)",
    ),
    "pure packed calls anywhere": function(
        "with R.dataflow():\n"
        f'    y = R.call_pure_packed("f", x, sinfo_args={T4})\n'
        f'    z = R.call_dps_packed("g", (y,), out_sinfo={T4})\n'
        "    R.output(z)\nreturn z"
    ),
    "force_pure function": function(
        f'R.func_attr({{"relax.force_pure": True}})\n{PACKED}\nreturn y'
    ),
    "lone function whose symbol is not its name (TVM prints it as main)": function(
        'R.func_attr({"global_symbol": "my-func"})\nreturn x'
    ),
    "print in an impure function": function(
        'R.print(x, format="{}")\nreturn x', "@R.function(pure=False)"
    ),
}


@pytest.mark.parametrize("rule", sorted(INVALID))
def test_each_rule_rejects_its_program_with_a_location(rule: str) -> None:
    text, message = INVALID[rule]
    with pytest.raises(tvmlite.ParseError, match=message):
        tvmlite.parse(text, filename="m.tvms")


@pytest.mark.parametrize("case", sorted(VALID))
def test_valid_spellings_parse(case: str) -> None:
    text = VALID[case]
    parsed = tvmlite.parse(text)
    assert tvmlite.parse(parsed.script()).script() == parsed.script()


TENSOR = relax.TensorStructInfo((tir.IntImm("int64", 4),), "float32", 1)


def test_a_var_bound_twice() -> None:
    x, y = relax.Var("x", TENSOR), relax.Var("y", TENSOR)
    exp = relax.Call(relax.Op("relax.exp"), (x,))
    again = relax.BindingBlock((relax.VarBinding(y, exp), relax.VarBinding(y, exp)), False)
    f = relax.Function((x,), relax.SeqExpr((again,), y), TENSOR, True, ())
    with pytest.raises(VerifyError, match="y is bound more than once"):
        verify_function(f)
    shadow = relax.BindingBlock((relax.VarBinding(x, exp),), False)
    g = relax.Function((x,), relax.SeqExpr((shadow,), x), TENSOR, True, ())
    with pytest.raises(VerifyError, match="x is bound more than once"):
        verify_module(IRModule({"main": g}))


def test_a_pass_that_leaves_an_impure_call_in_a_block_is_caught() -> None:
    x, y = relax.Var("x", TENSOR), relax.DataflowVar("y", TENSOR)
    call = relax.Call(relax.ExternFunc("f"), (x,), (), (TENSOR,))
    out = relax.Var("z", TENSOR)
    blk = relax.BindingBlock((relax.VarBinding(y, call), relax.VarBinding(out, y)), True)
    f = relax.Function((x,), relax.SeqExpr((blk,), out), TENSOR, False, ())
    with pytest.raises(VerifyError, match="cannot be inside a dataflow block"):
        verify_function(f)
