"""TVM's WellFormed rules (issues 14, 12 and 25): purity of dataflow blocks and pure
functions, each var bound once, a public function's global_symbol, calls of functions
that exist with arguments that fit, kernel calls that fit their prim function, binary
operators on one dtype. `tvmlite.parse` refuses a module breaking one, where it is
written, as TVM's parser does by default; `check_well_formed=False` (TVM's keyword,
also a decorator's) keeps it as TVM's own tests print it, and `lower`/`build` refuse
it then. One invalid program per rule; the valid spelling of each parses. What only
builds refuse (a body against its return annotation, negative dims) parses."""

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
    "call of a function the module does not have": (
        function("y: R.Tensor = helper(x)\nreturn y"),
        r"m.tvms:6:19: error: call of unknown function helper",
    ),
    "call_tir of a prim function the module does not have": (
        function(f"y = R.call_tir(kernel, (x,), out_sinfo={T4})\nreturn y"),
        r"m.tvms:6:20: error: R.call_tir of unknown function kernel",
    ),
    "annotated slice with an int32 bound": (
        function(
            'y: R.Tensor((2,), "float32") = R.strided_slice(x, (0,), (0,), (T.FloorDiv(4, 2),))'
            "\nreturn y"
        ).replace(HEAD, HEAD.replace("\n\n", "\nfrom tvm.script import tirx as T\n\n")),
        r"m.tvms:7:36: error: R.strided_slice: end must hold int64 values, one is int32",
    ),
    "annotated arithmetic on two dtypes": (
        function(
            'y = R.astype(x, "float16")\nz: R.Tensor((4,), "float32") = R.add(x, y)\nreturn z'
        ),
        r"m.tvms:7:36: error: R.add: operands must have the same dtype, got float32 and float16",
    ),
    "a declared var nothing binds": (
        function('gv: R.Tensor((4,), "float32")\nreturn gv'),
        r"m.tvms:6:5: error: gv is used but nothing binds it",
    ),
    "call of a function with an argument that does not fit its parameter": (
        HEAD
        + f"""@I.ir_module
class Module:
    @R.function
    def helper(a: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        return a

    @R.function
    def main(x: {T4}) -> R.Tensor((8,), "float32"):
        y = Module.helper(x)
        return y
""",
        r"m.tvms:12:13: error: argument 0 of helper \(a\) must be R.Tensor\(\(8,\), "
        r'dtype="float32"\), got R.Tensor\(\(4,\), dtype="float32"\)',
    ),
    "call_tir whose argument does not fit the kernel": (
        HEAD.replace("\n\n", "\nfrom tvm.script import tir as T\n\n")
        + f"""@I.ir_module
class Module:
    @T.prim_func
    def copy(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i]

    @R.function
    def main(x: {T4}) -> R.Tensor((8,), "float32"):
        y = R.call_tir(Module.copy, (x,), out_sinfo=R.Tensor((8,), "float32"))
        return y
""",
        r"m.tvms:14:13: error: R.call_tir of copy: argument 0 is R.Tensor\(\(4,\), "
        r'dtype="float32"\), but the kernel takes R.Tensor\(\(8,\), dtype="float32"\) as A',
    ),
    "call_tir whose output struct info does not fit the kernel": (
        HEAD.replace("\n\n", "\nfrom tvm.script import tir as T\n\n")
        + """@I.ir_module
class Module:
    @T.prim_func
    def flatten(a: T.handle, b: T.handle):
        m, n = T.int64(), T.int64()
        A = T.match_buffer(a, (m, n), "float32")
        B = T.match_buffer(b, (m * n,), "float32")
        for i in range(m * n):
            B[i] = A[i // n, i % n]

    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((5,), "float32"):
        y = R.call_tir(Module.flatten, (x,), out_sinfo=R.Tensor((5,), "float32"))
        return y
""",
        r'error: R.call_tir of flatten: output 0 is R.Tensor\(\(5,\), dtype="float32"\), '
        r'but the kernel writes R.Tensor\(\(6,\), dtype="float32"\) as B',
    ),
    "in-place output of another shape than its input": (
        HEAD.replace("\n\n", "\nfrom tvm.script import tir as T\n\n")
        + f"""@I.ir_module
class Module:
    @T.prim_func
    def inc(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    @R.function
    def main(x: {T4}) -> R.Tensor((8,), "float32"):
        y = R.call_tir_inplace(Module.inc, (x,), out_sinfo=R.Tensor((8,), "float32"), inplace_indices=[0])
        return y
""",
        r"output 0 is R.Tensor\(\(8,\), dtype=\"float32\"\), but it is written in place into "
        r"argument 0",
    ),
}

