"""Module level of the parser: what a text may hold, dialect detection, two-pass
name resolution (forward references, `cls.f`, `Module.f`) and module errors."""

from __future__ import annotations

import textwrap

import pytest

from tvmlite import IRModule, ParseError, parse, parse_file, structural_equal
from tvmlite.dsl import relax, tir
from tvmlite.dsl.dialect import detect_dialect
from tvmlite.dsl.module import CLASSIC, TVM027, RawCall
from tvmlite.grammar import tokenize


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def error_at(text: str) -> tuple[str, int, int]:
    with pytest.raises(ParseError) as info:
        parse(src(text), "t.tvms")
    err = info.value
    assert err.span is not None, str(err)
    assert "t.tvms:" in str(err)
    return err.message, err.span.line, err.span.column


PRIM = """
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] + T.float32(1)
"""

MIXED = """
# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] + T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(gv)
        return gv
"""


# ---------------------------------------------------------------- shapes of a text


def test_lone_prim_func_returns_the_function():
    assert isinstance(parse(src(PRIM)), tir.PrimFunc)


def test_lone_relax_function_returns_the_function():
    func = parse(
        src("""
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            return x
        """)
    )
    assert isinstance(func, relax.Function)
    assert func.attr("global_symbol") == "main"


def test_mixed_module():
    mod = parse(src(MIXED))
    assert isinstance(mod, IRModule)
    assert list(mod.functions) == ["add_one", "main"]
    assert isinstance(mod["add_one"], tir.PrimFunc)
    main = mod["main"]
    assert isinstance(main, relax.Function)
    call = main.body.blocks[0].bindings[0].value
    assert call.op == relax.Op("relax.call_tir")
    assert call.args[0] == relax.GlobalVar("add_one")
    assert isinstance(call.args[1], relax.Tuple)
    assert call.args[1].fields == (main.params[0],)
    assert call.sinfo_args[0].dtype == "float32"
    assert mod.dialect == CLASSIC


def test_forward_reference_and_module_name_spellings():
    mod = parse(
        src("""
        @I.ir_module
        class Mine:
            @R.function
            def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
                y = Mine.helper(x)
                gv = R.call_tir(Mine.add_one, (y,), out_sinfo=R.Tensor((4,), "float32"))
                return gv

            @R.function(private=True)
            def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
                return x
        """)
        + textwrap.indent(src(PRIM), "    ")
    )
    main = mod["main"]
    first = main.body.blocks[0].bindings[0]
    assert first.value.op == relax.GlobalVar("helper")
    assert first.var.struct_info == relax.TensorStructInfo((tir.IntImm("int64", 4),), "float32", 1)
    assert mod["helper"].attr("global_symbol") is None


def test_call_result_substitutes_symbolic_dims():
    mod = parse(
        src("""
        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((8, 3), "float32")):
                cls = Module
                y = cls.ident(x)
                return y

            @R.function
            def ident(x: R.Tensor(("n", 3), "float32")) -> R.Tensor(("n", 3), "float32"):
                n = T.int64()
                return x
        """)
    )
    y = mod["main"].body.blocks[0].bindings[0].var
    assert [d.value for d in y.struct_info.shape] == [8, 3]


def test_extern_func_attrs_and_global_infos():
    mod = parse(
        src("""
        @I.ir_module
        class Module:
            I.module_attrs({"system_lib_prefix": "hi", "n": 3})
            I.module_global_infos({"vdevice": [I.vdevice({"kind": "llvm"}, 0, "global")]})
            ext = R.ExternFunc("my_ext")

            @R.function
            def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
                y = R.call_dps_packed(Module.ext, (x,), out_sinfo=R.Tensor((4,), "float32"))
                return y
        """)
    )
    assert mod.attrs == {"system_lib_prefix": "hi", "n": 3}
    assert mod.global_infos["vdevice"] == [RawCall("I.vdevice", ({"kind": "llvm"}, 0, "global"))]
    assert mod["ext"] == relax.ExternFunc("my_ext")
    # printed as written (it used to be an internal KeyError in the printer)
    line = 'I.module_global_infos({"vdevice": [I.vdevice({"kind": "llvm"}, 0, "global")]})'
    assert line in mod.script()
    assert structural_equal(parse(mod.script()), mod)


