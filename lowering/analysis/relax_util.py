"""Small Relax helpers the passes share: the vars an expression uses, the module
functions it refers to, the TIR vars in struct info, renaming vars inside an
expression, and adding
functions to a module under unique names with structural deduplication."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.analysis import free_vars, substitute
from tvmlite.dsl.relax_functor import ExprVisitor
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.structural import structural_equal, structural_hash


class _UsedVars(ExprVisitor):
    def __init__(self) -> None:
        self.found: list[relax.Var] = []

    def visit_Var(self, e: relax.Var) -> None:
        self.found.append(e)

    def visit_struct_info(self, si: relax.StructInfo) -> None:
        pass  # a shape var named in struct info is not a value the code reads


def used_vars(expr: relax.Expr) -> Iterator[relax.Var]:
    """Relax vars read by `expr`, left to right (nested functions and branches too)."""
    visitor = _UsedVars()
    visitor.visit_expr(expr)
    return iter(visitor.found)


class _GlobalVars(ExprVisitor):
    def __init__(self) -> None:
        self.found: dict[str, None] = {}

    def visit_GlobalVar(self, e: relax.GlobalVar) -> None:
        self.found[e.name] = None


def global_vars(expr: relax.Expr) -> list[str]:
    """Names of the module functions `expr` refers to (called, passed to `call_tir`,
    or used as values), in order of first reference."""
    visitor = _GlobalVars()
    visitor.visit_expr(expr)
    return list(visitor.found)


class _TIRVars(ExprVisitor):
    """TIR vars in order; a var's struct info counts where it is used too, and a
    binding's target comes before its value (the order fusion's parameters take)."""

    def __init__(self) -> None:
        self.found: dict[tir.Var, None] = {}

    def visit_prim_expr(self, e: tir.PrimExpr) -> None:
        self.found.update(dict.fromkeys(free_vars(e)))

    def visit_Var(self, e: relax.Var) -> None:
        self.visit_struct_info(e.struct_info)

    def visit_Function(self, e: relax.Function) -> None:
        pass  # a nested function has its own symbolic vars

    def visit_VarBinding(self, b: relax.VarBinding) -> None:
        self.visit_var_def(b.var)
        self.visit_expr(b.value)

    def visit_MatchCast(self, b: relax.MatchCast) -> None:
        self.visit_var_def(b.var)
        self.visit_expr(b.value)
        self.visit_struct_info(b.struct_info)

    def visit(self, node: Any) -> None:
        if isinstance(node, tir.PrimExpr):
            self.visit_prim_expr(node)
        elif isinstance(node, tuple | list):
            for item in node:
                self.visit(item)
        elif isinstance(node, relax.StructInfo):
            self.visit_struct_info(node)
        elif isinstance(node, relax.VarBinding | relax.MatchCast):
            self.visit_binding(node)
        elif isinstance(node, relax.Expr):
            self.visit_expr(node)


def tir_vars(node: Any) -> dict[tir.Var, None]:
    """Every TIR var under `node` (expressions, bindings, struct info, TIR
    expressions, or tuples of them), in order."""
    visitor = _TIRVars()
    visitor.visit(node)
    return visitor.found


class _BareDims(ExprVisitor):
    def __init__(self) -> None:
        self.found: set[tir.Var] = set()

    def visit_prim_expr(self, e: tir.PrimExpr) -> None:
        if isinstance(e, tir.Var):
            self.found.add(e)

    def visit_FuncStructInfo(self, si: relax.FuncStructInfo) -> None:
        pass  # a callable's signature defines nothing where it is matched


def defined_tir_vars(sinfos: list[relax.StructInfo]) -> set[tir.Var]:
    """TIR vars that matching values against `sinfos` defines (bare dims)."""
    visitor = _BareDims()
    for si in sinfos:
        visitor.visit_struct_info(si)
    return visitor.found


class _Remap(ExprMutator):
    def __init__(self, by_id: Mapping[int, relax.Expr | tir.PrimExpr]) -> None:
        super().__init__()
        self.by_id = by_id

    def visit_expr(self, e: relax.Expr) -> relax.Expr:
        new = self.by_id.get(id(e))
        return new if new is not None else super().visit_expr(e)  # type: ignore[return-value]

    def visit_prim_expr(self, e: tir.PrimExpr) -> tir.PrimExpr:
        found = {v: self.by_id[id(v)] for v in free_vars(e) if id(v) in self.by_id}
        return substitute(e, found) if found else e  # type: ignore[arg-type]


def remap(expr: relax.Expr, vmap: Mapping[int, relax.Expr | tir.PrimExpr]) -> relax.Expr:
    """`expr` with Relax vars (and constants) and TIR vars replaced by `vmap`, keyed
    by object id, wherever they are: nested sequences and branches, `R.shape`,
    `R.prim_value`, struct info. Only the nodes that changed are rebuilt."""
    return _Remap(vmap).visit_expr(expr)


@dataclass
class FunctionTable:
    """New module functions: unique names (`fused_add`, `fused_add1`, ...) and
    structurally equal functions shared, as TVM's BlockBuilder.AddFunction does."""

    taken: set[str]
    added: dict[str, Any] = field(default_factory=dict)
    _by_hash: dict[int, list[str]] = field(default_factory=dict)

    def add(self, name: str, func: Any) -> str:
        key = structural_hash(func)
        for existing in self._by_hash.get(key, []):
            if structural_equal(self.added[existing], func):
                return existing
        unique, n = name, 0
        while unique in self.added or unique in self.taken:
            n += 1
            unique = f"{name}{n}"
        self.added[unique] = func
        self._by_hash.setdefault(key, []).append(unique)
        return unique
