"""The inline transformer: builds `grammar/syntax.py` nodes while the LALR parser reduces.

Building during the parse (instead of transforming a Lark tree afterwards) means no
recursion over the tree ever happens, so nesting depth is limited only by memory, and
no Lark `Tree` outlives the grammar boundary. Lark does not hand `meta` to inline
transformers, so spans come from the children: every token carries its position, and
every node built here already carries its span. Terminals that bound a node (brackets,
leading keywords) are named in the grammar so that they reach these methods.

One method per rule or alias of `tvms.lark`; a test checks that none is missing.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tvmlite.diagnostics import ParseError, Source, Span
from tvmlite.grammar import syntax as S
from tvmlite.grammar.lexer import Tok
from tvmlite.grammar.operators import fold

Item = Tok | S.Node
_SIMPLE_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\n": "", "\r\n": "",
}  # fmt: skip
_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}\n]*\}|[0-7]{1,3}|\r\n|[\s\S])"
)


@dataclasses.dataclass(frozen=True, slots=True)
class Placement:
    """Where the text being parsed sits in `source`: tokens on the text's first line are
    shifted right by `column`, all lines down by `line` (used for quoted expressions)."""

    source: Source
    line: int = 0
    column: int = 0

    def shift(self, line: int, column: int) -> tuple[int, int]:
        return line + self.line, column + self.column if line == 1 else column


class SyntaxBuilder:
    """Callbacks for the LALR parser, which is built once with them bound.

    Spans need the text being parsed, so `parsing` installs it for one parse, holding a
    lock: the GIL serializes parses anyway, and the lock keeps threads from mixing up
    their sources (it is reentrant, and the previous placement is restored, for safety).
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._where = Placement(Source(""))

    @contextmanager
    def parsing(self, placement: Placement) -> Iterator[None]:
        with self._lock:
            previous, self._where = self._where, placement
            try:
                yield
            finally:
                self._where = previous

    # -------------------------------------------------------------- spans and errors

    def _span(self, first: Item, last: Item) -> Span:
        where = self._where
        if first.__class__ is Tok:
            line, column = first.line, first.column  # type: ignore[union-attr]
            if where.line or where.column:
                line, column = where.shift(line, column)
        else:
            start = first.span  # type: ignore[union-attr]
            line, column = start.line, start.column
        if last.__class__ is Tok:
            end_line, end_column = last.end_line, last.end_column  # type: ignore[union-attr]
            if where.line or where.column:
                end_line, end_column = where.shift(end_line, end_column)
        else:
            stop = last.span  # type: ignore[union-attr]
            end_line, end_column = stop.end_line, stop.end_column
        return Span(where.source, line, column, end_line, end_column)

    def _error(self, message: str, first: Item, last: Item | None = None) -> ParseError:
        """A located error for the builder's own checks (escapes, argument order, ...)."""
        span = self._span(first, last if last is not None else first)
        return ParseError(message, span, span.source.filename)

    # -------------------------------------------------------------- statements

    def module(self, children: list[S.Node]) -> tuple[S.Node, ...]:
        return tuple(children)

    def expression_input(self, children: list[S.Node]) -> S.Node:
        return children[0]

    def suite(self, children: list[S.Node]) -> tuple[S.Node, ...]:
        return tuple(children)

    def expr_stmt(self, c: list[Any]) -> S.ExprStmt:
        return S.ExprStmt(c[0], c[0].span)

    def assign(self, c: list[Any]) -> S.Assign:
        return S.Assign(tuple(c[:-1]), c[-1], self._span(c[0], c[-1]))

    def annassign(self, c: list[Any]) -> S.AnnAssign:
        target, annotation, value = c
        return S.AnnAssign(target, annotation, value, self._span(target, value or annotation))

    def augassign(self, c: list[Any]) -> S.AugAssign:
        target, op, value = c
        return S.AugAssign(target, op.value[:-1], value, self._span(target, value))

    def pass_stmt(self, c: list[Tok]) -> S.Pass:
        return S.Pass(self._span(c[0], c[0]))

    def break_stmt(self, c: list[Tok]) -> S.Break:
        return S.Break(self._span(c[0], c[0]))

    def continue_stmt(self, c: list[Tok]) -> S.Continue:
        return S.Continue(self._span(c[0], c[0]))

    def return_stmt(self, c: list[Any]) -> S.Return:
        keyword, value = c
        return S.Return(value, self._span(keyword, value or keyword))

    def assert_stmt(self, c: list[Any]) -> S.Assert:
        keyword, test, msg = c
        return S.Assert(test, msg, self._span(keyword, msg or test))

    def dotted_name(self, c: list[Tok]) -> list[Tok]:
        return c

    def import_name(self, c: list[Any]) -> S.Import:
        keyword, dotted, alias = c
        module = ".".join(c.value for c in dotted)
        names = ((module, alias.value),) if alias is not None else ()
        return S.Import(module, names, self._span(keyword, alias or dotted[-1]))

    def import_alias(self, c: list[Any]) -> tuple[tuple[str, str | None], Tok]:
        name, alias = c
        return (name.value, alias.value if alias is not None else None), alias or name

    def import_from(self, c: list[Any]) -> S.Import:
        keyword, dotted, *aliases = c
        names = tuple(name for name, _ in aliases)
        module = ".".join(c.value for c in dotted)
        return S.Import(module, names, self._span(keyword, aliases[-1][1]))

    def elif_clause(self, c: list[Any]) -> tuple[Tok, S.Node, tuple[S.Node, ...]]:
        return c[0], c[1], c[2]

    def if_stmt(self, c: list[Any]) -> S.If:
        keyword, test, body, *elifs, else_keyword, orelse = c
        # the `else` keyword's place: comments on its line and above it need it
        else_span = None if else_keyword is None else self._span(else_keyword, else_keyword)
        orelse = orelse or ()
        for elif_keyword, elif_test, elif_body in reversed(elifs):
            span = self._span(elif_keyword, (orelse or elif_body)[-1])
            orelse = (S.If(elif_test, elif_body, orelse, span, else_span),)
            else_span = None
        return S.If(test, body, orelse, self._span(keyword, (orelse or body)[-1]), else_span)

    def for_stmt(self, c: list[Any]) -> S.For:
        keyword, target, iterable, body = c
        return S.For(target, iterable, body, self._span(keyword, body[-1]))

    def while_stmt(self, c: list[Any]) -> S.While:
        keyword, test, body = c
        return S.While(test, body, self._span(keyword, body[-1]))

    def with_item(self, c: list[Any]) -> S.WithItem:
        context, target = c
        return S.WithItem(context, target, self._span(context, target or context))

    def with_stmt(self, c: list[Any]) -> S.With:
        keyword, *items, body = c
        return S.With(tuple(items), body, self._span(keyword, body[-1]))

    def decorators(self, c: list[S.Node]) -> tuple[S.Node, ...]:
        return tuple(c)

    def decorator(self, c: list[S.Node]) -> S.Node:
        return c[0]

    def type_params(self, c: list[Tok]) -> tuple[str, ...]:
        return tuple(name.value for name in c)

    def param(self, c: list[Any]) -> S.Param:
        name, annotation, default = c
        return S.Param(
            name.value, annotation, default, self._span(name, default or annotation or name)
        )

    def parameters(self, c: list[S.Param]) -> tuple[S.Param, ...]:
        return tuple(c)

    def funcdef(self, c: list[Any]) -> S.FunctionDef:
        decorators, keyword, name, type_params, params, returns, body = c
        return S.FunctionDef(
            name.value, params or (), returns, body, decorators or (), type_params or (),
            self._span(keyword, body[-1]),
        )  # fmt: skip

    def classdef(self, c: list[Any]) -> S.ClassDef:
        decorators, keyword, name, arguments, body = c
        bases: tuple[S.Node, ...] = ()
        if arguments is not None:
            bases, keywords = arguments
            if keywords:
                raise self._error("class keyword arguments are not supported", keywords[0])
        return S.ClassDef(name.value, bases, body, decorators or (), self._span(keyword, body[-1]))

    # -------------------------------------------------------------- expressions

    def bare_tuple(self, c: list[S.Node]) -> S.Tuple:
        # The span ends at the last element: a trailing comma is dropped by the grammar.
        return S.Tuple(tuple(c), False, self._span(c[0], c[-1]))

    target_tuple = bare_tuple

    def tuple_display(self, c: list[Any]) -> S.Tuple:
        return S.Tuple(tuple(c[1:-1]), True, self._span(c[0], c[-1]))

    def paren(self, c: list[Any]) -> S.Node:
        # A parenthesized expression keeps its node; its span grows to cover the
        # parentheses, so that `(a + b) * c` starts at the `(` like CPython's.
        return dataclasses.replace(c[1], span=self._span(c[0], c[2]))

    def list_display(self, c: list[Any]) -> S.List:
        return S.List(tuple(c[1:-1]), self._span(c[0], c[-1]))

    def dict_display(self, c: list[Any]) -> S.Dict:
        items = c[1:-1]
        return S.Dict(tuple(items[0::2]), tuple(items[1::2]), self._span(c[0], c[-1]))

    def lambda_params(self, c: list[Tok]) -> tuple[str, ...]:
        return tuple(name.value for name in c)

    def lambdef(self, c: list[Any]) -> S.Lambda:
        keyword, params, body = c
        return S.Lambda(params or (), body, self._span(keyword, body))

    def test(self, c: list[Any]) -> S.Node:
        return fold(c, self._span, self._error)

    def keyword(self, c: list[Any]) -> S.Keyword:
        name, value = c
        return S.Keyword(name.value, value, self._span(name, value))

    def arguments(self, c: list[S.Node]) -> tuple[tuple[S.Node, ...], tuple[S.Keyword, ...]]:
        args: list[S.Node] = []
        keywords: list[S.Keyword] = []
        for arg in c:
            (keywords if arg.__class__ is S.Keyword else args).append(arg)  # type: ignore[arg-type]
        if keywords and c[-1].__class__ is not S.Keyword:
            late = next(arg for arg in c[c.index(keywords[0]) :] if not isinstance(arg, S.Keyword))
            raise self._error("positional argument follows keyword argument", late)
        return tuple(args), tuple(keywords)

    def call(self, c: list[Any]) -> S.Call:
        func, arguments, close = c
        args, keywords = arguments or ((), ())
        return S.Call(func, args, keywords, self._span(func, close))

    def subscripts(self, c: list[S.Node]) -> tuple[S.Node, ...]:
        # A trailing comma is dropped by the grammar: `A[i,]` is `A[i]`.
        if len(c) == 1 and isinstance(c[0], S.Tuple) and c[0].parenthesized:
            return c[0].elts  # `A[()]` has no index; `A[(i, j)]` is `A[i, j]` as in Python
        return tuple(c)

    def subscript(self, c: list[Any]) -> S.Subscript:
        value, indices, close = c
        return S.Subscript(value, indices, self._span(value, close))

    def slice_item(self, c: list[Any]) -> S.Slice:
        start, colon, stop, second_colon, step = c
        last = step or second_colon or stop or colon
        return S.Slice(start, stop, step, self._span(start or colon, last))

    def attribute(self, c: list[Any]) -> S.Attribute:
        value, name = c
        if name.type == "DOTTED_NAME":  # `f(x).a.b`: `.` then the one token `a.b`
            return self._chain(value, name)  # type: ignore[return-value]
        return S.Attribute(value, name.value, self._span(value, name))

    def name(self, c: list[Tok]) -> S.Name:
        return S.Name(c[0].value, self._span(c[0], c[0]))

    def dotted(self, c: list[Tok]) -> S.Node:
        return self._chain(None, c[0])

    def _chain(self, value: S.Node | None, dotted: Tok) -> S.Node:
        """`value.a.b` for the DOTTED_NAME token `a.b` (`a.b` itself if `value` is None),
        with the spans the NAME and `.` tokens would have given, on the token's line."""
        where = self._where
        line = dotted.line + where.line
        shift = where.column if dotted.line == 1 else 0
        end = dotted.column + shift  # the end of each part in turn
        node = value
        if node is not None:
            start = node.span
            first_line, first_column = start.line, start.column  # type: ignore[union-attr]
        else:
            first_line, first_column = line, end
        for part in dotted.value.split("."):
            end += len(part)
            span = Span(where.source, first_line, first_column, line, end)
            node = S.Name(part, span) if node is None else S.Attribute(node, part, span)
            end += 1  # the dot
        return node  # type: ignore[return-value]

    def constant(self, c: list[Tok]) -> S.Constant:
        value = {"True": True, "False": False, "None": None}[c[0].value]
        return S.Constant(value, self._span(c[0], c[0]))

    def int_literal(self, c: list[Tok]) -> S.Constant:
        token = c[0]
        if token.value[-1] in "jJ":
            raise self._error("complex literals are not supported", token)
        try:
            value = int(token.value, 0) if token.type == "HEX_NUMBER" else int(token.value)
        except ValueError:
            raise self._error("integer literal is too long", token) from None
        return S.Constant(value, self._span(token, token))

    def float_literal(self, c: list[Tok]) -> S.Constant:
        token = c[0]
        if token.value[-1] in "jJ":
            raise self._error("complex literals are not supported", token)
        return S.Constant(float(token.value), self._span(token, token))

    def string(self, c: list[Tok]) -> S.Constant:
        if len(c) == 1:
            text = c[0].value
            if text[0] in "\"'" and "\\" not in text and text[:3] not in ('"""', "'''"):
                return S.Constant(text[1:-1], self._span(c[0], c[0]))  # the common case
        value = "".join(self._string_value(token) for token in c)
        return S.Constant(value, self._span(c[0], c[-1]))

    def _string_value(self, token: Tok) -> str:
        text: str = token.value
        quote = text.find(text[-1])
        prefix, body = text[:quote].lower(), text[quote:]
        if "f" in prefix:
            raise self._error("f-strings are not supported", token)
        if "b" in prefix:
            raise self._error("bytes literals are not supported", token)
        width = 3 if body[:3] in ('"""', "'''") and len(body) >= 6 else 1
        body = body[width:-width]
        if "r" in prefix or "\\" not in body:
            return body
        return _ESCAPE.sub(lambda match: self._escape(match.group(1), token), body)

    def _escape(self, code: str, token: Tok) -> str:
        head = code[0]
        if code in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[code]
        if head in "01234567":
            return chr(int(code, 8))
        if head in "xuU" and len(code) > 1:
            point = int(code[1:], 16)
            if 0xD800 <= point <= 0xDFFF:  # Python allows it; no UTF-8 file or C string can
                raise self._error(f"invalid escape '\\{code}' (a lone surrogate)", token)
            if point <= 0x10FFFF:
                return chr(point)
            raise self._error(f"invalid escape '\\{code}' (beyond U+10FFFF)", token)
        if head in "xuU":
            raise self._error(f"truncated '\\{head}' escape in string", token)
        if head == "N":
            try:
                return unicodedata.lookup(code[2:-1])
            except KeyError:
                problem = "unknown character name" if len(code) > 1 else "malformed '\\N' escape"
                raise self._error(f"{problem} in string", token) from None
        return "\\" + code  # like Python: unknown escapes keep their backslash