def test_decorator_variants_and_future_import():
    text = "from __future__ import annotations\n" + src(MIXED).replace(
        "@I.ir_module", "@I.ir_module(check_well_formed=False)"
    )
    assert isinstance(parse(text), IRModule)
    assert isinstance(parse(src(MIXED).replace("@I.ir_module", "@tvm.script.ir_module")), IRModule)


# ---------------------------------------------------------------- dialects


def dialect(text: str) -> str:
    return detect_dialect(text, tokenize(text))


def test_dialect_from_header_comments_and_imports():
    assert dialect("# from tvm.script import tirx as T\n") == TVM027
    assert dialect("# from typing import TypeVar\n") == TVM027
    assert dialect("# from tvm.script import tir as T\nout_ty=\n") == CLASSIC
    assert (
        dialect("from __future__ import annotations\nfrom  tvm.script import tirx as T\n") == TVM027
    )
    assert dialect("from tvm.script import tir as T  # tirx\nx = f(out_ty=1)\n") == CLASSIC
    # A header comment after the first statement is an ordinary comment.
    assert dialect("x = 1\n# from tvm.script import tirx as T\n") == CLASSIC


def test_dialect_from_markers():
    assert dialect("x = R.call_tir(f, (a,), out_ty=R.Tensor)") == TVM027
    assert dialect("x = R.call_tir(f, (a,),\n    out_ty = R.Tensor)") == TVM027
    assert dialect('with T.sblock("b"):') == TVM027
    assert dialect("A = T.sblock_alloc_buffer((4,))") == TVM027
    assert dialect('T.func_attr({"tirx.noalias": True})') == TVM027
    assert dialect('n = TypeVar("n")') == TVM027
    assert dialect("x: T.let[T.int32] = 1") == TVM027
    assert dialect("f(s_tir=True)") == TVM027
    assert dialect('with T.block("b"):') == CLASSIC
    assert dialect("") == CLASSIC


@pytest.mark.parametrize(
    "text",
    [
        'with T.block("b"):  # was T.sblock("b") in 0.27\n    pass\n',
        '# T.sblock, out_ty=, "tirx.noalias": and TypeVar( are 0.27 spellings\nx = 1\n',
        'x = "T.sblock"\n',
        "x = 'out_ty=R.Tensor'\n",
        'T.func_attr({"tir.noalias": True, "note": "tirx.noalias"})\n',
        'doc = """with T.sblock("b"):\n    s_tir=True\n"""\n',
        "out_ty = 1\nx = TypeVar\n",  # an assignment, not a keyword argument; no call
    ],
)
def test_spellings_in_comments_and_strings_do_not_count(text: str) -> None:
    assert dialect(text) == CLASSIC


def test_a_comment_does_not_switch_a_parsed_function():
    text = src(MIXED).replace("# from tvm.script import tir as T\n", "")
    commented = text.replace("\n", "  # T.sblock s_tir=True\n", 3)
    assert "T.sblock" in commented and parse(commented).dialect == CLASSIC


def test_dialect_is_recorded_on_the_module():
    text = src(MIXED).replace("# from tvm.script import tir as T\n", "")
    assert parse(text).dialect == CLASSIC
    assert parse(text.replace("out_sinfo=", "out_ty=")).dialect == TVM027


