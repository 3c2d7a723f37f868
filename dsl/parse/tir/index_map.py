"""`T.index_map(lambda i, j: (i // 4, j, i % 4))` in Relax code (the
`index_map` of `R.layout_transform`), read without evaluating the lambda.

The lambda's parameters become fresh index vars (`index_dtype`, int64 by
default as in TVM) visible only in its body; the body is a tuple of TIR index
expressions (or a single one). `inverse_index_map=lambda ...` is read the same
way and kept. A bare `lambda` written as the attribute is accepted too, as
TVM's `R.layout_transform` does.
"""

from __future__ import annotations

from tvmlite.diagnostics import did_you_mean
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.index_map import INDEX, IndexMap
from tvmlite.dsl.parse.tir.expr import ExprParser
from tvmlite.grammar import syntax


def parse_lambda(node: syntax.Node, parser: ExprParser, index_dtype: str = INDEX) -> IndexMap:
    """An IndexMap from a `lambda` node."""
    if not isinstance(node, syntax.Lambda):
        raise parser.error("an index map must be a lambda over the indices", node)
    if len(set(node.params)) != len(node.params):
        raise parser.error("the index map's lambda repeats a parameter name", node)
    params = tuple(tir.Var(name, index_dtype, span=node.span) for name in node.params)
    parser.push()
    try:
        for name, var in zip(node.params, params, strict=True):
            parser.define(name, var)
        body = node.body
        items = body.elts if isinstance(body, (syntax.Tuple, syntax.List)) else (body,)
        final = []
        for item in items:
            e = parser.expr(item, index_dtype)
            if not dt.is_integer_like(e.dtype) or dt.lanes(e.dtype) != 1:
                raise parser.error(f"an index must be an integer, not {e.dtype}", item)
            final.append(e)
    finally:
        parser.pop()
    return IndexMap(params, tuple(final), span=node.span)


def parse_index_map(node: syntax.Call, parser: ExprParser) -> IndexMap:
    """`T.index_map(mapping, *, inverse_index_map=None, index_dtype="int64")`."""
    if len(node.args) != 1:
        raise parser.error(f"T.index_map takes 1 positional argument, got {len(node.args)}", node)
    inverse_node, index_dtype = None, INDEX
    for kw in node.keywords:
        if kw.name == "inverse_index_map":
            inverse_node = kw.value
        elif kw.name == "index_dtype":
            index_dtype = parser.dtype_arg(kw.value)
            if not dt.is_int(index_dtype) or dt.lanes(index_dtype) != 1:
                raise parser.error(f"index_dtype must be an integer dtype, not {index_dtype}", kw)
        else:
            hint = did_you_mean(kw.name, ("inverse_index_map", "index_dtype"), quote=True)
            raise parser.error(
                f"T.index_map got an unexpected keyword argument '{kw.name}'{hint}", kw
            )
    forward = parse_lambda(node.args[0], parser, index_dtype)
    if inverse_node is None or _is_none(inverse_node):
        return IndexMap(forward.initial_indices, forward.final_indices, span=node.span)
    inverse = parse_lambda(inverse_node, parser, index_dtype)
    if len(inverse.initial_indices) != len(forward.final_indices):
        raise parser.error(
            f"the inverse map takes {len(inverse.initial_indices)} indices, the map yields "
            f"{len(forward.final_indices)}",
            inverse_node,
        )
    return IndexMap(forward.initial_indices, forward.final_indices, inverse, node.span)


def _is_none(node: syntax.Node) -> bool:
    return isinstance(node, syntax.Constant) and node.value is None
