"""DeadCodeElimination: drop bindings nobody reads and functions nobody calls.

This pass owns liveness at both levels. Inside Relax functions a binding goes
when its var is never read, no TIR var it defines is read (`y: T.int64 = n + 1`
defines `y`, which later arithmetic reads as a TIR var, not through the Relax
var), and its value is pure (no call of a packed or impure function, no
in-place kernel, no print or assert); `match_cast` stays, since it checks
shapes at run time. Dataflow blocks left empty disappear. At
module level, private functions that no public function reaches (through calls
or `call_tir`) are removed; a module with no public function keeps them all,
since nothing says what its entry is. Functions `is_external` names (fused
groups, external compilers') are kept as they are inside. Fusion and legalization leave such
dead code behind, which is why this runs after them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_functor import EXPR_NODES
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.tir_mutator import replace
from tvmlite.lowering.analysis.relax_util import (
    defined_tir_vars,
    global_vars,
    tir_vars,
    used_vars,
)
from tvmlite.lowering.transform import Pass, is_external

IMPURE_OPS = frozenset(
    {
        "relax.call_packed",
        "relax.call_inplace_packed",
        "relax.call_tir_inplace",
        "relax.call_builtin_with_ctx",
        "relax.print",
        "relax.assert_op",
    }
)
IMPURE_PREFIXES = ("relax.vm.", "relax.memory.", "relax.builtin.")
# Values whose evaluation has no effect: everything but calls and nested scopes.
PURE_LEAVES = tuple(c for c in EXPR_NODES if c not in (relax.Call, relax.If, relax.SeqExpr))


@dataclass(frozen=True)
class DeadCodeElimination(Pass):
    """`entry_functions` names functions to keep (and whatever they reach) in
    addition to the public ones."""

    entry_functions: tuple[str, ...] = ()
    name: str = "DeadCodeElimination"

    def run(self, mod: IRModule) -> IRModule:
        functions: dict[str, Any] = {}
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function) and not is_external(func):
                func = _Liveness(mod).visit_expr(func)
            functions[gname] = func
        kept = _reachable(functions, self.entry_functions)
        return mod.with_functions({k: v for k, v in functions.items() if k in kept})


def _reachable(functions: dict[str, Any], extra: tuple[str, ...]) -> set[str]:
    roots = [n for n, f in functions.items() if _is_public(f) or n in extra]
    if not roots:
        return set(functions)
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        func = functions[name]
        if isinstance(func, relax.Function):  # a prim function calls no module function
            stack.extend(global_vars(func))
    return seen


def _is_public(func: Any) -> bool:
    return (
        isinstance(func, (relax.Function, tir.PrimFunc)) and func.attr("global_symbol") is not None
    )


class _Liveness(ExprMutator):
    """Backward liveness over the bindings of each sequence, of Relax vars and of
    the TIR vars bindings define; nested scopes (branches, closures) are cleaned
    as their binding is reached."""

    def __init__(self, mod: IRModule) -> None:
        super().__init__()
        self.mod = mod
        self.defined: frozenset[tir.Var] = frozenset()  # TIR vars in scope here

    def visit_Function(self, e: relax.Function) -> relax.Expr:
        outer = self.defined
        self.defined = frozenset(defined_tir_vars([p.struct_info for p in e.params]))
        try:
            return super().visit_Function(e)
        finally:
            self.defined = outer

    def visit_SeqExpr(self, s: relax.SeqExpr) -> relax.Expr:
        outer = self.defined
        bindings = [b for block in s.blocks for b in block.bindings]
        scopes, defines = _definitions(bindings, outer)
        live: set[relax.Var] = set(used_vars(s.body))
        live_tir: set[tir.Var] = set(tir_vars(s.body))
        blocks: list[relax.BindingBlock] = []
        index = len(bindings)
        try:
            for block in reversed(s.blocks):
                kept: list[relax.Binding] = []
                for b in reversed(block.bindings):
                    index -= 1
                    self.defined = scopes[index]
                    value = self.visit_expr(b.value)
                    needed = b.var in live or not defines[index].isdisjoint(live_tir)
                    if not needed and self.removable(b, value):
                        continue
                    b = replace(b, value=value)
                    live.update(used_vars(value))
                    live_tir.update(tir_vars(b))
                    kept.append(b)
                kept.reverse()
                if not kept and block.is_dataflow:
                    continue
                same = _same(kept, block.bindings)
                blocks.append(block if same else replace(block, bindings=tuple(kept)))
        finally:
            self.defined = outer
        blocks.reverse()
        return s if _same(blocks, s.blocks) else replace(s, blocks=tuple(blocks))

    def removable(self, b: relax.Binding, value: relax.Expr) -> bool:
        if isinstance(b, relax.MatchCast):
            return False
        if isinstance(value, PURE_LEAVES):
            return True
        if not isinstance(value, relax.Call):
            return False
        op = value.op
        if isinstance(op, relax.Op):
            return op.name not in IMPURE_OPS and not op.name.startswith(IMPURE_PREFIXES)
        if isinstance(op, relax.GlobalVar):
            callee = self.mod.functions.get(op.name)
            return isinstance(callee, relax.Function) and callee.is_pure
        return False


def _definitions(
    bindings: list[relax.Binding], outer: frozenset[tir.Var]
) -> tuple[list[frozenset[tir.Var]], list[frozenset[tir.Var]]]:
    """For each binding, the TIR vars in scope before it and those it defines (the
    bare vars of its struct info not in scope yet)."""
    scopes: list[frozenset[tir.Var]] = []
    defines: list[frozenset[tir.Var]] = []
    scope = outer
    for b in bindings:
        si = b.struct_info if isinstance(b, relax.MatchCast) else b.var.struct_info
        new = frozenset(defined_tir_vars([si])) - scope
        scopes.append(scope)
        defines.append(new)
        scope |= new
    return scopes, defines


def _same(new: list[Any], old: tuple[Any, ...]) -> bool:
    return len(new) == len(old) and all(a is b for a, b in zip(new, old, strict=True))
