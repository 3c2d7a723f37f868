"""The `.tvms` grammar: node shapes, Python's precedence, spans, errors, depth and garbage.

Python's own `ast` module is the oracle for precedence: an expression the grammar
accepts must group exactly as CPython groups it.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark

from tvmlite.diagnostics import ParseError, Source, Span
from tvmlite.grammar import GRAMMAR, _parser, parse_expression, parse_syntax
from tvmlite.grammar import syntax as S
from tvmlite.grammar.indenter import UNSUPPORTED_KEYWORDS
from tvmlite.grammar.lexer import TvmsLexer


def expr(text: str) -> S.Node:
    return parse_expression(text)


def stmt(text: str) -> S.Node:
    (node,) = parse_syntax(text).body
    return node


def render(node: object) -> str:
    """Fully parenthesized text of our nodes (binary `and`/`or` pairs)."""
    match node:
        case S.Name(id=name):
            return name
        case S.Constant(value=value):
            return repr(value)
        case S.UnaryOp(op=op, operand=operand):
            return f"({op} {render(operand)})"
        case S.BinOp(op=op, left=left, right=right) | S.BoolOp(op=op, left=left, right=right):
            return f"({render(left)} {op} {render(right)})"
        case S.Compare(left=left, ops=ops, comparators=rest):
            parts = " ".join(f"{op} {render(r)}" for op, r in zip(ops, rest, strict=True))
            return f"({render(left)} {parts})"
        case S.IfExp(test=test, body=body, orelse=orelse):
            return f"({render(body)} if {render(test)} else {render(orelse)})"
        case S.Subscript(value=value, indices=(index,)):
            return f"{render(value)}[{render(index)}]"
        case S.Call(func=func, args=args):
            return f"{render(func)}({', '.join(map(render, args))})"
    raise AssertionError(node)


_PY_OPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|",
    ast.BitXor: "^", ast.BitAnd: "&", ast.MatMult: "@", ast.UAdd: "+", ast.USub: "-",
    ast.Invert: "~", ast.Not: "not", ast.And: "and", ast.Or: "or", ast.Eq: "==",
    ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
    ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}  # fmt: skip


def render_python(node: ast.AST) -> str:
    """The same rendering of CPython's tree; its n-ary `and`/`or` become left pairs."""
    match node:
        case ast.Name(id=name):
            return name
        case ast.Constant(value=value):
            return repr(value)
        case ast.UnaryOp(op=op, operand=operand):
            return f"({_PY_OPS[type(op)]} {render_python(operand)})"
        case ast.BinOp(left=left, op=op, right=right):
            return f"({render_python(left)} {_PY_OPS[type(op)]} {render_python(right)})"
        case ast.BoolOp(op=op, values=values):
            text = render_python(values[0])
            for value in values[1:]:
                text = f"({text} {_PY_OPS[type(op)]} {render_python(value)})"
            return text
        case ast.Compare(left=left, ops=ops, comparators=rest):
            pairs = zip(ops, rest, strict=True)
            parts = " ".join(f"{_PY_OPS[type(op)]} {render_python(r)}" for op, r in pairs)
            return f"({render_python(left)} {parts})"
        case ast.IfExp(test=test, body=body, orelse=orelse):
            return f"({render_python(body)} if {render_python(test)} else {render_python(orelse)})"
        case ast.Subscript(value=value, slice=index):
            return f"{render_python(value)}[{render_python(index)}]"
        case ast.Call(func=func, args=args):
            return f"{render_python(func)}({', '.join(map(render_python, args))})"
    raise AssertionError(ast.dump(node))


def assert_like_python(text: str) -> None:
    assert render(expr(text)) == render_python(ast.parse(text, mode="eval").body), text


# ------------------------------------------------------------------ the grammar itself


def test_every_rule_has_a_builder_method() -> None:
    parser = _parser()
    lark, builder = parser.lark, parser.builder
    for rule in lark.rules:
        name = rule.alias or rule.origin.name
        inlined = name.startswith("_") or (rule.options.expand1 and len(rule.expansion) == 1)
        assert inlined or callable(getattr(builder, name, None)), name


