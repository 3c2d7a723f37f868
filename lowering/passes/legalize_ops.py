"""LegalizeOps: replace every high-level `R.<op>` call with `R.call_tir` of a prim
function that computes it.

This pass owns the Relax side of legalization: walking graph functions,
replacing calls binding by binding (a rule may bind helper values first),
naming kernels as TVM does (`add`, `add1`, ...) and sharing identical ones.
The kernels come from the rules in `lowering/legalize/`. Functions marked
`Primitive`, `Compiler` or `Codegen` are left alone, and so are calls that
have no rule or already are `call_tir`, so running the pass twice changes
nothing. A binding whose legalized value knows a shape its var does not (an
output sized at run time, as `R.nonzero`'s) gets a new var with that shape, and
later uses see it (TVM's ExprMutator re-emits such bindings the same way), so
the operators after it can be legalized.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.index_map import IndexMap
from tvmlite.dsl.module import TVM027, IRModule
from tvmlite.dsl.ops import lookup, sinfo_of
from tvmlite.dsl.structural import structural_equal, structural_hash
from tvmlite.dsl.verify_relax import compatible
from tvmlite.lowering.analysis.relax_util import remap
from tvmlite.lowering.legalize import registry
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeFn, LegalizeUnsupported
from tvmlite.lowering.transform import Pass
from tvmlite.printer.relax_expr import index_map_script

SKIP_ATTRS = ("Primitive", "Compiler", "Codegen")


@dataclass(frozen=True)
class LegalizeOps(Pass):
    """`customize` maps operator names to rules tried before the built-in ones.
    `dialect` is the spelling of the new kernels ("tvm-0.27": `s_tir`,
    `tirx.noalias`, as TVM 0.27 prints them); by default the module's."""

    customize: Mapping[str, LegalizeFn] | None = None
    dialect: str | None = None
    name: str = "LegalizeOps"

    def run(self, mod: IRModule) -> IRModule:
        dialect = self.dialect or mod.dialect
        table = KernelTable(mod, dict(self.customize or {}), dialect == TVM027)
        functions: dict[str, Any] = {}
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function) and not _skipped(func):
                func = table.rewrite_function(func)
            functions[gname] = func
        if not table.kernels:
            return mod
        merged = {**table.kernels, **functions}
        return IRModule(
            merged, dict(mod.attrs), dict(mod.global_infos), dict(mod.metadata), dialect
        )


def _skipped(func: relax.Function) -> bool:
    return any(func.attr(key) for key in SKIP_ATTRS)


