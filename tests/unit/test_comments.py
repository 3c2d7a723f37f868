"""Comments: where each one is kept (grammar/comments.py, the parsers) and where it
is printed back (printer/comments.py and the printers), and `format_text`'s
refusal to drop one."""

from __future__ import annotations

import dataclasses

import pytest

import tvmlite
from tvmlite.diagnostics import ParseError, TVMLiteError
from tvmlite.dsl.comments import Comments, Remark
from tvmlite.grammar import comment_texts, parse_syntax
from tvmlite.printer import format_text, script
from tvmlite.printer.format import PRINTERS_OWN

TIR = """\
# License: the first lines of the file
# from tvm.script import ir as I
# from tvm.script import tir as T

# above the class
@I.ir_module  # on the decorator
# between the decorator and the class
class Module:  # on the class line
    # above the function
    @T.prim_func
    def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):  # on the def line
        # above the attributes
        T.func_attr({"tir.noalias": T.bool(True)})  # on the attributes
        for i in range(4):  # on the loop
            # in the loop
            A[i] = T.float32(0.0)  # on a store
            # at the end of the loop body
        # above the if
        if B[1] < T.float32(2.0):
            B[0] = T.float32(1.0)
        # above the else
        else:  # on the else
            B[0] = T.float32(2.0)
        # at the end of the function
    # at the end of the class

# at the end of the file
"""

RELAX = """\
# Copyright: above the imports
from tvm.script import ir as I  # on an import
from tvm.script import relax as R

# the model
@I.ir_module
class Module:
    I.module_attrs({"a": 1})  # on the module attributes
    # above an extern
    ext = R.ExternFunc("ext_sym")  # on the extern
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), c: R.Tensor((), dtype="bool")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"num_input": 1})  # on the function attributes
        # above the dataflow block
        with R.dataflow():  # on the dataflow line
            lv: R.Tensor((4,), dtype="float32") = R.add(x, x)  # on a binding
            gv: R.Tensor((4,), dtype="float32") = R.multiply(lv, lv)
            # above the output
            R.output(gv)  # on the output
            # after the output
        if c:  # on the if
            # in the branch
            r: R.Tensor((4,), dtype="float32") = R.add(gv, gv)  # on a branch result
        # above the else
        else:
            r: R.Tensor((4,), dtype="float32") = gv
            # after the else branch
        return r  # on the return
        # after the return
"""

BLOCKS = """\
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def mm(var_A: T.handle, var_B: T.handle, C: T.Buffer((16, 16), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # above a declaration
        n = T.int32()
        A = T.match_buffer(var_A, (16, n), "float32")  # on a match_buffer
        B = T.match_buffer(var_B, (n, 16), "float32")
        # above the root block line
        # with T.block("root"):
        # above an allocation
        D = T.alloc_buffer((16, 16))  # on an allocation
        for i in range(16):
            # above an inner loop: it stays on its own line
            for j, k in T.grid(16, n):  # on the grid
                with T.block("C"):  # on the block
                    # above the axes
                    vi, vj = T.axis.remap("SS", [i, j])  # on the remap
                    vk = T.axis.reduce(n, k)  # on an axis: not folded into the remap
                    T.reads(A[vi, vk], B[vk, vj])  # on the reads
                    # above the writes
                    T.writes(C[vi, vj])
                    with T.init():  # on the init
                        # in the init
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
                    # at the end of the block
"""


@pytest.mark.parametrize("text", [TIR, RELAX, BLOCKS], ids=["tir", "relax", "blocks"])
def test_canonical_text_with_comments_is_a_fixed_point(text: str) -> None:
    assert script(tvmlite.parse(text)) == text
    assert format_text(text) == text


def test_comments_do_not_change_the_program() -> None:
    bare = "\n".join(
        line.split("  #")[0] for line in TIR.splitlines() if not line.strip()[:1] == "#"
    )
    assert "#" not in bare
    assert tvmlite.structural_equal(tvmlite.parse(TIR), tvmlite.parse(bare))


def test_statements_take_their_comments() -> None:
    tree = parse_syntax("x = 1  # one\n# two\ny = 2; z = 3  # three\nif x:\n    pass\n    # four\n")
    x, y, z, branch = tree.body
    assert x.comments.roles == (("", Remark((), "# one")),)
    assert y.comments.roles == (("", Remark(("# two",))),)
    assert z.comments.roles == (("", Remark((), "# three")),)  # a line's ends its last
    assert branch.body[0].comments.roles == (("after", Remark(("# four",))),)
    assert [note.text for note in tree.notes] == ["# one", "# two", "# three", "# four"]


def test_moved_comments_keep_their_order() -> None:
    """A line the printer writes only where it needs it (here `cls = Module`, which
    nothing uses) leaves its comments where such lines go, in order."""
    text = RELAX.replace(
        "        R.func_attr", "        # above cls\n        cls = Module\n        R.func_attr"
    )
    out = format_text(text)
    assert out == RELAX.replace(
        "        # above the dataflow block",
        "        # above cls\n        # above the dataflow block",
    )


def test_a_comment_inside_an_expression_is_refused_with_its_place() -> None:
    text = TIR.replace("B[0] = T.float32(1.0)", "B[0] = (T.float32(1.0)  # inside\n    )")
    with pytest.raises(ParseError) as err:
        format_text(text, filename="m.tvms")
    line = text.splitlines().index("            B[0] = (T.float32(1.0)  # inside") + 1
    assert str(err.value).startswith(f"m.tvms:{line}:37: error: cannot keep this comment")
    assert "inside an expression" in str(err.value)
    assert "#" not in script(tvmlite.parse(text)).split("B[0] = T.float32(1.0)")[1].split("\n")[0]