LEXER_SAMPLES = [
    "x: T.let[T.float32] = A[i, 0:16] if not a is not b else 1e-05 // .5 ** 0x1F\n",
    "s = r'a\\n' u\"b\" '''c\nd''' \"\"\"e\"\"\" f'x' b'y' + a not in b\n",
    "a <<= b >>= c **= d //= e -> f @ g @= h != i == j >= k <= l\n",
    "def f[n](a: int = 1, *b, **c):  # comment\n    return (x,\n            y)\n",
    "with T.sblock('x'):\n\tpass\\\n  ; is_not, not_in, isnot, notin, not  in, is\tnot\n",
    "T.axis.remap(a . b, f(x).y.z, True.real, x.if_, x.True, 1.e5, a.b.1, x.\\\n y)  \t",
]


@pytest.mark.parametrize("text", LEXER_SAMPLES)
def test_lexer_agrees_with_larks_lexer(text: str) -> None:
    # TvmsLexer's speed rests on assumptions about tvms.lark (see its docstring).
    lexer = _parser().lexer
    reference = Lark(GRAMMAR.read_text(), parser="lalr", lexer="basic", start="module")
    ours = [(t.type, t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column)
            for t in lexer.tokenize(text)]  # fmt: skip
    expected = [(t.type, t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column)
                for t in reference.lex(text)]  # fmt: skip
    assert ours == expected
    assert isinstance(lexer, TvmsLexer)


def test_dotted_names_never_hold_keywords() -> None:
    # DOTTED_NAME must leave out every word that lexes as something other than a NAME,
    # or `True.real` and `x.yield` would change meaning or error.
    lexer = _parser().lexer
    for word in [*lexer.words, *UNSUPPORTED_KEYWORDS]:
        for text in (f"{word}.x", f"x.{word}", f"x.{word}.y"):
            tokens = lexer.tokenize(text)
            assert all(word not in t.value.split(".") for t in tokens if t.type == "DOTTED_NAME")


# ------------------------------------------------------------------ expressions

PRECEDENCE = [
    "x_red_temp_v1[a] > x[b] or x_red_temp_v1[a] == x[b] and v < k",
    "-a ** 2", "a ** -b", "a ** -b * c", "-a * b", "a * -b ** c", "2 ** 3 ** 2",
    "not a == b", "not a and b", "a or b and c", "not not a or not b",
    "a < b < c", "a < b + c < d", "a < b and c < d", "a not in b is not c in d",
    "a if b else c if d else e", "a or b if c else d", "a if b or c else d",
    "not a if b else c", "a | b ^ c & d << e + f * g", "a - b - c", "a / b // c % d @ e",
    "(a + b) * c", "a + (b * c)", "~a + -b - +c", "a is b", "a is not b", "a != b >= c",
    "-(a if b else c)", "(not a) == b", "a >> b << c", "1 - -1", "- - - a",
]  # fmt: skip


@pytest.mark.parametrize("text", PRECEDENCE)
def test_precedence_matches_python(text: str) -> None:
    assert_like_python(text)


OPERANDS = st.sampled_from(["a", "b", "c", "1", "2.5", "(x if y else z)", "f(a)", "A[i]"])
BINARY = st.sampled_from(
    ["or", "and", "<", ">", "==", ">=", "<=", "!=", "in", "not in", "is", "is not", "|", "^"]
    + ["&", "<<", ">>", "+", "-", "*", "/", "//", "%", "@", "**"]
)
PREFIX = st.sampled_from(["", "", "", "-", "+", "~", "not ", "not not ", "- -"])


@st.composite
def operator_soup(draw: st.DrawFn) -> str:
    parts = [draw(PREFIX) + draw(OPERANDS)]
    for _ in range(draw(st.integers(0, 6))):
        parts.append(f" {draw(BINARY)} ")
        parts.append(draw(PREFIX) + draw(OPERANDS))
    if draw(st.booleans()):
        parts += [" if ", draw(OPERANDS), " else ", draw(OPERANDS)]
    return "".join(parts)