def test_typevar_gives_each_function_its_own_var():
    mod = parse(
        src("""
        n = TypeVar("n")
        @I.ir_module
        class Module:
            @R.function
            def f(x: R.Tensor((n,), "float32")) -> R.Tensor((n,), "float32"):
                return x

            @R.function
            def g(x: R.Tensor((n, 2), "float32")) -> R.Tensor((n, 2), "float32"):
                return x
        """)
    )
    fn = mod["f"].params[0].struct_info.shape[0]
    gn = mod["g"].params[0].struct_info.shape[0]
    assert isinstance(fn, tir.Var) and isinstance(gn, tir.Var)
    assert fn.name == gn.name == "n" and fn.dtype == "int64"
    assert fn is not gn
    assert mod["f"].ret_struct_info.shape[0] is fn
    assert mod.dialect == TVM027


# ---------------------------------------------------------------- errors


def test_namespace_imports_are_accepted_and_name_the_dialect():
    body = src(MIXED).split("\n\n", 1)[1]  # drop the header comments
    for name, dialect in (("tir", CLASSIC), ("tirx", TVM027)):
        text = f"from tvm.script import ir as I\nfrom tvm.script import {name} as T\n" + body
        assert parse(text).dialect == dialect


def test_other_imports_are_rejected():
    msg, line, col = error_at("import os\n" + src(PRIM))
    assert "only the TVMScript namespace imports" in msg and (line, col) == (1, 1)
    msg, line, col = error_at("from tvm.script import tir as X\n" + src(PRIM))
    assert "only the TVMScript namespace imports" in msg and (line, col) == (1, 1)


def test_metadata_table_is_not_supported():
    msg, line, _ = error_at('metadata = tvm.ir.load_json("{}")\n' + src(PRIM))
    assert "metadata tables" in msg and line == 1


def test_metadata_reference():
    msg, line, col = error_at("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.add(x, metadata["relax.expr.Constant"][0])
            return y
        """)
    assert msg.startswith('the value of metadata["relax.expr.Constant"][0] is not in the text')
    assert "constants=" in msg and "docs/constants.md" in msg
    assert (line, col) == (3, 18)


def test_duplicate_function():
    msg, line, col = error_at("""
        @I.ir_module
        class Module:
            @R.function
            def f(x: R.Tensor((4,), "float32")):
                return x

            @R.function
            def f(x: R.Tensor((4,), "float32")):
                return x
        """)
    assert msg == "duplicate definition of f (first at line 4)"
    assert (line, col) == (8, 5)


def test_unknown_module_member():
    msg, line, col = error_at("""
        @I.ir_module
        class Module:
            x = 3
        """)
    assert "R.ExternFunc" in msg and (line, col) == (3, 5)


def test_unsupported_decorator_is_named():
    msg, line, col = error_at("""
        @I.ir_module
        class Module:
            @I.pyfunc
            def f(self, x):
                return x
        """)
    assert msg == "I.pyfunc is not supported" and (line, col) == (3, 6)


def test_module_level_statement():
    msg, line, col = error_at("x = 1\n" + src(PRIM))
    assert "TypeVar" in msg and (line, col) == (1, 1)


def test_two_top_level_items():
    msg, _, _ = error_at(PRIM + "\n" + PRIM)
    assert "one @I.ir_module class or one function" in msg


def test_empty_text():
    with pytest.raises(ParseError, match="no @I.ir_module class"):
        parse("", "t.tvms")


def test_parse_file_errors(tmp_path):
    bad = tmp_path / "bad.tvms"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ParseError, match="not UTF-8"):
        parse_file(bad)
    # A file that cannot be opened raises what `open` raises, as Python code expects.
    with pytest.raises(FileNotFoundError):
        parse_file(tmp_path / "missing.tvms")
    with pytest.raises(IsADirectoryError):
        parse_file(tmp_path)
    good = tmp_path / "good.tvms"
    good.write_text(src(PRIM), encoding="utf-8")
    assert isinstance(parse_file(good), tir.PrimFunc)


def test_non_text_input():
    with pytest.raises(ParseError):
        parse(b"abc")  # type: ignore[arg-type]


def test_deep_nesting_is_a_parse_error():
    text = src(PRIM) + "x = " + "(" * 600 + "1" + ")" * 600 + "\n"
    with pytest.raises(ParseError):
        parse(text, "t.tvms")
