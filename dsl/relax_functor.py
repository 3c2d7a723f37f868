"""Dispatch over Relax nodes, and the read-only visitor every Relax analysis and
pass builds on.

`RelaxFunctor` maps a node's class to the subclass's `visit_<ClassName>` method
for expressions, bindings and struct info; the tables are built once per class
(see `tir_functor.py`, whose conventions this follows).

`ExprVisitor` visits every field: sequence expressions, binding blocks, var
bindings and match_casts, `If`, calls (callee, arguments, attribute values,
`sinfo_args`), tuples and their items, shape and prim values, functions, and
struct info wherever it holds expressions (a tensor's shape var, symbolic dims).
A var's *definition* (binding target, function parameter) goes to
`visit_var_def`, which visits its struct info; a use goes to `visit_Var` (or
`visit_DataflowVar`, which defaults to it). TIR expressions inside Relax (dims,
`R.prim_value`, `R.shape`) go to `visit_prim_expr`, which does nothing by
default: a pass that cares about symbolic vars overrides it, usually with
`dsl.analysis`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.tir_functor import Table, dispatch_table

EXPR_NODES: tuple[type[relax.Expr], ...] = (
    relax.Var,
    relax.DataflowVar,
    relax.GlobalVar,
    relax.Op,
    relax.ExternFunc,
    relax.Constant,
    relax.Tuple,
    relax.TupleGetItem,
    relax.ShapeExpr,
    relax.PrimValue,
    relax.StringImm,
    relax.DataTypeImm,
    relax.Call,
    relax.If,
    relax.SeqExpr,
    relax.Function,
)
BINDING_NODES: tuple[type, ...] = (relax.VarBinding, relax.MatchCast)
STRUCT_INFO_NODES: tuple[type[relax.StructInfo], ...] = (
    relax.ObjectStructInfo,
    relax.StringStructInfo,
    relax.PrimStructInfo,
    relax.ShapeStructInfo,
    relax.TensorStructInfo,
    relax.DTensorStructInfo,
    relax.TupleStructInfo,
    relax.FuncStructInfo,
)


class RelaxFunctor:
    """Dispatch only: `visit_expr`, `visit_binding` and `visit_struct_info` call
    `visit_<ClassName>`."""

    _expr_table: ClassVar[Table] = {}
    _binding_table: ClassVar[Table] = {}
    _sinfo_table: ClassVar[Table] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._expr_table = dispatch_table(cls, EXPR_NODES)
        cls._binding_table = dispatch_table(cls, BINDING_NODES)
        cls._sinfo_table = dispatch_table(cls, STRUCT_INFO_NODES)

    def visit_expr(self, e: relax.Expr) -> Any:
        try:
            method = self._expr_table[type(e)]
        except KeyError:
            raise self._unhandled(e) from None
        return method(self, e)

    def visit_binding(self, b: relax.Binding) -> Any:
        try:
            method = self._binding_table[type(b)]
        except KeyError:
            raise self._unhandled(b) from None
        return method(self, b)

    def visit_struct_info(self, si: relax.StructInfo) -> Any:
        try:
            method = self._sinfo_table[type(si)]
        except KeyError:
            raise self._unhandled(si) from None
        return method(self, si)

    def _unhandled(self, node: object) -> TVMLiteError:
        return TVMLiteError(f"{type(self).__name__} cannot handle a {type(node).__name__} node")


class ExprVisitor(RelaxFunctor):
    """Read-only walk over every field of Relax expressions."""

    # ------------------------------------------------------------ hooks

    def visit_var_def(self, var: relax.Var) -> None:
        """A var being defined: a binding's target or a function parameter."""
        self.visit_struct_info(var.struct_info)

    def visit_prim_expr(self, e: tir.PrimExpr) -> None:
        """A TIR expression inside Relax (symbolic dims, prim and shape values)."""

    def visit_binding_block(self, block: relax.BindingBlock) -> None:
        for binding in block.bindings:
            self.visit_binding(binding)

    def visit_attr_value(self, value: Any) -> None:
        """A call's or function's attribute value: TIR expressions in it go to
        `visit_prim_expr`."""
        if isinstance(value, tir.PrimExpr):
            self.visit_prim_expr(value)
        elif isinstance(value, tuple):
            for item in value:
                self.visit_attr_value(item)

    # ------------------------------------------------------------ leaves

    def visit_Var(self, e: relax.Var) -> None:
        pass

    def visit_DataflowVar(self, e: relax.DataflowVar) -> None:
        self.visit_Var(e)

    def visit_GlobalVar(self, e: relax.GlobalVar) -> None:
        pass

    def visit_Op(self, e: relax.Op) -> None:
        pass

    def visit_ExternFunc(self, e: relax.ExternFunc) -> None:
        if e.struct_info is not None:  # a typed module-level extern
            self.visit_struct_info(e.struct_info)

    def visit_Constant(self, e: relax.Constant) -> None:
        if e.struct_info is not None:  # a distributed constant's placement
            self.visit_struct_info(e.struct_info)

    def visit_StringImm(self, e: relax.StringImm) -> None:
        pass

    def visit_DataTypeImm(self, e: relax.DataTypeImm) -> None:
        pass

    # ------------------------------------------------------------ expressions

    def visit_Tuple(self, e: relax.Tuple) -> None:
        for f in e.fields:
            self.visit_expr(f)

    def visit_TupleGetItem(self, e: relax.TupleGetItem) -> None:
        self.visit_expr(e.tuple_value)

    def visit_ShapeExpr(self, e: relax.ShapeExpr) -> None:
        for value in e.values:
            self.visit_prim_expr(value)

    def visit_PrimValue(self, e: relax.PrimValue) -> None:
        self.visit_prim_expr(e.value)

    def visit_Call(self, e: relax.Call) -> None:
        self.visit_expr(e.op)
        for arg in e.args:
            self.visit_expr(arg)
        for _, value in e.attrs:
            self.visit_attr_value(value)
        for si in e.sinfo_args:
            self.visit_struct_info(si)

    def visit_If(self, e: relax.If) -> None:
        self.visit_expr(e.condition)
        self.visit_expr(e.true_branch)
        self.visit_expr(e.false_branch)

    def visit_SeqExpr(self, e: relax.SeqExpr) -> None:
        for block in e.blocks:
            self.visit_binding_block(block)
        self.visit_expr(e.body)

    def visit_Function(self, e: relax.Function) -> None:
        for param in e.params:
            self.visit_var_def(param)
        self.visit_struct_info(e.ret_struct_info)
        for _, value in e.attrs:
            self.visit_attr_value(value)
        self.visit_expr(e.body)

    # ------------------------------------------------------------ bindings

    def visit_VarBinding(self, b: relax.VarBinding) -> None:
        self.visit_expr(b.value)
        self.visit_var_def(b.var)

    def visit_MatchCast(self, b: relax.MatchCast) -> None:
        self.visit_expr(b.value)
        self.visit_struct_info(b.struct_info)
        self.visit_var_def(b.var)

    # ------------------------------------------------------------ struct info

    def visit_ObjectStructInfo(self, si: relax.ObjectStructInfo) -> None:
        pass

    def visit_PrimStructInfo(self, si: relax.PrimStructInfo) -> None:
        if si.value is not None:
            self.visit_prim_expr(si.value)

    def visit_ShapeStructInfo(self, si: relax.ShapeStructInfo) -> None:
        for value in si.values or ():
            self.visit_prim_expr(value)

    def visit_TensorStructInfo(self, si: relax.TensorStructInfo) -> None:
        if isinstance(si.shape, relax.Var):
            self.visit_expr(si.shape)
        else:
            for dim in si.shape or ():
                self.visit_prim_expr(dim)

    def visit_DTensorStructInfo(self, si: relax.DTensorStructInfo) -> None:
        self.visit_TensorStructInfo(si)  # the global shape

    visit_StringStructInfo = visit_ObjectStructInfo

    def visit_TupleStructInfo(self, si: relax.TupleStructInfo) -> None:
        for f in si.fields:
            self.visit_struct_info(f)

    def visit_FuncStructInfo(self, si: relax.FuncStructInfo) -> None:
        for param in si.params or ():
            self.visit_struct_info(param)
        self.visit_struct_info(si.ret)
