"""`@T.prim_func` definitions to `tir.PrimFunc`, and TIR expressions on their own
(the Relax parser uses `parse_tir_expr` for shape dimensions).

The function level owns what no statement does: the decorator's options, the
parameters and their buffers, `T.func_attr`, and the implicit root block that TVM
wraps around block-style bodies.
"""

from __future__ import annotations

from typing import Any

from tvmlite.diagnostics import did_you_mean
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import with_root
from tvmlite.dsl.comments import merged
from tvmlite.dsl.parse.scope import ParseContext, Scope
from tvmlite.dsl.parse.tir.assign import declarations
from tvmlite.dsl.parse.tir.buffer import implied_offset
from tvmlite.dsl.parse.tir.expr import ExprParser
from tvmlite.dsl.parse.tir.stmt import StmtParser
from tvmlite.dsl.verify.tir import verify_prim_func
from tvmlite.dsl.walk import walk
from tvmlite.grammar import syntax

__all__ = ["parse_prim_func", "parse_tir_expr"]

_DECORATOR_FLAGS = ("private", "s_tir", "check_well_formed", "persistent")


def parse_tir_expr(
    node: syntax.Node, scope: Scope, ctx: ParseContext, expected_dtype: str | None = None
) -> tir.PrimExpr:
    """One TIR expression; a bare literal takes `expected_dtype` (Relax shapes pass
    "int64"). A module-level TypeVar first used here is defined in `scope`."""
    parser = ExprParser(ctx, scope)
    expr = parser.expr(node, expected_dtype)
    for name, var in parser.type_var_map.items():
        scope.define(name, var)
    return expr


def decorator_options(fdef: syntax.FunctionDef, ctx: ParseContext) -> dict[str, bool]:
    """The keyword flags of `@T.prim_func(...)` (as written bare: all False but
    `check_well_formed`)."""
    options = dict.fromkeys(_DECORATOR_FLAGS, False)
    options["check_well_formed"] = True
    for deco in fdef.decorators:
        call = deco if isinstance(deco, syntax.Call) else None
        name = syntax.dotted(call.func if call else deco)
        if name != "T.prim_func":
            raise ctx.error(
                f"unsupported decorator on a prim function: {name or 'expression'}", deco
            )
        if call is None:
            continue
        if call.args:
            raise ctx.error("T.prim_func takes only keyword arguments", call.args[0])
        for kw in call.keywords:
            if kw.name not in options:
                hint = did_you_mean(kw.name, options, quote=True)
                raise ctx.error(
                    f"T.prim_func got an unexpected keyword argument '{kw.name}'{hint}", kw
                )
            if not isinstance(kw.value, syntax.Constant) or not isinstance(kw.value.value, bool):
                raise ctx.error(f"{kw.name}= must be True or False", kw.value)
            options[kw.name] = kw.value.value
    return options


def parse_prim_func(fdef: syntax.FunctionDef, ctx: ParseContext) -> tir.PrimFunc:
    """Parse and verify one prim function."""
    options = decorator_options(fdef, ctx)
    parser = StmtParser(ctx, Scope())
    parser.buffers.s_tir = options["s_tir"]
    parser.exprs.push()
    for name in fdef.type_params:
        parser.exprs.define(name, tir.Var(name, "int64", span=fdef.span))
    _predeclare(parser, fdef.body)
    _scan_names(parser, fdef.body)
    params = _parse_params(parser, fdef)
    ret_type = parser.assign.annotation(fdef.returns)[0] if fdef.returns is not None else None
    body = parser.body(fdef.body, fdef.span)
    body = with_root(body, tuple(parser.root_allocs), fdef.span, parser.root_comments)
    buffer_map = tuple((var, buf) for var, buf in parser.handles.items() if buf is not None)
    attrs: list[tuple[str, Any]] = []
    if not options["private"] and "global_symbol" not in dict(parser.func_attrs):
        attrs.append(("global_symbol", fdef.name))
    if options["persistent"]:  # TVM's attribute, which its printer shows in the decorator
        attrs.append((tir.PERSISTENT, True))
    attrs.extend(parser.func_attrs)
    func = tir.PrimFunc(
        tuple(params), buffer_map, body, ret_type, tuple(attrs), options["s_tir"], fdef.span,
        merged(fdef.comments, parser.func_comments),
    )  # fmt: skip
    verify_prim_func(func, ctx, well_formed=ctx.check_well_formed and options["check_well_formed"])
    return func