@settings(deadline=None, max_examples=200)
@given(operator_soup())
def test_random_operator_expressions_group_like_python(text: str) -> None:
    try:
        expected = render_python(ast.parse(text, mode="eval").body)
    except SyntaxError:
        with pytest.raises(ParseError):
            expr(text)
        return
    assert render(expr(text)) == expected, text


def test_atoms_and_trailers() -> None:
    call = expr('T.Buffer((8, 6), "float32", scope="global",)')
    assert isinstance(call, S.Call) and S.dotted(call.func) == "T.Buffer"
    assert call.args[0] == S.Tuple((S.Constant(8), S.Constant(6)))
    assert call.keywords == (S.Keyword("scope", S.Constant("global")),)
    assert expr("A[i, 0:16]").indices == (S.Name("i"), S.Slice(S.Constant(0), S.Constant(16)))
    assert expr("A[()]").indices == ()
    assert expr("A[i,]").indices == (S.Name("i"),)
    assert expr("A[::2]").indices == (S.Slice(None, None, S.Constant(2)),)
    ramp = expr("B[i * 4:i * 4 + 4]").indices[0]
    assert isinstance(ramp, S.Slice) and isinstance(ramp.stop, S.BinOp)
    assert expr("T.let[T.float32]").indices == (expr("T.float32"),)
    assert expr("[1, 2,]") == S.List((S.Constant(1), S.Constant(2)))
    assert expr('{"a": 1, "b": [x]}') == S.Dict(
        (S.Constant("a"), S.Constant("b")), (S.Constant(1), S.List((S.Name("x"),)))
    )
    assert expr("(x,)") == S.Tuple((S.Name("x"),)) and expr("()") == S.Tuple(())
    assert expr("lambda x, y: x + y") == S.Lambda(("x", "y"), expr("x + y"))
    assert expr("True, False, None").elts == (S.Constant(True), S.Constant(False), S.Constant(None))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1), ("0x1F", 31), ("0o17", 15), ("0b101", 5), ("1_000", 1000), ("1.0", 1.0),
        ("1e-05", 1e-05), ("1.0000000000000001e-05", 1.0000000000000001e-05), (".5", 0.5),
        ("3.", 3.0), ("9223372036854775807", 9223372036854775807),
        ("'a\\n\\t\\'b'", "a\n\t'b"), ('"\\x41\\u00e9\\N{BULLET}\\101"', "A\u00e9\u2022A"),
        ("r'a\\n'", "a\\n"), ("'a' \"b\"", "ab"), ('"""x\n"y"\n"""', 'x\n"y"\n'),
        ("'\\d'", "\\d"), ("''", ""), ("'''a'b'''", "a'b"),
    ],
)  # fmt: skip
def test_literals(text: str, value: object) -> None:
    node = expr(text)
    assert isinstance(node, S.Constant) and node.value == value
    assert type(node.value) is type(value)


# ------------------------------------------------------------------ statements


def test_statements() -> None:
    assert stmt("x = 1\n") == S.Assign((S.Name("x"),), S.Constant(1))
    assert stmt("a, b = f()").targets == (S.Tuple((S.Name("a"), S.Name("b")), False),)
    assert stmt("a = b = v").targets == (S.Name("a"), S.Name("b"))
    assert stmt("tup = a, b").value == S.Tuple((S.Name("a"), S.Name("b")), False)
    assert stmt("x: T.let[T.int32] = v") == S.AnnAssign(
        S.Name("x"), expr("T.let[T.int32]"), S.Name("v")
    )
    assert stmt("x: T.int32") == S.AnnAssign(S.Name("x"), expr("T.int32"), None)
    assert stmt("x += 1") == S.AugAssign(S.Name("x"), "+", S.Constant(1))
    assert stmt("x **= 2").op == "**"
    assert stmt("T.evaluate(0)") == S.ExprStmt(expr("T.evaluate(0)"))
    assert stmt("return") == S.Return(None)
    assert stmt("return a, b").value == S.Tuple((S.Name("a"), S.Name("b")), False)
    assert stmt("assert x, 'm'") == S.Assert(S.Name("x"), S.Constant("m"))
    assert stmt('assert x, ("RuntimeError", ["msg"])').msg == expr('("RuntimeError", ["msg"])')
    assert stmt("pass") == S.Pass() and stmt("break") == S.Break()
    assert stmt("continue") == S.Continue()
    assert stmt("import tvm") == S.Import("tvm")
    assert stmt("from tvm.script import tir as T, relax") == S.Import(
        "tvm.script", (("tir", "T"), ("relax", None))
    )
    assert parse_syntax("a = 1; b = 2;\n").body == (stmt("a = 1"), stmt("b = 2"))