# Rules TVM's well-formedness check leaves to builds: parsed by default, refused by `lower`.
BUILD_ONLY = {
    "a body that does not match the return annotation": (
        function("return x").replace(f"-> {T4}", '-> R.Tensor((8,), "float32")'),
        r"m.tvms:6:5: error: the function returns R.Tensor\(\(4,\), dtype=\"float32\"\) but its "
        r"return annotation is R.Tensor\(\(8,\), dtype=\"float32\"\)",
    ),
    "a negative tensor dim": (
        function("return x").replace(f"(x: {T4})", '(x: R.Tensor((-1,), "float32"))'),
        r"m.tvms:5:23: error: a shape dimension must not be negative, got -1",
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
def test_each_rule_is_refused_at_parse_and_kept_without_the_check(rule: str) -> None:
    text, message = INVALID[rule]
    with pytest.raises(VerifyError, match=message):
        tvmlite.parse(text, filename="m.tvms")
    parsed = tvmlite.parse(text, filename="m.tvms", check_well_formed=False)
    printed = parsed.script()
    lenient = tvmlite.parse(printed, check_well_formed=False)
    assert lenient.script() == printed and tvmlite.structural_equal(lenient, parsed)
    with pytest.raises(VerifyError, match=message):
        tvmlite.lower(parsed)


@pytest.mark.parametrize("rule", sorted(INVALID))
def test_the_decorator_keyword_turns_the_check_off(rule: str) -> None:
    """TVM's decorator keyword, on the module or on the function breaking the rule."""
    text = INVALID[rule][0]
    if "@I.ir_module" in text:
        off = text.replace("@I.ir_module", "@I.ir_module(check_well_formed=False)")
    else:
        off = text.replace("@R.function(pure=False)", "@R.function").replace(
            "@R.function", "@R.function(check_well_formed=False)"
        )
        if "pure=False" in text:
            off = off.replace("check_well_formed=False", "pure=False, check_well_formed=False")
    assert tvmlite.structural_equal(
        tvmlite.parse(off), tvmlite.parse(text, check_well_formed=False)
    )


@pytest.mark.parametrize("rule", sorted(BUILD_ONLY))
def test_build_rules_parse_and_are_refused_at_lower(rule: str) -> None:
    text, message = BUILD_ONLY[rule]
    parsed = tvmlite.parse(text, filename="m.tvms")
    with pytest.raises(VerifyError, match=message):
        tvmlite.lower(parsed)


def test_check_well_formed_takes_a_bool() -> None:
    with pytest.raises(tvmlite.ParseError, match="check_well_formed must be True or False"):
        tvmlite.parse(VALID["force_pure function"], check_well_formed="no")  # type: ignore[arg-type]


def test_a_private_function_with_a_global_symbol_is_refused_at_parse() -> None:
    """No IR holds it (a private function is one without a global_symbol)."""
    text = function('R.func_attr({"global_symbol": "main"})\nreturn x', "@R.function(private=True)")
    with pytest.raises(tvmlite.ParseError, match="m.tvms:5:1: error: private function main has"):
        tvmlite.parse(text, filename="m.tvms")


def test_arithmetic_on_two_dtypes_needs_an_annotation() -> None:
    """TVM's parser infers no dtype for it: unannotated, it is a parse error."""
    text = function('y = R.astype(x, "float16")\nz = R.add(x, y)\nreturn z')
    message = "m.tvms:7:9: error: R.add: operands must have the same dtype, got float32 and float16"
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
