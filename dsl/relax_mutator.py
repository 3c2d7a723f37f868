"""The Relax mutator every graph-level pass builds on, with a binding emitter.

`ExprMutator` walks the same fields as `ExprVisitor` (see `relax_functor.py`)
and rebuilds a node only when a child changed ("nothing changed" is an `is`
check). `var_remap` replaces a var at every use; a var whose definition changes
(its struct info mentions something that was replaced, or `visit_var_def`
returns a new var) is recorded there, so its uses follow.

Emitting: while a binding is visited, `emit(value, name)` (or
`emit_match_cast(value, struct_info, name)`) adds a binding for `value`
*before* it, in the same block (a dataflow var in a dataflow block), and
returns the new var; inside the body of a sequence expression the emitted
bindings form a new block at the end of the sequence. `visit_VarBinding` /
`visit_MatchCast` may return None to drop the binding.
"""

from __future__ import annotations

from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import sinfo_of
from tvmlite.dsl.relax_functor import RelaxFunctor
from tvmlite.dsl.tir_mutator import changed, replace


class ExprMutator(RelaxFunctor):
    """Identity transform over Relax; override `visit_<ClassName>` or the hooks."""

    def __init__(self) -> None:
        self.var_remap: dict[relax.Var, relax.Expr] = {}
        # One list of emitted bindings per open scope (binding block or sequence
        # body), innermost last, with whether it is a dataflow block.
        self._scopes: list[tuple[list[relax.Binding], bool]] = []

    # ------------------------------------------------------------ emitting

    def emit(
        self, value: relax.Expr, name: str, struct_info: relax.StructInfo | None = None
    ) -> relax.Var:
        """Bind `value` to a new var before the binding being visited; returns the var.
        `struct_info` defaults to the value's inferred struct info."""
        if not self._scopes:
            raise TVMLiteError(f"{type(self).__name__}.emit outside a binding block")
        bindings, dataflow = self._scopes[-1]
        cls = relax.DataflowVar if dataflow else relax.Var
        var = cls(name, sinfo_of(value) if struct_info is None else struct_info)
        bindings.append(relax.VarBinding(var, value))
        return var

    def emit_match_cast(
        self, value: relax.Expr, struct_info: relax.StructInfo, name: str
    ) -> relax.Var:
        """Bind `R.match_cast(value, struct_info)` before the binding being visited
        (defining the symbolic vars `struct_info` introduces); returns the var."""
        if not self._scopes:
            raise TVMLiteError(f"{type(self).__name__}.emit_match_cast outside a binding block")
        bindings, dataflow = self._scopes[-1]
        var = (relax.DataflowVar if dataflow else relax.Var)(name, struct_info)
        bindings.append(relax.MatchCast(var, value, struct_info))
        return var

    def emitted(self) -> list[relax.Binding]:
        """The bindings emitted so far before the binding being visited; a pass may
        drop some (a rewrite that gave up after emitting its helpers)."""
        if not self._scopes:
            raise TVMLiteError(f"{type(self).__name__}.emitted outside a binding block")
        return self._scopes[-1][0]

    def emit_binding(self, binding: relax.Binding) -> None:
        """Add an already-built binding before the one being visited."""
        if not self._scopes:
            raise TVMLiteError(f"{type(self).__name__}.emit_binding outside a binding block")
        self._scopes[-1][0].append(binding)

    # ------------------------------------------------------------ hooks

    def visit_var_def(self, var: relax.Var) -> relax.Var:
        """A var being defined; a new struct info gives a new var (of the same class)."""
        sinfo = self.visit_struct_info(var.struct_info)
        if sinfo is var.struct_info:
            return var
        return type(var)(var.name, sinfo, var.span)

    def _define(self, var: relax.Var) -> relax.Var:
        new = self.visit_var_def(var)
        if new is not var:
            self.var_remap[var] = new
        return new

    def visit_prim_expr(self, e: tir.PrimExpr) -> tir.PrimExpr:
        """A TIR expression inside Relax (symbolic dims, prim and shape values)."""
        return e

    def visit_binding_block(self, block: relax.BindingBlock) -> relax.BindingBlock:
        out: list[relax.Binding] = []
        changed = False
        emitted: list[relax.Binding] = []
        self._scopes.append((emitted, block.is_dataflow))
        try:
            for binding in block.bindings:
                new = self.visit_binding(binding)
                if emitted:
                    out.extend(emitted)
                    emitted.clear()
                    changed = True
                if new is not None:
                    out.append(new)
                changed = changed or new is not binding
        finally:
            self._scopes.pop()
        return replace(block, bindings=tuple(out)) if changed else block

    def visit_attr_value(self, value: Any) -> Any:
        if isinstance(value, tir.PrimExpr):
            return self.visit_prim_expr(value)
        if isinstance(value, tuple):
            items = tuple(self.visit_attr_value(item) for item in value)
            return items if changed(items, value) else value
        return value

    def _exprs(self, items: tuple[relax.Expr, ...]) -> tuple[relax.Expr, ...]:
        new = tuple(self.visit_expr(e) for e in items)
        return new if changed(new, items) else items

    def _prim_exprs(self, items: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        new = tuple(self.visit_prim_expr(e) for e in items)
        return new if changed(new, items) else items

    def _struct_infos(self, items: tuple[relax.StructInfo, ...]) -> tuple[relax.StructInfo, ...]:
        new = tuple(self.visit_struct_info(si) for si in items)
        return new if changed(new, items) else items

    # ------------------------------------------------------------ leaves

    def visit_Var(self, e: relax.Var) -> relax.Expr:
        return self.var_remap.get(e, e)

    def visit_DataflowVar(self, e: relax.DataflowVar) -> relax.Expr:
        return self.visit_Var(e)

    def visit_GlobalVar(self, e: relax.GlobalVar) -> relax.Expr:
        return e

    def visit_Op(self, e: relax.Op) -> relax.Expr:
        return e

    def visit_ExternFunc(self, e: relax.ExternFunc) -> relax.Expr:
        if e.struct_info is None:
            return e
        sinfo = self.visit_struct_info(e.struct_info)  # a typed module-level extern
        return e if sinfo is e.struct_info else replace(e, struct_info=sinfo)

    def visit_Constant(self, e: relax.Constant) -> relax.Expr:
        if e.struct_info is None:
            return e
        sinfo = self.visit_struct_info(e.struct_info)  # a distributed constant's placement
        return e if sinfo is e.struct_info else replace(e, struct_info=sinfo)

    def visit_StringImm(self, e: relax.StringImm) -> relax.Expr:
        return e

    def visit_DataTypeImm(self, e: relax.DataTypeImm) -> relax.Expr:
        return e

    # ------------------------------------------------------------ expressions

    def visit_Tuple(self, e: relax.Tuple) -> relax.Expr:
        return replace(e, fields=self._exprs(e.fields))

    def visit_TupleGetItem(self, e: relax.TupleGetItem) -> relax.Expr:
        return replace(e, tuple_value=self.visit_expr(e.tuple_value))

    def visit_ShapeExpr(self, e: relax.ShapeExpr) -> relax.Expr:
        return replace(e, values=self._prim_exprs(e.values))

    def visit_PrimValue(self, e: relax.PrimValue) -> relax.Expr:
        return replace(e, value=self.visit_prim_expr(e.value))

    def visit_Call(self, e: relax.Call) -> relax.Expr:
        return replace(
            e,
            op=self.visit_expr(e.op),
            args=self._exprs(e.args),
            attrs=self.visit_attr_value(e.attrs),
            sinfo_args=self._struct_infos(e.sinfo_args),
        )

    def visit_If(self, e: relax.If) -> relax.Expr:
        return replace(
            e,
            condition=self.visit_expr(e.condition),
            true_branch=self.visit_expr(e.true_branch),
            false_branch=self.visit_expr(e.false_branch),
        )

    def visit_SeqExpr(self, e: relax.SeqExpr) -> relax.Expr:
        blocks = tuple(self.visit_binding_block(b) for b in e.blocks)
        emitted: list[relax.Binding] = []
        self._scopes.append((emitted, False))
        try:
            body = self.visit_expr(e.body)
        finally:
            self._scopes.pop()
        if emitted:
            blocks = (*blocks, relax.BindingBlock(tuple(emitted)))
        elif not changed(blocks, e.blocks):
            blocks = e.blocks
        return replace(e, blocks=blocks, body=body)

    def visit_Function(self, e: relax.Function) -> relax.Expr:
        params = tuple(self._define(p) for p in e.params)
        return replace(
            e,
            params=params if changed(params, e.params) else e.params,
            ret_struct_info=self.visit_struct_info(e.ret_struct_info),
            attrs=self.visit_attr_value(e.attrs),
            body=self.visit_expr(e.body),
        )

    # ------------------------------------------------------------ bindings

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        value = self.visit_expr(b.value)
        return replace(b, value=value, var=self._define(b.var))

    def visit_MatchCast(self, b: relax.MatchCast) -> relax.Binding | None:
        value = self.visit_expr(b.value)
        sinfo = self.visit_struct_info(b.struct_info)
        return replace(b, value=value, struct_info=sinfo, var=self._define(b.var))

    # ------------------------------------------------------------ struct info

    def visit_ObjectStructInfo(self, si: relax.ObjectStructInfo) -> relax.StructInfo:
        return si

    def visit_PrimStructInfo(self, si: relax.PrimStructInfo) -> relax.StructInfo:
        return replace(si, value=None if si.value is None else self.visit_prim_expr(si.value))

    def visit_ShapeStructInfo(self, si: relax.ShapeStructInfo) -> relax.StructInfo:
        return replace(si, values=None if si.values is None else self._prim_exprs(si.values))

    def visit_TensorStructInfo(self, si: relax.TensorStructInfo) -> relax.StructInfo:
        if isinstance(si.shape, relax.Var):
            return replace(si, shape=self.visit_expr(si.shape))
        return replace(si, shape=None if si.shape is None else self._prim_exprs(si.shape))

    visit_DTensorStructInfo = visit_TensorStructInfo  # `replace` keeps mesh and placement
    visit_StringStructInfo = visit_ObjectStructInfo

    def visit_TupleStructInfo(self, si: relax.TupleStructInfo) -> relax.StructInfo:
        return replace(si, fields=self._struct_infos(si.fields))

    def visit_FuncStructInfo(self, si: relax.FuncStructInfo) -> relax.StructInfo:
        params = None if si.params is None else self._struct_infos(si.params)
        return replace(si, params=params, ret=self.visit_struct_info(si.ret))
