"""The `.tvms` Pygments lexer and `show()`: the lexer knows every keyword of the
grammar and never fails on valid text; colour never changes the text."""

from __future__ import annotations

import io
import re
import sys
import types
from pathlib import Path

import pytest
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Error, Keyword, Name

import tvmlite
from tvmlite.printer import highlight, script, show
from tvmlite.printer.lexer import TvmsLexer

ROOT = Path(__file__).resolve().parents[2]
MLP = (ROOT / "examples" / "mlp.tvms").read_text()

MATMUL_027 = """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def mm(A: T.Buffer((T.int64(4), T.int64(4)), "float16"), C: T.Buffer((T.int64(4),), "float16")):
        T.func_attr({"tirx.noalias": True})
        for i, k in T.grid(T.int64(4), T.int64(4)):
            with T.sblock("mm"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(C[vi])
                with T.init():
                    C[vi] = T.float16(0.0)
                C[vi] = C[vi] + A[vi, vk] * T.float16(-0.5e-3)
"""

LOOPS = """@T.prim_func
def f(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (16,), "int8", strides=(2,))
    for i in T.parallel(1, 9):
        if i % 2 == 0 and not i >= n:
            A[i] = T.int8(-128)
        else:
            x: T.int32 = T.Select(i < 4, i // 2, 0x1F) << 1
            A[i] = T.Cast("int8", x)
    while n != 0:
        A[0] = T.if_then_else(n > 1, A[1], T.int8(0))
    assert n <= 16, "n out of range"
    T.evaluate(T.call_extern("int32", 'f\\n', A.data, 1.5e3, True))
"""

RELAX = """@R.function(pure=False)
def main(x: R.Tensor(("n", 4), dtype="float32"), c: R.Prim("bool")) -> R.Tuple:
    n = T.int64()
    y: R.Tensor((n, 4), dtype="float32") = R.nn.softmax(x, axis=-1)
    if c:
        z = y
    else:
        z = R.add(y, R.const(1.0, "float32"))
    t = (y, z)
    w = t[0]
    R.print(w, format=R.str("{}"))
    return R.tuple()
"""


def _tokens(text: str) -> list[tuple[object, str]]:
    return list(TvmsLexer().get_tokens(text))


def _grammar_keywords() -> set[str]:
    """Keyword terminals of grammar/tvms.lark (`IF: "if"`) and the identifier
    literals its rules write inline (`"as"`)."""
    text = (ROOT / "grammar" / "tvms.lark").read_text()
    named = re.findall(r'^[A-Z_]+(?:\.\d+)?\s*:\s*"([A-Za-z_]\w*)"\s*$', text, flags=re.M)
    rules = re.sub(r"^[A-Z_]+(?:\.\d+)?\s*:.*$", "", text, flags=re.M)  # rules only
    rules = re.sub(r"//[^\n]*", "", rules)
    inline = re.findall(r'"([a-z_]\w*)"', rules)
    return set(named) | set(inline)


def test_grammar_keywords_are_read():
    keywords = _grammar_keywords()
    assert {"def", "class", "if", "lambda", "None", "as", "import"} <= keywords


@pytest.mark.parametrize("word", sorted(_grammar_keywords()))
def test_every_grammar_keyword_lexes_as_keyword(word: str):
    tokens = [(t, v) for t, v in _tokens(f"{word}\n") if v.strip()]
    assert tokens == [(tokens[0][0], word)]
    assert tokens[0][0] in Keyword


@pytest.mark.parametrize(
    "text", [MLP, MATMUL_027, LOOPS, RELAX], ids=["mlp", "027", "loops", "relax"]
)
def test_no_error_tokens_on_valid_text(text: str):
    assert [v for t, v in _tokens(text) if t in Error] == []
    assert "".join(v for _, v in _tokens(text)) == text


