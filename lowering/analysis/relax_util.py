"""Small Relax helpers the fusion passes share: the vars an expression uses, the
TIR vars in struct info, renaming vars inside an expression, and adding
functions to a module under unique names with structural deduplication."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.structural import structural_equal, structural_hash


def used_vars(expr: relax.Expr) -> Iterator[relax.Var]:
    """Relax vars read by `expr`, left to right (nested functions and branches too)."""
    stack: list[Any] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, relax.Var):
            yield node
        elif isinstance(node, tuple):
            stack.extend(reversed(node))
        elif isinstance(node, (relax.Expr, relax.VarBinding, relax.MatchCast, relax.BindingBlock)):
            if isinstance(node, relax.Function):
                stack.append(node.body)
                continue
            skip = ("span", "struct_info", "sinfo_args", "attrs", "var")
            stack.extend(
                reversed(
                    [getattr(node, f.name) for f in dataclasses.fields(node) if f.name not in skip]
                )
            )


def tir_vars(node: Any) -> dict[tir.Var, None]:
    """Every TIR var under `node` (struct info, shape values, prim values), in order."""
    out: dict[tir.Var, None] = {}
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, tir.Var):
            out[item] = None
        elif isinstance(item, (tuple, list)):
            stack.extend(reversed(item))
        elif isinstance(item, (relax.Constant, relax.Function, tir.PrimFunc)):
            continue
        elif hasattr(item, "__dataclass_fields__"):
            stack.extend(
                reversed([getattr(item, f) for f in item.__dataclass_fields__ if f != "span"])
            )
    return out


def defined_tir_vars(sinfos: list[relax.StructInfo]) -> set[tir.Var]:
    """TIR vars that matching values against `sinfos` defines (bare dims)."""
    out: set[tir.Var] = set()
    stack = list(sinfos)
    while stack:
        si = stack.pop()
        if isinstance(si, relax.TensorStructInfo) and isinstance(si.shape, tuple):
            out.update(d for d in si.shape if isinstance(d, tir.Var))
        elif isinstance(si, relax.ShapeStructInfo) and si.values is not None:
            out.update(d for d in si.values if isinstance(d, tir.Var))
        elif isinstance(si, relax.PrimStructInfo) and isinstance(si.value, tir.Var):
            out.add(si.value)
        elif isinstance(si, relax.TupleStructInfo):
            stack.extend(si.fields)
    return out


def remap(expr: relax.Expr, vmap: Mapping[int, relax.Expr]) -> relax.Expr:
    """`expr` with vars (and constants) replaced by `vmap`, keyed by object id; only
    the nodes that changed are rebuilt."""
    new = vmap.get(id(expr))
    if new is not None:
        return new
    if isinstance(expr, relax.Tuple):
        fields = tuple(remap(f, vmap) for f in expr.fields)
        if all(a is b for a, b in zip(fields, expr.fields, strict=True)):
            return expr
        return relax.Tuple(fields, expr.span)
    if isinstance(expr, relax.TupleGetItem):
        value = remap(expr.tuple_value, vmap)
        return expr if value is expr.tuple_value else relax.TupleGetItem(value, expr.index)
    if isinstance(expr, relax.Call):
        args = tuple(remap(a, vmap) for a in expr.args)
        op = remap(expr.op, vmap)
        if op is expr.op and all(a is b for a, b in zip(args, expr.args, strict=True)):
            return expr
        return relax.Call(op, args, expr.attrs, expr.sinfo_args, expr.span)
    return expr


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