def test_compound_statements() -> None:
    loop = stmt("for i, j in T.grid(2, 3):\n    A[i, j] = 0\n")
    assert isinstance(loop, S.For) and loop.target == S.Tuple((S.Name("i"), S.Name("j")), False)
    assert stmt("while x < 3:\n    x = x + 1\n").test == expr("x < 3")
    chain = stmt("if a:\n    pass\nelif b:\n    break\nelse:\n    continue\n")
    assert chain == S.If(
        S.Name("a"), (S.Pass(),), (S.If(S.Name("b"), (S.Break(),), (S.Continue(),)),)
    )
    assert stmt("if a: pass").body == (S.Pass(),)
    block = stmt('with T.sblock("x"), X as (y, z):\n    with T.init():\n        pass\n')
    assert block.items[0] == S.WithItem(expr('T.sblock("x")'))
    assert block.items[1].target == S.Tuple((S.Name("y"), S.Name("z")))
    assert isinstance(block.body[0], S.With)
    func = stmt(
        "@T.prim_func(private=True)\n@R.function\n"
        "def main[n, m](A: T.Buffer((n,), 'float32'), b: T.int32 = 1) -> R.Tensor:\n"
        "    # comment\n\n    return A\n"
    )
    assert isinstance(func, S.FunctionDef) and func.name == "main"
    assert func.type_params == ("n", "m") and func.returns == expr("R.Tensor")
    assert func.decorators == (expr("T.prim_func(private=True)"), expr("R.function"))
    assert func.params[1] == S.Param("b", expr("T.int32"), S.Constant(1))
    cls = stmt("@I.ir_module\nclass Module(Base):\n    x = 1\n")
    assert cls == S.ClassDef("Module", (S.Name("Base"),), (stmt("x = 1"),), (expr("I.ir_module"),))


def test_layout() -> None:
    text = "# header\n\n\nx = f(1,  # inner\n      2)\ny = a + \\\n    b\n\n   \n# end"
    assert [type(s) for s in parse_syntax(text).body] == [S.Assign, S.Assign]
    assert parse_syntax("").body == () and parse_syntax("\n# only\n").body == ()
    assert parse_syntax("if x:\n\tif y:\n\t\tpass\n").body[0].body[0].body == (S.Pass(),)
    assert parse_syntax("x = 1\r\ny = 2\r\n").body[1] == stmt("y = 2")


# ------------------------------------------------------------------ spans


def test_spans() -> None:
    module = parse_syntax("def f():\n    y = foo(a, (b + 1) * c)\n", "m.tvms")
    assign = module.body[0].body[0]
    call = assign.value
    where = [(n.span.line, n.span.column, n.span.end_line, n.span.end_column) for n in (
        module.body[0], assign, call, call.args[1], call.args[1].left
    )]  # fmt: skip
    assert where == [(1, 1, 2, 28), (2, 5, 2, 28), (2, 9, 2, 28), (2, 16, 2, 27), (2, 16, 2, 23)]
    assert call.span.location() == "m.tvms:2:9"
    assert call.span.source is module.span.source
    assert (module.span.line, module.span.end_line, module.span.end_column) == (1, 3, 1)
    func = stmt("@dec\ndef f(x: int = 1):\n    pass\n")
    assert (func.span.line, func.params[0].span.column, func.params[0].span.end_column) == (
        2, 7, 17
    )  # fmt: skip


