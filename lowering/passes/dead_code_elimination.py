"""DeadCodeElimination: drop bindings nobody reads and functions nobody calls.

This pass owns liveness at both levels. Inside Relax functions a binding goes
when its var is never read and its value is pure (no call of a packed or
impure function, no in-place kernel, no print or assert); `match_cast` stays,
since it checks shapes at run time. Dataflow blocks left empty disappear. At
module level, private functions that no public function reaches (through calls
or `call_tir`) are removed; a module with no public function keeps them all,
since nothing says what its entry is. Functions marked `Primitive`, `Compiler`
or `Codegen` are kept as they are inside. Fusion and legalization leave such
dead code behind, which is why this runs after them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.walk import walk
from tvmlite.lowering.analysis.relax_util import used_vars
from tvmlite.lowering.transform import Pass

SKIP_ATTRS = ("Primitive", "Compiler", "Codegen")
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
PURE_LEAVES = (
    relax.Var,
    relax.Constant,
    relax.Tuple,
    relax.TupleGetItem,
    relax.ShapeExpr,
    relax.PrimValue,
    relax.StringImm,
    relax.DataTypeImm,
    relax.GlobalVar,
    relax.ExternFunc,
    relax.Op,
    relax.Function,
)


@dataclass(frozen=True)
class DeadCodeElimination(Pass):
    """`entry_functions` names functions to keep (and whatever they reach) in
    addition to the public ones."""

    entry_functions: tuple[str, ...] = ()
    name: str = "DeadCodeElimination"

    def run(self, mod: IRModule) -> IRModule:
        functions: dict[str, Any] = {}
        changed = False
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function) and not any(func.attr(k) for k in SKIP_ATTRS):
                new = _Liveness(mod).function(func)
                changed = changed or new is not func
                func = new
            functions[gname] = func
        kept = _reachable(functions, self.entry_functions)
        if len(kept) != len(functions):
            functions = {k: v for k, v in functions.items() if k in kept}
            changed = True
        if not changed:
            return mod
        return IRModule(
            functions, dict(mod.attrs), dict(mod.global_infos), dict(mod.metadata), mod.dialect
        )


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
        stack.extend(n.name for n in walk(functions[name]) if isinstance(n, relax.GlobalVar))
    return seen


def _is_public(func: Any) -> bool:
    return (
        isinstance(func, (relax.Function, tir.PrimFunc)) and func.attr("global_symbol") is not None
    )


class _Liveness:
    """Backward liveness over one function's bindings."""

    def __init__(self, mod: IRModule) -> None:
        self.mod = mod

    def function(self, func: relax.Function) -> relax.Function:
        body = self.seq(func.body)
        if body is func.body:
            return func
        return relax.Function(
            func.params, body, func.ret_struct_info, func.is_pure, func.attrs, func.span
        )

    def seq(self, s: relax.SeqExpr) -> relax.SeqExpr:
        live: set[relax.Var] = set(used_vars(s.body))
        blocks: list[relax.BindingBlock] = []
        changed = False
        for block in reversed(s.blocks):
            kept: list[relax.Binding] = []
            for b in reversed(block.bindings):
                value = self.value(b.value)
                if b.var not in live and self.removable(b, value):
                    changed = True
                    continue
                if value is not b.value:
                    b = _rebind(b, value)
                    changed = True
                live.update(used_vars(value))
                kept.append(b)
            if not kept and block.is_dataflow:
                changed = True
                continue
            if len(kept) == len(block.bindings) and all(
                a is b for a, b in zip(reversed(kept), block.bindings, strict=True)
            ):
                blocks.append(block)
            else:
                blocks.append(
                    relax.BindingBlock(tuple(reversed(kept)), block.is_dataflow, block.span)
                )
        if not changed:
            return s
        return relax.SeqExpr(tuple(reversed(blocks)), s.body, s.span)

    def value(self, v: relax.Expr) -> relax.Expr:
        """Nested scopes (branches, closures) are cleaned first."""
        if isinstance(v, relax.If):
            t, f = self.seq(v.true_branch), self.seq(v.false_branch)
            if t is v.true_branch and f is v.false_branch:
                return v
            return relax.If(v.condition, t, f, v.span)
        if isinstance(v, relax.Function):
            return self.function(v)
        return v

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


def _rebind(b: relax.Binding, value: relax.Expr) -> relax.Binding:
    if isinstance(b, relax.MatchCast):
        return relax.MatchCast(b.var, value, b.struct_info, b.span)
    return relax.VarBinding(b.var, value, b.span)