def test_header_comment_lines_are_the_printers() -> None:
    """TVM's header lines are regenerated for the dialect printed, never doubled;
    comments among them go above the header."""
    text = TIR.replace(
        "# from tvm.script import tir as T", "# note\n# from tvm.script import tir as T"
    )
    out = format_text(text, dialect="tvm-0.27")
    assert out.startswith(
        "# License: the first lines of the file\n# note\n# from tvm.script import ir as I\n"
        "# from tvm.script import tirx as T\n# from tvm.tirx.layout import Axis\n\n"
        "# above the class\n"
    )
    assert format_text(out) == out


CLOSURE = """\
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        # above the closure
        # from tvm.script import relax as R
        \n\
        @R.function
        # after its decorator
        def twice(a: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
            b: R.Tensor((2,), dtype="float32") = R.add(a, a)  # in the closure
            return b
            # after the closure's return
        \n\
        # above the call
        c: R.Tensor((2,), dtype="float32") = twice(x)
        return c
"""


def test_a_nested_function_keeps_its_comments_under_one_header() -> None:
    """TVM prints its header again above a nested function: the parser takes that
    copy off (the printer writes it), and keeps the user's comments around it."""
    assert script(tvmlite.parse(CLOSURE)) == CLOSURE
    assert format_text(CLOSURE) == CLOSURE
    mark = "        # above the closure\n"
    copied = CLOSURE.replace(mark, "        # from tvm.script import relax as R\n" + mark)
    assert format_text(copied) == copied  # a copy above the user's comment is the user's


def test_imports_are_printed_as_imports() -> None:
    out = format_text(RELAX)
    assert out.startswith(
        "# Copyright: above the imports\nfrom tvm.script import ir as I  # on an import\n"
        "from tvm.script import relax as R\n\n"
    )
    text = (
        "from tvm.script import tir as T\n"
        + BLOCKS.split("class Module:\n")[1]
        .replace("\n    ", "\n")
        .replace("@T.prim_func\ndef mm", "@T.prim_func\ndef mm", 1)
        .lstrip()
    )
    modern = format_text(text, dialect="tvm-0.27")
    assert modern.startswith("from tvm.script import tirx as T\nfrom tvm.tirx.layout import Axis\n")
    assert format_text(modern) == modern


def test_formatting_converts_dialects_with_every_comment() -> None:
    kept = [c for c in comment_texts(BLOCKS) if c not in PRINTERS_OWN]
    modern = format_text(BLOCKS, dialect="tvm-0.27")
    assert [c for c in comment_texts(modern) if c not in PRINTERS_OWN] == kept
    back = format_text(modern, dialect="classic")
    assert tvmlite.structural_equal(tvmlite.parse(back), tvmlite.parse(BLOCKS))


def test_a_lone_027_function_keeps_its_dialect() -> None:
    """A lone function records no dialect: formatting reads it off the text (a
    0.27 flat binding printed as classic would become a scoped let)."""
    text = (
        "# from tvm.script import tirx as T\n# from tvm.tirx.layout import Axis\n\n"
        '@T.prim_func\ndef main(A: T.Buffer((2,), "int8")):\n'
        "    i: T.int8 = T.int8(-128)  # a flat binding\n    A[0] = i\n"
    )
    assert format_text(text) == text


@pytest.mark.parametrize("text", ["no hash", "# two\nlines", "# carriage\rreturn", ""])
def test_a_comment_built_in_code_that_is_no_comment_line_is_refused(text: str) -> None:
    """IR built in code may hold any string as a comment: one that would end its
    line (or is no comment) is refused rather than printed into the code."""
    func = tvmlite.parse(TIR).functions["f"]
    for comments in (Comments((("", Remark((text,))),)), Comments((("after", Remark((text,))),))):
        loop = dataclasses.replace(func.body.seq[0], comments=comments)
        body = dataclasses.replace(func.body, seq=(loop, *func.body.seq[1:]))
        bad = dataclasses.replace(func, body=body)
        with pytest.raises(TVMLiteError, match="cannot print the comment"):
            script(bad)


def test_a_docstring_is_refused_rather_than_dropped() -> None:
    text = TIR.replace("        # above the attributes\n", '        """What f does."""\n')
    assert '"""' not in script(tvmlite.parse(text))  # the parsers accept and drop them
    with pytest.raises(ParseError) as err:
        format_text(text, filename="m.tvms")
    line = text.splitlines().index('        """What f does."""') + 1
    assert str(err.value).startswith(f"m.tvms:{line}:9: error: cannot keep this docstring")


MIXED = """\
# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    # above the first function's decorator
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        for i in range(4):
            B[i] = A[i] + T.float32(1.0)
        # at the end of the first function
    # between the functions, at the class's indentation

    # between the functions, after a blank line
    @R.function  # on the second decorator
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        # above a call_tir
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))  # on it
        return y
# at the end of the file, at column one
"""


def test_comments_between_functions_keep_their_order_and_lose_the_blank_lines() -> None:
    """Between a prim function and a Relax function: comments at the end of the
    first, at the class's indentation, after a blank line, on a decorator. The
    printer writes its own blank lines (one between functions, one before the end
    of the file)."""
    out = format_text(MIXED)
    assert out == (
        MIXED.replace(
            "first function\n    # between the functions, at the class's indentation\n\n",
            "first function\n\n    # between the functions, at the class's indentation\n",
        ).replace("        return y\n#", "        return y\n\n#")
    )
    assert format_text(out) == out