def test_dotted_names_are_attribute_chains() -> None:
    # `T.axis.remap` is one token; its nodes and spans are those of `T . axis . remap`.
    def where(node: S.Node) -> tuple[int, int, int, int]:
        return (node.span.line, node.span.column, node.span.end_line, node.span.end_column)

    remap = stmt("x = (T.axis.remap, f(a).b.c)\n").value.elts
    assert remap[0] == expr("T . axis . remap") and S.dotted(remap[0]) == "T.axis.remap"
    assert [where(remap[0]), where(remap[0].value), where(remap[0].value.value)] == [
        (1, 6, 1, 18), (1, 6, 1, 12), (1, 6, 1, 7)
    ]  # fmt: skip
    assert remap[1] == expr("f(a) . b . c")
    assert [where(remap[1]), where(remap[1].value)] == [(1, 20, 1, 28), (1, 20, 1, 26)]
    assert expr("True.real") == S.Attribute(S.Constant(True), "real")
    assert stmt("import a.b.c as d") == S.Import("a.b.c", (("a.b.c", "d"),))
    assert stmt("from a.b import c") == S.Import("a.b", (("c", None),))
    node = parse_expression("n.m + 1", Span(Source('x = R.Tensor(("n.m + 1",))'), 1, 15, 1, 24))
    assert (node.left.span.column, node.left.span.end_column, node.left.value.span.end_column) == (
        16, 19, 17
    )  # fmt: skip


def test_expression_spans_map_into_the_enclosing_literal() -> None:
    text = 'x = R.Tensor(("n + 1",))'
    literal = Span(Source(text, "f.tvms"), 1, 15, 1, 22)
    node = parse_expression("n + 1", literal)
    assert (node.span.column, node.span.end_column, node.right.span.column) == (16, 21, 20)
    assert node.span.source.filename == "f.tvms"
    with pytest.raises(ParseError) as error:
        parse_expression("n +", literal)
    assert error.value.span == literal and "unexpected end of input" in error.value.message


# ------------------------------------------------------------------ errors

ERRORS = [
    ("x = (1 + 2))\n", 1, 12, "unexpected ')'"),
    ("def f():\nreturn 1\n", 2, 1, "expected an indented block"),
    ("def f():", 1, 9, "expected an indented block"),
    ("x = f(1,\n", 1, 6, "'(' was never closed"),
    ("x = 1 +\n", 1, 8, "unexpected end of line"),
    ("x = 1 +", 1, 8, "unexpected end of input"),
    ("x = a\u200b\n", 1, 6, "invalid character '\\u200b' (U+200B)"),
    ("x = \x00\n", 1, 5, "invalid character '\\x00' (U+0000)"),
    ("x = $\n", 1, 5, "invalid character '$'"),
    ("if a:\n        x = 1\n    y = 2\n", 3, 5, "unindent does not match"),
    ("if a:\n    x = 1\n\ty = 2\n", 3, 2, "inconsistent use of tabs and spaces"),
    ("x = 'abc\n", 1, 5, "unterminated string"),
    ("x = '''abc\n", 1, 5, "unterminated triple-quoted string"),
    ("x = a \\ b\n", 1, 7, "stray '\\'"),
    ("  x = 1\n", 1, 3, "unexpected indent"),
    ("x = 1\n    y = 2\n", 2, 5, "unexpected indent"),
    ("x = [a for a in b]\n", 1, 8, "comprehensions are not supported"),
    ("f(*args)\n", 1, 3, "star expressions"),
    ("yield x\n", 1, 1, "'yield' is not supported"),
    ("async def f():\n    pass\n", 1, 1, "'async' is not supported"),
    ("global x\n", 1, 1, "'global' is not supported"),
    ("(x := 1)\n", 1, 4, "assignment expressions"),
    ("x = f'{a}'\n", 1, 5, "f-strings are not supported"),
    ("x = '\\x4'\n", 1, 5, "truncated '\\x' escape"),
    ("x = '\\N{NO SUCH NAME}'\n", 1, 5, "unknown character name"),
    ("f(a=1, 2)\n", 1, 8, "positional argument follows keyword argument"),
    ("x = a if b\n", 1, 7, "expected 'else'"),
    ("x = a == not b\n", 1, 10, "unexpected keyword 'not'"),
    ("x = (]\n", 1, 6, "closing ']' does not match opening '('"),
    ("def f()\n    pass\n", 1, 8, "unexpected end of line, expected ':' or '->'"),
    ("class A(metaclass=M):\n    pass\n", 1, 9, "class keyword arguments"),
    ("x = 1j\n", 1, 5, "complex literals"),
    ("for x in y:\n    pass\nelse:\n    pass\n", 3, 1, "unexpected keyword 'else'"),
    # A problem found while lexing waits until the parser gets there.
    ("x = )\ny = $\n", 1, 5, "unexpected ')'"),
    ("x = )\n  y = 1\n", 1, 5, "unexpected ')'"),
    # A dotted name fails where its first name or dot would.
    ("def f.g():\n    pass\n", 1, 6, "unexpected '.', expected '(' or '['"),
    ("x = 1 a.b\n", 1, 7, "unexpected name 'a'"),
    ("x = a.b.if\n", 1, 9, "unexpected keyword 'if', expected a name"),
    ("x = a.yield\n", 1, 7, "'yield' is not supported"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), ERRORS)
