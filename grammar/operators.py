"""Python's operator precedence, applied to the flat operator chains of the grammar.

The grammar hands over `-a ** 2 < b and not c if d else e` as one flat list of operands
and operator tokens (see the comment in `tvms.lark` for why). `fold` groups it exactly
as Python would, with an operator stack instead of recursion, so chains of any length
and parenthesized nesting of any depth cost no Python stack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tvmlite.diagnostics import ParseError, Span
from tvmlite.grammar import syntax as S
from tvmlite.grammar.lexer import Tok

# Binding strength, loosest first, as in the Python reference's precedence table.
TERNARY, OR, AND, NOT, COMPARE = 0, 1, 2, 3, 4
BINARY = {
    "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
    "*": 10, "/": 10, "//": 10, "%": 10, "@": 10,
}  # fmt: skip
UNARY, POWER = 11, 12
COMPARISONS = frozenset({"<", ">", "==", ">=", "<=", "!=", "in", "not in", "is", "is not"})
# `not` may start an operand only where Python's grammar has a `not_test`.
_NOT_MAY_FOLLOW = frozenset({"and", "or", "not", "if", "else"})

SpanOf = Callable[[Tok | S.Node, Tok | S.Node], Span]
ErrorAt = Callable[[str, Tok], ParseError]


@dataclass(slots=True)
class _Pending:
    """An operator waiting for its right operand(s) on the stack."""

    kind: str  # "prefix", "binary", "compare", "if" (no `else` yet) or "ternary"
    precedence: int
    token: Tok
    ops: list[str] = field(default_factory=list)  # the operators of a comparison chain


def fold(items: list[Tok | S.Node], span: SpanOf, error: ErrorAt) -> S.Node:
    """The expression tree of `[prefix* operand (operator prefix* operand)*]`."""
    values: list[S.Node] = []
    stack: list[_Pending] = []
    previous = ""  # the operator just before an expected operand; "" at the start
    expect_operand = True
    for item in items:
        if isinstance(item, S.Node):
            values.append(item)
            expect_operand = False
            continue
        op = " ".join(item.value.split())  # `not  in` is `not in`
        if expect_operand:  # so a prefix operator
            if op == "not" and previous and previous not in _NOT_MAY_FOLLOW:
                raise error("unexpected keyword 'not'", item)
            stack.append(_Pending("prefix", NOT if op == "not" else UNARY, item))
            previous = op
            continue
        precedence = _binary_precedence(op)
        right = precedence in (TERNARY, POWER)
        while stack and (
            stack[-1].precedence > precedence or (stack[-1].precedence == precedence and not right)
        ):
            if stack[-1].kind == "compare" and precedence == COMPARE:
                break
            _reduce(stack.pop(), values, span, error)
        top = stack[-1] if stack else None
        if precedence == COMPARE and top is not None and top.kind == "compare":
            top.ops.append(op)
        elif op == "else":
            if top is None or top.kind != "if":
                raise error("unexpected keyword 'else'", item)
            top.kind = "ternary"
        elif op == "if" and top is not None and top.kind == "if":
            raise error("unexpected keyword 'if'", item)
        else:
            kind = "compare" if precedence == COMPARE else "if" if op == "if" else "binary"
            stack.append(_Pending(kind, precedence, item, [op]))
        previous = op
        expect_operand = True
    while stack:
        _reduce(stack.pop(), values, span, error)
    return values[0]


def _binary_precedence(op: str) -> int:
    if op in BINARY:
        return BINARY[op]
    if op in COMPARISONS:
        return COMPARE
    return {"or": OR, "and": AND, "if": TERNARY, "else": TERNARY, "**": POWER}[op]


def _reduce(pending: _Pending, values: list[S.Node], span: SpanOf, error: ErrorAt) -> None:
    kind = pending.kind
    if kind == "prefix":
        operand = values.pop()
        op = " ".join(pending.token.value.split())
        values.append(S.UnaryOp(op, operand, span(pending.token, operand)))
    elif kind == "binary":
        right = values.pop()
        left = values.pop()
        op = pending.ops[0]
        node_type = S.BoolOp if op in ("and", "or") else S.BinOp
        values.append(node_type(op, left, right, span(left, right)))
    elif kind == "compare":
        count = len(pending.ops) + 1
        operands = values[-count:]
        del values[-count:]
        first, rest = operands[0], tuple(operands[1:])
        values.append(S.Compare(first, tuple(pending.ops), rest, span(first, rest[-1])))
    elif kind == "ternary":
        orelse = values.pop()
        test = values.pop()
        body = values.pop()
        values.append(S.IfExp(test, body, orelse, span(body, orelse)))
    else:
        raise error("expected 'else' to complete the conditional expression", pending.token)
