"""Relax functions as TVMScript text: signature, `R.func_attr`, binding blocks,
dataflow regions, `if`/`else` and nested functions (TVM's `function.cc`,
`binding.cc`, `region.cc`).

The order in which things are printed matters and follows TVM: the return
annotation before the parameters (so classic `n = T.int64()` lines come in that
order), the right-hand side of a binding before its annotation and its name.
"""

from __future__ import annotations

from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.comments import Comments
from tvmlite.printer.comments import after_lines, noted, role, with_comments
from tvmlite.printer.context import INDENT, PrintContext
from tvmlite.printer.relax_expr import HIDDEN_ANNOTATION_CALLS, FunctionFrame, RelaxExprPrinter


class RelaxPrinter:
    """Prints Relax functions of one module; names come from the shared NameTable.
    Holds the expression printer (`exprs`: expressions, struct info, attribute
    values, and the frame of the function being printed)."""

    def __init__(self, ctx: PrintContext) -> None:
        self.ctx = ctx
        self.names = ctx.names
        self.exprs = RelaxExprPrinter(ctx)

    def function(self, name: str, func: relax.Function) -> list[str]:
        """A top-level function (module member or lone function), at indent 0."""
        self.exprs.frame = FunctionFrame(func_vars=set(), comments=func.comments)
        return self._function(name, func, top_level=True)

    def _function(self, name: str, func: relax.Function, top_level: bool) -> list[str]:
        outer_prelude = self.exprs.frame.prelude
        own_prelude = outer_prelude if top_level else []
        self.names.push()
        if top_level:
            self.exprs.frame.depth = self.names.depth
        try:
            for param in func.params:
                if self._names_its_value(param):  # before any annotation names the var
                    self.names.define(param, param.name or "v")
                    self.names.share(param.struct_info.value, param)  # type: ignore[union-attr]
            ret = self.exprs.sinfo(func.ret_struct_info)
            params = []
            for param in func.params:
                ann = self.exprs.sinfo(param.struct_info)
                params.append(f"{self.names.define(param, param.name or 'v')}: {ann}")
            self.exprs.frame.func_vars = None
            attrs = self._func_attrs(name, func, top_level)
            written = role(func.comments, "func_attr")
            if attrs:
                own_prelude.extend(noted(f"R.func_attr({self.exprs.value(attrs)})", written))
            elif written is not None:
                own_prelude.extend(written.lines())  # its attributes print elsewhere
            body = self._seq_expr_lines(func.body, self._return)
            if top_level:
                own_prelude.extend(self.exprs.frame.unprinted())
        finally:
            self.names.pop()
        lines = noted(self._decorator(func, top_level), role(func.comments))
        lines += noted(f"def {name}({', '.join(params)}) -> {ret}:", role(func.comments, "def"))
        lines.extend(indent(own_prelude + body))
        return lines + after_lines(func.comments)

    def _names_its_value(self, param: relax.Var) -> bool:
        """`n: T.int64`: in 0.27 a scalar parameter is itself the symbolic var that
        later annotations use (`R.Tensor((n + 1,))`), and so is a scalar binding
        (`alias: T.int64 = n`) for the arithmetic after it: that var prints as
        the Relax var."""
        si = param.struct_info
        return (
            not self.ctx.classic
            and isinstance(si, relax.PrimStructInfo)
            and isinstance(si.value, tir.Var)
            and self.names.get(si.value) is None
        )

    def _func_attrs(self, name: str, func: relax.Function, top_level: bool) -> dict[str, Any]:
        """Attrs minus a `global_symbol` equal to the printed name (implied by the
        decorator); `tir.`/`tirx.` key prefixes spelled for the dialect."""
        attrs = {_attr_key(key, self.ctx.classic): value for key, value in func.attrs}
        if top_level and attrs.get("global_symbol") == name:
            del attrs["global_symbol"]
        return attrs

    def _decorator(self, func: relax.Function, top_level: bool) -> str:
        kwargs = []
        if not func.is_pure:
            kwargs.append("pure=False")
        if top_level and func.attr("global_symbol") is None:
            kwargs.append("private=True")
        return f"@R.function({', '.join(kwargs)})" if kwargs else "@R.function"

    # ------------------------------------------------------------ regions

    def _seq_expr_lines(self, seq: relax.SeqExpr, last: Any) -> list[str]:
        """The blocks of `seq` in a fresh naming frame, then `last(seq.body)`: a
        `return` for a function body, an assignment for an `if` branch."""
        self.names.push()
        try:
            lines = []
            for block in seq.blocks:
                lines.extend(self._block(block))
            result = with_comments([last(seq.body)], seq.comments)
            lines.extend(self.exprs.take_free_decls() + result)
        finally:
            self.names.pop()
        return lines

    def _return(self, body: relax.Expr) -> str:
        return f"return {self.exprs.expr(body)}"

    def _block(self, block: relax.BindingBlock) -> list[str]:
        lines: list[str] = []
        outputs = []
        for binding in block.bindings:
            binding_lines = with_comments(self._binding(binding), binding.comments)
            lines.extend(self.exprs.take_free_decls() + binding_lines)
            if block.is_dataflow and not isinstance(binding.var, relax.DataflowVar):
                outputs.append(self.exprs.expr(binding.var))
        if not block.is_dataflow:
            return lines
        notes = block.comments
        lines.extend(noted(f"R.output({', '.join(outputs)})", role(notes, "output")))
        written = role(notes, "output.after")
        lines.extend(written.lines() if written is not None else ())
        return with_comments(["with R.dataflow():", *indent(lines)], notes)

    # ------------------------------------------------------------ bindings

    def _binding(self, binding: relax.Binding) -> list[str]:
        if isinstance(binding, relax.MatchCast):
            return self._match_cast(binding)
        var, value = binding.var, binding.value
        if isinstance(value, relax.If):
            ann = self._annotation(var, value)
            return self._if(value, self._define(var), ann, binding.comments)
        if isinstance(value, relax.Function):
            return self._nested_function(self._define(var), value)
        if _is_void(var.struct_info):
            return [self.exprs.expr(value)]
        rhs = self.rhs(value)
        ann = self._annotation(var, value)
        return [assign(self._define(var), ann, rhs)]

    def _match_cast(self, binding: relax.MatchCast) -> list[str]:
        ann = self.exprs.sinfo(binding.var.struct_info)
        value, sinfo = self.exprs.expr(binding.value), self.exprs.sinfo(binding.struct_info)
        rhs = f"R.match_cast({value}, {sinfo})"
        return [assign(self._define(binding.var), ann, rhs)]

    def _annotation(self, var: relax.Var, value: relax.Expr) -> str | None:
        """Every binding is annotated, except a call_tir / call_dps_packed whose
        output struct info already says it; none with `show_all_ty=False`."""
        if not self.ctx.options.show_all_ty or (
            isinstance(value, relax.Call)
            and isinstance(value.op, relax.Op)
            and value.op.name in HIDDEN_ANNOTATION_CALLS
            and value.sinfo_args
            and value.sinfo_args[0] == var.struct_info
        ):
            return None
        return self.exprs.sinfo(var.struct_info)

    def _define(self, var: relax.Var) -> str:
        name = self.names.define(var, var.name or "v")
        if self._names_its_value(var):  # `alias: T.int64 = n`, as a scalar parameter
            self.names.share(var.struct_info.value, var)  # type: ignore[union-attr]
        return name

    def rhs(self, value: relax.Expr) -> str:
        """A tuple of two or more fields prints without parentheses after `=`."""
        if isinstance(value, relax.Tuple) and len(value.fields) > 1:
            return ", ".join(self.exprs.expr(f) for f in value.fields)
        return self.exprs.expr(value)

    def _if(self, if_: relax.If, lhs: str, ann: str | None, comments: Comments | None) -> list[str]:
        """Both branches end by assigning the bound var (`r: ann = value`)."""
        cond = self.exprs.expr(if_.condition)
        lines = [f"if {cond}:"]
        for branch, keyword in ((if_.true_branch, None), (if_.false_branch, "else:")):
            if keyword:
                lines.extend(noted(keyword, role(comments, "else")))
            branch_lines = self._seq_expr_lines(branch, _BranchResult(self, lhs, ann))
            lines.extend(indent(branch_lines))
        return lines

    def _nested_function(self, name: str, func: relax.Function) -> list[str]:
        """A local function: TVM repeats the header comments above it (then a
        whitespace-only line; never the `ir` one), a blank line follows it, and it
        is never private."""
        outer_vars = self.exprs.frame.func_vars
        self.exprs.frame.func_vars = set()
        try:
            lines = self._function(name, func, top_level=False)
        finally:
            self.exprs.frame.func_vars = outer_vars
        header = self.ctx.header(uses_ir=False, uses_relax=True)
        header = [line for line in header if "TypeVar" not in line]
        return [*header, *lines, ""]


class _BranchResult:
    """The last statement of an `if` branch: assigns the branch value to the var
    bound to the whole `if`."""

    def __init__(self, printer: RelaxPrinter, lhs: str, ann: str | None) -> None:
        self.printer, self.lhs, self.ann = printer, lhs, ann

    def __call__(self, body: relax.Expr) -> str:
        return assign(self.lhs, self.ann, self.printer.rhs(body))


def assign(lhs: str, ann: str | None, rhs: str) -> str:
    return f"{lhs}: {ann} = {rhs}" if ann is not None else f"{lhs} = {rhs}"


def indent(lines: list[str]) -> list[str]:
    """Every line, blank ones included (TVM indents the empty header comment too)."""
    return [INDENT + line for line in lines]


def _is_void(si: relax.StructInfo) -> bool:
    return isinstance(si, relax.TupleStructInfo) and not si.fields


def _attr_key(key: str, classic: bool) -> str:
    """Function attr keys are stored as written; print the dialect's prefix."""
    if classic and key.startswith("tirx."):
        return "tir." + key[len("tirx.") :]
    if not classic and key.startswith("tir."):
        return "tirx." + key[len("tir.") :]
    return key