def test_errors_are_located(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(ParseError) as error:
        parse_syntax(text, "bad.tvms")
    span = error.value.span
    assert message in error.value.message
    assert (span.line, span.column) == (line, column), error.value.message
    assert str(error.value).startswith(f"bad.tvms:{line}:{column}: error: ")


# ------------------------------------------------------------------ depth and speed


def test_deep_nesting_does_not_recurse() -> None:
    assert stmt("x = " + "(" * 600 + "1" + ")" * 600).value == S.Constant(1)
    node = stmt("x = " + "a + (" * 500 + "a" + ")" * 500).value
    for _ in range(500):
        assert isinstance(node, S.BinOp)
        node = node.right
    assert node == S.Name("a")
    lines = [" " * 4 * i + ("with T.init():" if i % 2 else "if x:") for i in range(200)]
    node = parse_syntax("\n".join([*lines, " " * 800 + "pass", ""])).body[0]
    for _ in range(200):
        node = node.body[0]
    assert node == S.Pass()
    assert isinstance(expr("-" * 1000 + "a"), S.UnaryOp)
    assert len(expr(" + ".join(["a"] * 3000)).span.source.text) > 0


# ------------------------------------------------------------------ garbage


def parse_or_parse_error(text: str) -> None:
    try:
        parse_syntax(text)
    except ParseError as error:
        assert error.span is None or error.span.line >= 1
    try:
        parse_expression(text)
    except ParseError:
        pass


VALID = (
    'def f(a: T.int32 = 1) -> R.Tensor((2,), "f"):\n    with T.sblock("x"):\n'
    '        y = -a[0:2] ** 2 if b else {"k": [1, (2,)]}\n'
)


@settings(deadline=None, max_examples=200)
@given(st.text(alphabet=st.sampled_from(list(VALID) + ["\t", "\\", "'", "\x00", "\u200b"])))
def test_garbage_made_of_tvms_characters_raises_only_parse_error(text: str) -> None:
    parse_or_parse_error(text)


@settings(deadline=None, max_examples=200)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_parse_error(data: bytes) -> None:
    parse_or_parse_error(data.decode("latin-1"))


@settings(deadline=None, max_examples=200)
@given(st.integers(0, len(VALID)), st.integers(0, 6), st.text(max_size=4))
def test_damaged_valid_text_raises_only_parse_error(at: int, cut: int, insert: str) -> None:
    parse_or_parse_error(VALID[:at] + insert + VALID[at + cut :])
