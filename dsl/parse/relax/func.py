"""Relax functions (`@R.function`): the signature, then the body's statements:
bindings, `with R.dataflow():` blocks, `R.match_cast`, if/else, `R.func_attr`,
symbolic-variable declarations and the final `return`.

The signature is parsed in the module's first pass (`parse_signature`) and the
body in the second (`parse_body`), by the same object, so the parameters and
the symbolic variables of the signature are the ones the body sees.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.comments import (
    Comments,
    add,
    attached,
    carried,
    loose,
    merged,
    printed_header_off,
    take_head,
)
from tvmlite.dsl.module import TVM027
from tvmlite.dsl.parse.relax.expr import MODULE, RelaxExprParser
from tvmlite.dsl.parse.relax.sinfo import RelaxContext, bool_literal, literal_value
from tvmlite.dsl.parse.scope import bind_call
from tvmlite.dsl.verify.sinfo import compatible, join, sinfo_text
from tvmlite.grammar import syntax

_STATEMENT_NAMES = {
    "For": "for loops",
    "While": "while loops",
    "AugAssign": "augmented assignments (x += ...)",
    "Assert": "assert statements (use R.assert_op)",
    "Break": "break statements",
    "Continue": "continue statements",
    "Import": "imports",
    "ClassDef": "class definitions",
}


class RelaxFunctionParser:
    """Turns one `@R.function` def into a `relax.Function`."""

    def __init__(self, ctx: RelaxContext, fdef: syntax.FunctionDef) -> None:
        self.ctx = ctx
        self.expr = RelaxExprParser(ctx)  # expressions, and the bindings they emit
        self.types = self.expr.types  # annotations; the function's names
        self.fdef = fdef
        self.params: list[relax.Var] = []
        self.ret: relax.StructInfo | None = None
        self.is_pure, self.is_private = True, False
        self.blocks: list[relax.BindingBlock] = []
        self.attrs: dict[str, Any] = {}
        self.df_outputs: dict[int, str] = {}
        self.df_bound: dict[str, relax.Var] = {}
        self.depth = 0  # > 0 inside if branches
        self.nested = False  # a local function has no global symbol
        self.node: syntax.Node | None = None  # the statement being parsed
        self.func_comments: Comments | None = None  # R.func_attr's
        self.check_well_formed = True  # the decorator's keyword

    # ------------------------------------------------------------ signature

    def decorator(self) -> None:
        decos = self.fdef.decorators
        if len(decos) != 1:
            raise self.ctx.error(
                f"function {self.fdef.name} takes exactly one decorator",
                decos[-1] if decos else self.fdef,
            )
        deco = decos[0]
        if isinstance(deco, syntax.Call):
            params = ("pure", "private", "check_well_formed")
            args = bind_call(self.ctx, deco, "R.function", params)
            if "pure" in args:
                self.is_pure = bool_literal(self.ctx, args["pure"], "pure")
            if "private" in args:
                self.is_private = bool_literal(self.ctx, args["private"], "private")
            if "check_well_formed" in args:
                flag = bool_literal(self.ctx, args["check_well_formed"], "check_well_formed")
                self.check_well_formed = flag

    def parse_signature(self) -> relax.FuncStructInfo:
        self.decorator()
        for name in self.fdef.type_params:
            self.types.sym_var(name, span=self.fdef.span)
        seen: set[str] = set()
        for param in self.fdef.params:
            if param.annotation is None:
                raise self.ctx.error(
                    f"parameter {param.name} needs a struct-info annotation", param
                )
            if param.default is not None:
                raise self.ctx.error(
                    "parameters of a Relax function take no default", param.default
                )
            if param.name in seen:
                raise self.ctx.error(f"duplicate parameter {param.name}", param)
            seen.add(param.name)
            sinfo = self.types.sinfo(param.annotation)
            if self.ctx.dialect == TVM027 and _is_int_scalar(sinfo):
                # TVM 0.27: the parameter is itself the symbolic var that later
                # annotations name (`n: T.int64, x: R.Tensor((n + 1,))`)
                value = self.types.sym_var(param.name, sinfo.dtype, span=param.span)
                sinfo = relax.PrimStructInfo(sinfo.dtype, value, span=sinfo.span)
            var = relax.Var(param.name, sinfo, span=param.span)
            self.params.append(var)
            self.types.vars.define(param.name, var)
        if self.fdef.returns is not None:
            self.ret = self.types.sinfo(self.fdef.returns)
        params = tuple(p.struct_info for p in self.params)
        return relax.FuncStructInfo(params, self.ret or relax.ObjectStructInfo(), self.is_pure)

    # ------------------------------------------------------------ body

    def parse_body(self) -> relax.Function:
        body = self.fdef.body
        pending: tuple[str, ...] = ()
        if body and isinstance(body[0], syntax.ExprStmt) and _is_docstring(body[0]):
            pending = loose(body[0].comments)
            body = body[1:]
        if not body or not isinstance(body[-1], syntax.Return):
            where = body[-1] if body else self.fdef
            raise self.ctx.error("a Relax function must end with a return statement", where)
        self.types.vars.push()
        pending = self.suite(body[:-1], pending)
        result = self._return(body[-1])
        self.flush()
        self.types.vars.pop()
        seq = relax.SeqExpr(
            tuple(self.blocks), result, body[-1].span, carried(pending, body[-1].comments)
        )
        body_sinfo = self.expr.sinfo_of(result)
        attrs = dict(self.attrs)
        if self.is_private and "global_symbol" in attrs:  # TVM's WellFormed rule too
            raise self.ctx.error(
                f"private function {self.fdef.name} has a global_symbol: a private "
                "function has none (drop private=True to make it public)",
                self.fdef,
            )
        if not (self.is_private or self.nested) and "global_symbol" not in attrs:
            attrs["global_symbol"] = self.fdef.name
        comments = merged(self.fdef.comments, self.func_comments)
        return relax.Function(
            tuple(self.params),
            seq,
            # an annotation the body does not fit stays (as in TVM); a build refuses it
            self.ret if self.ret is not None else body_sinfo,
            self.is_pure,
            tuple(attrs.items()),
            self.fdef.span,
            comments,
        )

    def flush(self) -> None:
        if self.expr.bindings:
            self.blocks.append(relax.BindingBlock(tuple(self.expr.bindings), False))
            self.expr.bindings = []

    def _return(self, stmt: syntax.Return) -> relax.Expr:
        if stmt.value is None:
            raise self.ctx.error("return needs a value in a Relax function", stmt)
        return self.expr.normalize(self.expr.rx(stmt.value), stmt.span)

    def suite(self, stmts: Any, pending: tuple[str, ...] = ()) -> tuple[str, ...]:
        """Parse a body's statements, each one's comments on the binding or block it
        became. Comments of statements that became neither (a declaration, `pass`)
        go to the next one; those left at the end are returned."""
        for stmt in stmts:
            bindings, blocks = len(self.expr.bindings), len(self.blocks)
            self.statement(stmt)
            comments = stmt.comments
            if comments is None and not pending:
                continue
            comments, pending = carried(pending, comments), ()
            if len(self.blocks) > blocks and self.blocks[-1].is_dataflow:
                self.blocks[-1] = attached(self.blocks[-1], comments)
            elif len(self.expr.bindings) > bindings:
                self.expr.bindings[-1] = attached(self.expr.bindings[-1], comments)
            else:
                pending = loose(comments)
        return pending

    def statement(self, stmt: syntax.Node) -> None:
        handler = self._STATEMENTS.get(type(stmt))
        if handler is None:
            what = _STATEMENT_NAMES.get(type(stmt).__name__, type(stmt).__name__)
            raise self.ctx.error(f"{what} are not supported in a Relax function", stmt)
        self.ctx.nest(stmt, "statement")
        self.node = stmt
        handler(self, stmt)
        self.ctx.depth -= 1

    # ------------------------------------------------------------ bindings

    def _assign(self, stmt: syntax.Assign) -> None:
        if len(stmt.targets) != 1:
            raise self.ctx.error("chained assignment (a = b = v) is not supported", stmt)
        self.bind(stmt.targets[0], None, stmt.value, stmt)

    def _ann_assign(self, stmt: syntax.AnnAssign) -> None:
        if stmt.value is None:
            self._declare_free(stmt)
            return
        self.bind(stmt.target, stmt.annotation, stmt.value, stmt)

    def _declare_free(self, stmt: syntax.AnnAssign) -> None:
        """`gv: R.Tuple` alone: TVM prints a var that nothing binds (ill-formed IR)
        as such a declaration where it is first used. It parses back to that free
        var; `lower`/`build` refuse its use."""
        if not isinstance(stmt.target, syntax.Name):
            raise self.ctx.error("a Relax declaration (x: T) needs a single name", stmt.target)
        var = relax.Var(stmt.target.id, self.types.sinfo(stmt.annotation), span=stmt.target.span)
        self.types.vars.define(stmt.target.id, var)

    def bind(
        self,
        target: syntax.Node,
        ann: syntax.Node | None,
        value: syntax.Node,
        stmt: syntax.Node,
    ) -> None:
        if isinstance(target, syntax.Tuple):
            raise self.ctx.error(
                "tuple unpacking is not supported; bind the tuple and index it (t[0])", target
            )
        if not isinstance(target, syntax.Name):
            raise self.ctx.error("the target of a Relax binding must be a name", target)
        callee = syntax.dotted(value.func) if isinstance(value, syntax.Call) else None
        if callee and callee.startswith("T.") and dt.is_valid(callee[2:]) and not value.args:
            self._declare_sym(target, callee[2:], value)
            return
        is_module = isinstance(value, syntax.Name) and value.id == self.ctx.module_name
        if is_module and self.types.vars.lookup(value.id) is None:
            self.types.vars.define(target.id, MODULE)
            self.func_comments = add(self.func_comments, "cls", take_head(self.node))
            return
        if callee == "R.match_cast":
            self._match_cast(target, ann, value, stmt)
            return
        self.expr.annotated = value if ann is not None else None
        expr = self.expr.rx(value)
        self.expr.annotated = None
        if isinstance(expr, relax.Tuple):
            expr = self.expr.normalize(expr, value.span)
        sinfo = self.expr.sinfo_of(expr)
        if ann is None and self._drops_distribution(expr, sinfo):
            callee = syntax.dotted(value.func) if isinstance(value, syntax.Call) else None
            callee = callee or "this call"
            raise self.ctx.error(
                f"{callee} on distributed tensors needs the binding's R.DTensor "
                "annotation (tvmlite does not propagate shardings)",
                value,
            )
        if ann is not None:
            # Kept even where the value disagrees, as TVM's parser keeps it (its
            # well-formedness check refuses it, as lower/build do here).
            sinfo = self.types.sinfo(ann)
            expr = _typed_literal(expr, value, sinfo)
            if self.ctx.dialect == TVM027 and _is_int_scalar(sinfo) and _is_scalar_var(expr):
                # `alias: T.int64 = n`: in 0.27 the bound var is itself a TIR scalar
                # that arithmetic uses (`alias + 1`), as a scalar parameter is
                scalar = tir.Var(target.id, sinfo.dtype, span=target.span)
                self.types.sym.define(target.id, scalar)
                sinfo = relax.PrimStructInfo(sinfo.dtype, scalar, span=sinfo.span)
        self.define(target, sinfo, expr, stmt)

    def _drops_distribution(self, expr: relax.Expr, sinfo: relax.StructInfo) -> bool:
        """An operator over a distributed tensor whose result is inferred as a plain one."""
        return (
            isinstance(expr, relax.Call)
            and type(sinfo) is relax.TensorStructInfo
            and any(isinstance(self.expr.sinfo_of(a), relax.DTensorStructInfo) for a in expr.args)
        )

    def define(
        self, target: syntax.Name, sinfo: relax.StructInfo, expr: relax.Expr, stmt: syntax.Node
    ) -> relax.Var:
        dataflow = self.expr.in_dataflow and self.df_outputs.get(id(stmt)) != target.id
        var = self.expr.new_var(target.id, sinfo, target.span, dataflow)
        self.expr.take_fresh_name()
        self.expr.bindings.append(relax.VarBinding(var, expr, span=stmt.span))
        self.types.vars.define(target.id, var)
        if self.expr.in_dataflow:
            self.df_bound[target.id] = var
        return var

    def _declare_sym(self, target: syntax.Name, dtype: str, call: syntax.Call) -> None:
        """`n = T.int64()`: names a symbolic variable (the signature's, if it has one)."""
        for kw in call.keywords:
            if kw.name != "is_size_var":
                raise self.ctx.error(f"T.{dtype}() got an unexpected keyword argument '{kw.name}'",
                                     kw)  # fmt: skip
        self.func_comments = add(self.func_comments, f"decl:{target.id}", take_head(self.node))
        existing = self.types.sym.lookup(target.id)
        if isinstance(existing, tir.Var) and existing.dtype == dtype:
            return
        self.types.sym.define(target.id, tir.Var(target.id, dtype, span=target.span))

    def _match_cast(
        self, target: syntax.Name, ann: syntax.Node | None, call: syntax.Call, stmt: syntax.Node
    ) -> None:
        args = bind_call(self.ctx, call, "R.match_cast", ("value", "struct_info"), required=2)
        value = self.expr.arg(args["value"])
        sinfo = self.types.sinfo(args["struct_info"])
        if ann is not None:
            annotated = self.types.sinfo(ann)
            if not compatible(annotated, sinfo):
                raise self.ctx.error(
                    f"annotation {sinfo_text(annotated)} does not match the cast to "
                    f"{sinfo_text(sinfo)}",
                    ann,
                )
        dataflow = self.expr.in_dataflow and self.df_outputs.get(id(stmt)) != target.id
        var = self.expr.new_var(target.id, sinfo, target.span, dataflow)
        self.expr.take_fresh_name()
        self.expr.bindings.append(relax.MatchCast(var, value, sinfo, span=stmt.span))
        self.types.vars.define(target.id, var)
        if self.expr.in_dataflow:
            self.df_bound[target.id] = var

    # ------------------------------------------------------------ statements

    def _expr_stmt(self, stmt: syntax.ExprStmt) -> None:
        value = stmt.value
        if _is_docstring(stmt):
            return
        if not isinstance(value, syntax.Call):
            raise self.ctx.error("this expression statement has no effect", stmt)
        name = syntax.dotted(value.func)
        if name == "R.func_attr":
            self._func_attr(value)
            return
        if name == "R.output":
            raise self.ctx.error(
                "R.output(...) belongs at the end of a with R.dataflow(): block", value
            )
        expr = self.expr.rx(value)
        if not isinstance(expr, (relax.Call, relax.Tuple)):  # R.tuple() binds the unit value
            raise self.ctx.error("this expression statement has no effect", stmt)
        self.expr.emit_fresh(expr, stmt.span)

    def _func_attr(self, call: syntax.Call) -> None:
        if self.expr.in_dataflow or self.depth:
            raise self.ctx.error("R.func_attr belongs at the top level of the function", call)
        args = bind_call(self.ctx, call, "R.func_attr", ("attrs",), required=1)
        if not isinstance(args["attrs"], syntax.Dict):
            raise self.ctx.error("R.func_attr takes a dict", args["attrs"])
        attrs = literal_value(args["attrs"], self.ctx)
        for key, knode in zip(attrs, args["attrs"].keys, strict=False):
            if not isinstance(key, str):
                raise self.ctx.error("function attribute names must be strings", knode)
        self.attrs.update(attrs)
        self.func_comments = add(self.func_comments, "func_attr", take_head(self.node))

    def _pass(self, stmt: syntax.Pass) -> None:
        return

    def _nested_def(self, stmt: syntax.FunctionDef) -> None:
        """A local function (closure): it sees the enclosing names, and its own name
        is bound before its body so that it can call itself. The comments above and
        after it go on its binding (the `suite` attaches the statement's), the others
        (after the decorator, in the body) on the function."""
        outer = stmt.comments
        stmt.comments = None if outer is None else outer.without("", "after")
        inner = RelaxFunctionParser(self.ctx, stmt)
        inner.nested = True
        inner.types.vars, inner.types.sym = self.types.vars, self.types.sym
        self.types.vars.push()
        self.types.sym.push()
        try:
            sig = inner.parse_signature()
            dataflow = self.expr.in_dataflow and self.df_outputs.get(id(stmt)) != stmt.name
            var = self.expr.new_var(stmt.name, sig, stmt.span, dataflow)
            self.types.vars.define(stmt.name, var)
            func = inner.parse_body()
        finally:
            self.types.vars.pop()
            self.types.sym.pop()
        self.expr.take_fresh_name()
        self.expr.bindings.append(relax.VarBinding(var, func, span=stmt.span))
        roles = () if outer is None else outer.roles
        stmt.comments = Comments(
            tuple(
                (k, printed_header_off(r) if k == "" else r) for k, r in roles if k in ("", "after")
            )
        )
        self.types.vars.define(stmt.name, var)
        if self.expr.in_dataflow:
            self.df_bound[stmt.name] = var

    def _return_inside(self, stmt: syntax.Return) -> None:
        raise self.ctx.error("return must be the last statement of the function", stmt)

    def _with(self, stmt: syntax.With) -> None:
        item = stmt.items[0] if len(stmt.items) == 1 else None
        ctx_call = item.context if item else None
        if (
            item is None
            or item.target is not None
            or not isinstance(ctx_call, syntax.Call)
            or syntax.dotted(ctx_call.func) != "R.dataflow"
        ):
            raise self.ctx.error("only `with R.dataflow():` is supported in a Relax function", stmt)
        if ctx_call.args or ctx_call.keywords:
            raise self.ctx.error("R.dataflow() takes no arguments", ctx_call)
        if self.expr.in_dataflow:
            raise self.ctx.error("a dataflow block cannot be nested in another one", stmt)
        body = list(stmt.body)
        output = body[-1] if _is_output(body[-1]) else None
        outputs = self._outputs(body)
        self.flush()
        self.expr.in_dataflow, self.df_bound = True, {}
        self.types.vars.push()
        pending = self.suite(body)
        out_vars = [self._output_var(node) for node in outputs.values()]
        self.types.vars.pop()
        self.expr.in_dataflow = False
        for name, var in self.df_bound.items():
            if isinstance(var, relax.DataflowVar):
                self.expr.closed_dataflow[name] = stmt.span
        for node, var in zip(outputs.values(), out_vars, strict=False):
            self.types.vars.define(node.id, var)
            self.expr.closed_dataflow.pop(node.id, None)
        if self.expr.bindings:
            comments = _output_comments(carried(pending, output and output.comments))
            block = relax.BindingBlock(tuple(self.expr.bindings), True, stmt.span, comments)
            self.blocks.append(block)
            self.expr.bindings = []

    def _outputs(self, body: list[syntax.Node]) -> dict[str, syntax.Name]:
        """The names listed in the block's final `R.output(...)`; records, for each,
        the statement whose binding is the one that leaves the block."""
        outputs: dict[str, syntax.Name] = {}
        for i, s in enumerate(body):
            if not _is_output(s):
                continue
            if i != len(body) - 1:
                raise self.ctx.error("R.output(...) must be the last statement of the block", s)
            call = s.value  # type: ignore[attr-defined]
            if call.keywords:
                raise self.ctx.error("R.output takes no keyword arguments", call.keywords[0])
            for a in call.args:
                if not isinstance(a, syntax.Name):
                    raise self.ctx.error("R.output takes variable names", a)
                outputs[a.id] = a
            body.pop()
        last: dict[str, syntax.Node] = {}
        for s in body:
            target = _target(s)
            name = s.name if isinstance(s, syntax.FunctionDef) else getattr(target, "id", None)
            if isinstance(name, str) and name in outputs:  # a binding or a local function
                last[name] = s
        for name, s in last.items():
            self.df_outputs[id(s)] = name
        return outputs

    def _output_var(self, node: syntax.Name) -> relax.Var:
        found = self.df_bound.get(node.id)
        if found is None or isinstance(found, relax.DataflowVar):
            if self.types.vars.lookup(node.id) is None and self.types.sym.lookup(node.id) is None:
                raise self.ctx.error(f"R.output of undefined name {node.id}", node)
            raise self.ctx.error(f"{node.id} is not bound in this dataflow block", node)
        return found

    def _if(self, stmt: syntax.If) -> None:
        if self.expr.in_dataflow:
            raise self.ctx.error("if/else is not allowed inside a dataflow block", stmt)
        if not stmt.orelse:
            raise self.ctx.error("a Relax if needs an else branch", stmt)
        cond = self.expr.arg(stmt.test)
        cond_sinfo = self.expr.sinfo_of(cond)
        if not isinstance(
            cond_sinfo, (relax.TensorStructInfo, relax.PrimStructInfo, relax.ObjectStructInfo)
        ):
            raise self.ctx.error(
                f"the condition must be a bool scalar, not {sinfo_text(cond_sinfo)}", stmt.test
            )
        then_name, then_seq, then_sinfo, then_ann = self._branch(stmt.body, stmt)
        else_name, else_seq, else_sinfo, else_ann = self._branch(stmt.orelse, stmt)
        if then_name.id != else_name.id:
            raise self.ctx.error(
                f"both branches must end by binding the same name ({then_name.id} and "
                f"{else_name.id})",
                else_name,
            )
        sinfo = (
            then_sinfo if then_ann else (else_sinfo if else_ann else join(then_sinfo, else_sinfo))
        )
        expr = relax.If(cond, then_seq, else_seq, span=stmt.span)
        self.define(then_name, sinfo, expr, stmt)

    def _branch(
        self, body: tuple[syntax.Node, ...], stmt: syntax.If
    ) -> tuple[syntax.Name, relax.SeqExpr, relax.StructInfo, bool]:
        """A branch is a SeqExpr whose result is the value of its last binding."""
        last = body[-1]
        target = _target(last)
        if not isinstance(target, syntax.Name):
            raise self.ctx.error(
                "each branch of a Relax if must end with a binding (r = ...)", last
            )
        saved_bindings, saved_blocks = self.expr.bindings, self.blocks
        self.expr.bindings, self.blocks = [], []
        self.types.vars.push()
        self.depth += 1
        self.suite(body)  # ends with a binding, which takes what is left
        self.depth -= 1
        self.types.vars.pop()
        final = self.expr.bindings[-1] if self.expr.bindings else None
        if not isinstance(final, relax.VarBinding) or final.var.name != target.id:
            raise self.ctx.error("each branch of a Relax if must end with a plain binding", last)
        self.expr.bindings.pop()
        self.flush()
        seq = relax.SeqExpr(tuple(self.blocks), final.value, last.span, final.comments)
        self.expr.bindings, self.blocks = saved_bindings, saved_blocks
        annotated = isinstance(last, syntax.AnnAssign)
        return target, seq, final.var.struct_info, annotated

    _STATEMENTS: ClassVar[dict[type, Callable[..., None]]] = {
        syntax.Assign: _assign,
        syntax.AnnAssign: _ann_assign,
        syntax.ExprStmt: _expr_stmt,
        syntax.With: _with,
        syntax.If: _if,
        syntax.Pass: _pass,
        syntax.FunctionDef: _nested_def,
        syntax.Return: _return_inside,
    }


def _output_comments(comments: Comments | None) -> Comments | None:
    """The comments of `R.output(...)`, as roles of its dataflow block."""
    if comments is None:
        return None
    return Comments(
        tuple((f"output.{role}" if role else "output", r) for role, r in comments.roles)
    )


def _target(stmt: syntax.Node) -> syntax.Node | None:
    if isinstance(stmt, syntax.AnnAssign):
        return stmt.target
    if isinstance(stmt, syntax.Assign) and len(stmt.targets) == 1:
        return stmt.targets[0]
    return None


def _is_docstring(stmt: syntax.Node) -> bool:
    return (
        isinstance(stmt, syntax.ExprStmt)
        and isinstance(stmt.value, syntax.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_output(stmt: syntax.Node) -> bool:
    return (
        isinstance(stmt, syntax.ExprStmt)
        and isinstance(stmt.value, syntax.Call)
        and syntax.dotted(stmt.value.func) == "R.output"
    )


def _typed_literal(expr: relax.Expr, node: syntax.Node, sinfo: relax.StructInfo) -> relax.Expr:
    """`x: T.int32 = 2`: a bare number takes the annotated scalar dtype (TVM converts
    the literal to the annotation's type)."""
    if not (
        isinstance(node, syntax.Constant)
        and isinstance(expr, relax.PrimValue)
        and isinstance(sinfo, relax.PrimStructInfo)
        and sinfo.value is None
        and sinfo.dtype != expr.value.dtype
    ):
        return expr
    literal = node.value
    if isinstance(literal, bool) or not isinstance(literal, (int, float)):
        return expr
    if isinstance(literal, int) and dt.is_int(sinfo.dtype):
        return relax.PrimValue(tir.IntImm(sinfo.dtype, literal), span=expr.span)
    if dt.is_float(sinfo.dtype):
        return relax.PrimValue(tir.FloatImm(sinfo.dtype, float(literal)), span=expr.span)
    return expr


def _is_scalar_var(expr: relax.Expr) -> bool:
    """A scalar var or TIR arithmetic (`n`, `alias + 1`): what a 0.27 binding of a
    scalar makes a TIR var of."""
    if isinstance(expr, relax.PrimValue):
        return not isinstance(expr.value, tir.IntImm | tir.FloatImm)
    return isinstance(expr, relax.Var) and isinstance(expr.struct_info, relax.PrimStructInfo)


def _is_int_scalar(sinfo: relax.StructInfo) -> bool:
    return (
        isinstance(sinfo, relax.PrimStructInfo) and sinfo.value is None and dt.is_int(sinfo.dtype)
    )