@dataclass
class KernelTable:
    """The state of one run: new kernels by name, and the bindings a rule emits."""

    mod: IRModule
    customize: dict[str, LegalizeFn]
    s_tir: bool = False
    kernels: dict[str, tir.PrimFunc] = field(default_factory=dict)
    _by_hash: dict[int, list[str]] = field(default_factory=dict)
    _pending: list[relax.Binding] = field(default_factory=list)
    _dataflow: bool = False
    _sharpened: dict[int, relax.Var] = field(default_factory=dict)  # by id of the old var

    def kernel_attrs(self, ctx: LegalizeCtx) -> tuple[tuple[str, Any], ...]:
        noalias = "tirx.noalias" if self.s_tir else "tir.noalias"
        attrs = tuple((k, _attr_value(v)) for k, v in ctx.call.attrs)
        return (
            (registry.OP_ATTRS, attrs),
            (registry.OP_KIND, ctx.op.pattern),
            (registry.OP_NAME, ctx.op.name),
            (noalias, True),
        )

    def add_kernel(self, name: str, func: tir.PrimFunc) -> relax.GlobalVar:
        """Add `func` under a fresh name, or reuse an identical kernel's."""
        key = structural_hash(func)
        for existing in self._by_hash.get(key, []):
            if structural_equal(self.kernels[existing], func):
                return relax.GlobalVar(existing)
        unique, n = name, 0
        while unique in self.kernels or unique in self.mod.functions:
            n += 1
            unique = f"{name}{n}"
        self.kernels[unique] = func
        self._by_hash.setdefault(key, []).append(unique)
        return relax.GlobalVar(unique)

    def emit(self, expr: relax.Expr) -> relax.Var:
        value = self.legalize_expr(expr)
        cls = relax.DataflowVar if self._dataflow else relax.Var
        var = cls("lv", sinfo_of(value))
        self._pending.append(relax.VarBinding(var, value))
        return var

    def emit_match_cast(self, expr: relax.Expr, sinfo: relax.StructInfo) -> relax.Var:
        """Bind `R.match_cast(expr, sinfo)` (which defines `sinfo`'s new vars)."""
        cls = relax.DataflowVar if self._dataflow else relax.Var
        var = cls("lv", sinfo)
        self._pending.append(relax.MatchCast(var, self.legalize_expr(expr), sinfo))
        return var

    # ------------------------------------------------------------ rewriting

    def legalize_expr(self, expr: relax.Expr) -> relax.Expr:
        """`expr` with its operator call replaced (helper bindings go to pending)."""
        if not (isinstance(expr, relax.Call) and isinstance(expr.op, relax.Op)):
            return expr
        name = expr.op.name
        rule = self.customize.get(name) or registry.rule_for(name)
        op = lookup(name)
        if rule is None or op is None:
            return expr
        mark = len(self._pending)
        try:
            ctx = LegalizeCtx(expr, op, sinfo_of(expr), self)
            result = rule(ctx)
        except LegalizeUnsupported:
            result = None
        if result is None:
            del self._pending[mark:]
            return expr
        return self.legalize_expr(result) if result is not expr else expr

    def rewrite_function(self, func: relax.Function) -> relax.Function:
        body = self._seq(func.body)
        if body is func.body:
            return func
        return relax.Function(
            func.params, body, func.ret_struct_info, func.is_pure, func.attrs, func.span
        )

    def _seq(self, seq: relax.SeqExpr) -> relax.SeqExpr:
        blocks = tuple(self._block(b) for b in seq.blocks)
        self._dataflow = False
        body = self._value(remap(seq.body, self._sharpened))
        if self._pending:  # helpers of a call in return position
            blocks = (*blocks, relax.BindingBlock(tuple(self._pending)))
            self._pending.clear()
        if all(a is b for a, b in zip(blocks, seq.blocks, strict=True)) and body is seq.body:
            return seq
        return relax.SeqExpr(blocks, body, seq.span)

    def _block(self, block: relax.BindingBlock) -> relax.BindingBlock:
        out: list[relax.Binding] = []
        changed = False
        for binding in block.bindings:
            self._dataflow = block.is_dataflow
            value = self._value(remap(binding.value, self._sharpened))
            out.extend(self._pending)
            changed = changed or bool(self._pending) or value is not binding.value
            self._pending.clear()
            if value is binding.value:
                out.append(binding)
            elif isinstance(binding, relax.MatchCast):
                out.append(relax.MatchCast(binding.var, value, binding.struct_info, binding.span))
            else:
                out.append(relax.VarBinding(self._sharpen(binding.var, value), value, binding.span))
        if not changed:
            return block
        return relax.BindingBlock(tuple(out), block.is_dataflow, block.span)

    def _sharpen(self, var: relax.Var, value: relax.Expr) -> relax.Var:
        """`var`, or a new var of the same name when `value` knows more of its shape."""
        sinfo = sinfo_of(value)
        if not _sharper(var.struct_info, sinfo):
            return var
        new = type(var)(var.name, sinfo, var.span)
        self._sharpened[id(var)] = new
        return new

    def _value(self, value: relax.Expr) -> relax.Expr:
        if isinstance(value, relax.If):
            cond = remap(value.condition, self._sharpened)
            t, f = self._seq(value.true_branch), self._seq(value.false_branch)
            if cond is value.condition and t is value.true_branch and f is value.false_branch:
                return value
            return relax.If(cond, t, f, value.span)
        if isinstance(value, relax.SeqExpr):
            return self._seq(value)
        if isinstance(value, relax.Function):
            return value if _skipped(value) else self.rewrite_function(value)
        return self.legalize_expr(value)


def _sharper(old: relax.StructInfo, new: relax.StructInfo) -> bool:
    """Whether `new` gives a shape where `old` has none, and agrees with it elsewhere."""
    if isinstance(old, relax.TensorStructInfo) and isinstance(new, relax.TensorStructInfo):
        return old.shape is None and isinstance(new.shape, tuple) and compatible(old, new)
    if isinstance(old, relax.TupleStructInfo) and isinstance(new, relax.TupleStructInfo):
        pairs = list(zip(old.fields, new.fields, strict=False))
        if len(old.fields) != len(new.fields):
            return False
        sharper = [_sharper(a, b) for a, b in pairs]
        return any(sharper) and all(s or a == b for s, (a, b) in zip(sharper, pairs, strict=True))
    return False


def _attr_value(value: Any) -> Any:
    """Operator attributes as function-attribute values (lists become tuples, an
    index map its text)."""
    if isinstance(value, IndexMap):
        return index_map_script(value)
    if isinstance(value, list):
        return tuple(_attr_value(v) for v in value)
    return value