def _scan_names(parser: StmtParser, body: tuple[syntax.Node, ...]) -> None:
    """One walk over the body for the 0.27 scalar rule (`AssignParser.stored`): the
    names whose `.source` is read, and those assigned more than once anywhere, the only
    ones worth looking for a later assignment of (a flat function of thousands of
    single assignments stays linear)."""
    sources: set[str] = set()
    seen: set[str] = set()
    again: set[str] = set()
    for node in walk(body):
        if isinstance(node, syntax.Attribute) and node.attr == "source":
            if isinstance(node.value, syntax.Name):
                sources.add(node.value.id)
        elif isinstance(node, syntax.Assign | syntax.AnnAssign | syntax.AugAssign):
            targets = node.targets if isinstance(node, syntax.Assign) else (node.target,)
            for target in targets:
                if isinstance(target, syntax.Name):
                    (again if target.id in seen else seen).add(target.id)
    parser.source_names = frozenset(sources)
    parser.assigned_again = frozenset(again)


def _predeclare(parser: StmtParser, body: tuple[syntax.Node, ...]) -> None:
    """Top-level `n = T.int32()` declarations are visible to the signature, so a
    quoted dim `T.Buffer(("n",))` can name a var declared later in the body."""
    for stmt in body:
        if not (isinstance(stmt, syntax.Assign) and len(stmt.targets) == 1):
            continue
        for target, dtype, _ in declarations(stmt.targets[0], stmt.value):
            var = tir.Var(target.id, dtype, span=target.span)
            parser.predeclared[target.id] = var
            parser.exprs.define(target.id, var)


def _parse_params(parser: StmtParser, fdef: syntax.FunctionDef) -> list[tir.Var]:
    """Scalars and handles first, then buffers, so that a buffer's shape can use any
    scalar parameter whatever its position."""
    seen: set[str] = set()
    params: dict[str, tir.Var] = {}
    buffers = []
    for param in fdef.params:
        if param.name in seen:
            raise parser.ctx.error(f"duplicate parameter '{param.name}'", param)
        seen.add(param.name)
        if param.default is not None:
            raise parser.ctx.error("prim function parameters cannot have defaults", param.default)
        ann = param.annotation
        if ann is None:
            raise parser.ctx.error(f"parameter '{param.name}' needs a type annotation", param)
        if isinstance(ann, syntax.Call) and syntax.dotted(ann.func) == "T.Buffer":
            buffers.append((param, ann))
            params[param.name] = tir.Var(f"{param.name}_handle", "handle", span=param.span)
            continue
        dtype, pointee, is_let = parser.assign.annotation(ann)
        if dtype is None or is_let:
            raise parser.ctx.error("a parameter is annotated with T.Buffer(...) or a dtype", ann)
        var = tir.Var(param.name, dtype, pointee, param.span)
        params[param.name] = var
        parser.exprs.define(param.name, var)
        if dtype == "handle":
            parser.handles[var] = None
    for param, ann in buffers:
        named = parser.buffers.buffer_args(ann, ann.args, "T.Buffer")
        buffer = parser.buffers.make_buffer(param.name, named, ann)
        if not parser.classic:
            buffer = implied_offset(buffer, ann)
        parser.handles[params[param.name]] = buffer
        parser.exprs.define(param.name, buffer)
    # buffer_map follows parameter order.
    ordered = {
        params[p.name]: parser.handles[params[p.name]]
        for p in fdef.params
        if params[p.name] in parser.handles
    }
    parser.handles.clear()
    parser.handles.update(ordered)
    return [params[p.name] for p in fdef.params]