def test_tokens_tell_namespaces_members_dtypes_and_decorators():
    tokens = [(t, v) for t, v in _tokens(MATMUL_027) if v.strip()]
    assert (Name.Decorator, "I.ir_module") in tokens
    assert (Name.Namespace, "T") in tokens
    assert (Name.Builtin, "grid") in tokens
    assert (Name.Namespace, "axis") in tokens  # T.axis.remap: a nested namespace
    assert (Keyword.Type, "float16") in tokens  # T.float16(...)
    assert (Keyword.Type, '"float16"') in tokens  # dtype string
    assert (Name.Function, "mm") in tokens


def test_lexer_is_found_by_name_and_filename():
    assert isinstance(get_lexer_by_name("tvms"), TvmsLexer)
    assert isinstance(get_lexer_by_name("tvmscript"), TvmsLexer)
    assert isinstance(get_lexer_for_filename("model.tvms"), TvmsLexer)


# ---------------------------------------------------------------- show()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def mod() -> tvmlite.IRModule:
    return tvmlite.parse(MLP)


@pytest.mark.parametrize("style", ["ansi", "light", "dark", "monokai"])
@pytest.mark.parametrize("truecolor", [False, True])
def test_colour_does_not_change_the_text(mod, monkeypatch, style, truecolor):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLORTERM", "truecolor" if truecolor else "")
    out = _Terminal()
    show(mod, style, file=out)
    assert "\x1b[" in out.getvalue()
    assert highlight.strip_ansi(out.getvalue()) == script(mod)
    if truecolor and style != "ansi":
        assert "\x1b[38;2;" in out.getvalue()


def test_plain_when_not_a_terminal_or_no_color(mod, monkeypatch):
    out = io.StringIO()
    show(mod, file=out)
    assert out.getvalue() == script(mod)
    monkeypatch.setenv("NO_COLOR", "1")
    term = _Terminal()
    show(mod, file=term)
    assert term.getvalue() == script(mod)
    forced = io.StringIO()
    show(mod, color="always", file=forced)
    assert highlight.strip_ansi(forced.getvalue()) == script(mod) != forced.getvalue()


def test_line_numbers_and_dialect(mod):
    out = io.StringIO()
    show(mod, dialect="tvm-0.27", print_line_numbers=True, file=out)
    text = script(mod, "tvm-0.27")
    assert out.getvalue() == highlight.number_lines(text)
    coloured = io.StringIO()
    show(mod, print_line_numbers=True, color="always", file=coloured)
    assert highlight.strip_ansi(coloured.getvalue()) == highlight.number_lines(script(mod))


def test_functions_show_too(mod):
    out = io.StringIO()
    mod["main"].show(file=out, color="never", show_meta=False)
    assert out.getvalue() == script(mod["main"])


def test_bad_options_are_errors(mod):
    with pytest.raises(tvmlite.TVMLiteError):
        show(mod, color="sometimes")
    with pytest.raises(tvmlite.TVMLiteError):
        show(mod, "no-such-style", file=io.StringIO())


def test_notebook_gets_html(mod, monkeypatch):
    """In a kernel, show() hands HTML to IPython's display (a stand-in here: IPython
    is never a dependency, so the test must not need it installed)."""
    shown: list[object] = []
    display_module = types.ModuleType("IPython.display")

    class HTML:
        def __init__(self, data: str) -> None:
            self.data = data

    display_module.HTML = HTML
    display_module.display = shown.append
    ipython = types.ModuleType("IPython")
    ipython.display = display_module
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display_module)
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    show(mod)
    assert len(shown) == 1 and "<span" in shown[0].data
    assert 'style="' in shown[0].data  # inline styles, no stylesheet needed


def test_repr_html_and_pretty(mod):
    html = mod._repr_html_()
    assert html.startswith("<div") and "color:" in html
    assert mod["bias_relu"]._repr_html_().startswith("<div")

    class Printer:
        def __init__(self) -> None:
            self.parts: list[str] = []

        def text(self, value: str) -> None:
            self.parts.append(value)

    printer = Printer()
    mod._repr_pretty_(printer, False)
    assert printer.parts == [script(mod)]
