"""script() and show() take TVM's printer options: those tvmlite implements
change the text as TVM's do, TVM's others are refused unless at their default,
and unknown keywords are a TypeError. repr() is one line; the submodules are
attributes of `tvmlite` without an import."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

import tvmlite
from tvmlite.printer import script, show

ROOT = Path(__file__).resolve().parents[2]
MLP = (ROOT / "examples" / "mlp.tvms").read_text()


@pytest.fixture
def mod() -> tvmlite.IRModule:
    return tvmlite.parse(MLP)


def test_indent_spaces_and_line_numbers(mod) -> None:
    text = mod.script()
    two = mod.script(indent_spaces=2)
    assert "\n  @T.prim_func(private=True)\n  def bias_relu(" in two
    assert '\n      with T.block("bias_relu"):\n' in two  # three levels of two
    assert tvmlite.structural_equal(tvmlite.parse(two), mod)
    numbered = mod.script(print_line_numbers=True).splitlines()
    width = len(str(len(numbered)))
    assert numbered[0] == f"{1:>{width}} {text.splitlines()[0]}"
    assert len(numbered) == len(text.splitlines())


def test_syntax_sugar_and_show_all_ty_as_tvm_prints_them(mod) -> None:
    plain = mod.script(syntax_sugar=False)
    assert "T.grid" not in plain and "T.axis.remap" not in plain
    assert "for i in range(n):\n            for j in range(T.int64(64)):" in plain
    assert "vi = T.axis.spatial(n, i)\n" in plain
    assert tvmlite.structural_equal(tvmlite.parse(plain), mod)
    bare = mod.script(show_all_ty=False)
    assert "            h = R.matmul(x, w1, out_dtype=None)\n" in bare
    assert 'h: R.Tensor((n, 64), dtype="float32") = R.matmul' in mod.script()


def test_name_renames_the_module_or_function(mod) -> None:
    named = mod.script(name="Mlp")
    assert "class Mlp:" in named and "cls = Mlp" in named and "class Module" not in named
    assert "def relu_bias(" in mod["bias_relu"].script(name="relu_bias")
    with pytest.raises(tvmlite.TVMLiteError, match="identifier"):
        mod.script(name="not a name")


def test_unknown_and_unsupported_options(mod) -> None:
    with pytest.raises(TypeError, match="'line_number'"):
        mod.script(line_number=True)
    with pytest.raises(TypeError, match="show\\(\\) got an unexpected keyword argument 'colour'"):
        show(mod, colour="never", file=io.StringIO())
    assert script(mod, ir_prefix="I", show_meta=False, verbose_expr=False) == mod.script()
    with pytest.raises(tvmlite.TVMLiteError, match="show_object_address=True is not supported"):
        mod.script(show_object_address=True)
    with pytest.raises(tvmlite.TVMLiteError, match="indent_spaces"):
        mod.script(indent_spaces=-1)
    with pytest.raises(tvmlite.TVMLiteError, match="syntax_sugar must be True or False"):
        mod.script(syntax_sugar="no")


def test_show_passes_script_options_and_black_format(mod) -> None:
    out = io.StringIO()
    show(mod, file=out, indent_spaces=2, syntax_sugar=False)
    assert out.getvalue() == mod.script(indent_spaces=2, syntax_sugar=False)
    try:
        import black  # noqa: F401
    except ImportError:
        with pytest.raises(tvmlite.TVMLiteError, match="needs the 'black' package"):
            show(mod, black_format=True, file=io.StringIO())
    else:
        out = io.StringIO()
        show(mod, black_format=True, file=out)
        assert tvmlite.structural_equal(tvmlite.parse(out.getvalue()), mod)


def test_repr_is_one_line(mod) -> None:
    assert repr(mod) == "<IRModule: bias_relu (tir.PrimFunc), main (relax.Function)>"
    assert repr(mod["main"]) == "<relax.Function main(x, w1, b1, w2)>"
    assert repr(mod["bias_relu"]).startswith("<tir.PrimFunc(")
    assert str(mod) == mod.script()


def test_submodules_need_no_import() -> None:
    code = (
        "import sys, tvmlite\n"
        "assert 'tvmlite.lowering' not in sys.modules\n"
        "with tvmlite.transform.PassContext(opt_level=3):\n"
        "    pass\n"
        "assert callable(tvmlite.lowering.op_info)\n"
        "assert tvmlite.testing.__name__ == 'tvmlite.testing'\n"
        "assert 'hypothesis' not in sys.modules\n"
        "assert callable(tvmlite.testing.strategies.prim_funcs)\n"
        "assert callable(tvmlite.testing.reference.run_prim_func)\n"
        "assert 'strategies' in dir(tvmlite.testing)\n"
        "assert 'transform' in dir(tvmlite)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_show_wraps_long_signatures_into_text_that_parses_back(mod) -> None:
    out = io.StringIO()
    show(mod, color="never", file=out, width=40)
    text = out.getvalue()
    assert '    def main(\n        x: R.Tensor(("n", 784), dtype="float32"),\n' in text
    assert all(len(line) <= 40 or "def " not in line for line in text.splitlines())
    assert tvmlite.structural_equal(tvmlite.parse(text), mod)
    numbered = io.StringIO()
    show(mod, color="never", file=numbered, width=40, print_line_numbers=True)
    assert numbered.getvalue().splitlines()[7].lstrip().startswith("8 ")
    with pytest.raises(tvmlite.TVMLiteError, match="width must be a positive int"):
        show(mod, width=0)


def test_wrapping_reads_strings_and_brackets_as_python_does() -> None:
    from tvmlite.printer.wrap import wrap_signatures

    line = '    def f(a: T.Buffer((2, 3), "x,(y"), b: R.Tensor(("n", 4)), c: T.int32) -> R.Tuple(a, b):'
    assert wrap_signatures(line, 20).split("\n") == [
        "    def f(",
        '        a: T.Buffer((2, 3), "x,(y"),',
        '        b: R.Tensor(("n", 4)),',
        "        c: T.int32,",
        "    ) -> R.Tuple(a, b):",
    ]
    assert wrap_signatures(line, len(line)) == line  # short enough: as printed
    assert wrap_signatures("    def f() -> R.Tensor((4,), 'float32'):", 10).endswith(":")
