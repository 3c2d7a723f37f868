"""LegalizeOps: replace every high-level `R.<op>` call with `R.call_tir` of a prim
function that computes it.

This pass owns the Relax side of legalization: walking graph functions with
the Relax `ExprMutator`, replacing calls binding by binding (a rule may bind
helper values first, through the mutator's emitter),
naming kernels as TVM does (`add`, `add1`, ...) and sharing identical ones.
The kernels come from the rules in `lowering/legalize/`. Functions marked
`Compiler`, `Codegen` or `Composite` (another codegen's) are left alone, and
so are calls that have no rule or already are `call_tir`, so running the pass
twice changes nothing. A binding whose legalized value knows a shape its var does not (an
output sized at run time, as `R.nonzero`'s) gets a new var with that shape, and
later uses see it (TVM's ExprMutator re-emits such bindings the same way), so
the operators after it can be legalized.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import TVM027, IRModule
from tvmlite.dsl.ops import lookup, sinfo_of
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.structural import structural_equal, structural_hash
from tvmlite.dsl.tir_mutator import replace
from tvmlite.dsl.verify_relax import compatible
from tvmlite.lowering.legalize import registry
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeFn, LegalizeUnsupported
from tvmlite.lowering.transform import EXTERNAL_COMPILER, Pass, PassContext

LEGALIZE_KEY = "relax.transform.apply_legalize_ops"
# Calls, closures and VM intrinsics: nothing to legalize, so no warning either.
NOT_COMPUTATIONS = (
    "relax.call_",
    "relax.invoke_",
    "relax.memory.",
    "relax.vm.",
    "relax.builtin.",
    "relax.make_closure",
    "relax.null_value",
    "relax.print",
    "relax.assert_op",
)


@dataclass(frozen=True)
class LegalizeOps(Pass):
    """Does nothing when the PassContext config `relax.transform.apply_legalize_ops`
    is False (as in TVM, for tests that want unlegalized ops to fail the build).
    TVM's parameters: `customize_legalize_map` maps operator names to rules tried
    before the built-in ones, `skip_ops` names operators left as they are, and
    `enable_warning` warns (Python `warnings`) about each call whose operator
    has no legalization. `dialect` is the spelling of the new kernels
    ("tvm-0.27": `s_tir`, `tirx.noalias`, as TVM 0.27 prints them); by default
    the module's."""

    customize_legalize_map: Mapping[str, LegalizeFn] | None = None
    skip_ops: Sequence[str] = ()
    enable_warning: bool = False
    dialect: str | None = None
    name: str = "LegalizeOps"

    def __post_init__(self) -> None:
        custom = self.customize_legalize_map
        if custom is not None and (
            not isinstance(custom, Mapping)
            or not all(isinstance(k, str) and callable(v) for k, v in custom.items())
        ):
            raise TVMLiteError(
                "LegalizeOps: customize_legalize_map must map operator names to functions"
            )
        if isinstance(self.skip_ops, str) or not all(isinstance(n, str) for n in self.skip_ops):
            raise TVMLiteError("LegalizeOps: skip_ops must be a list of operator names")
        unknown = [n for n in self.skip_ops if lookup(n) is None]
        if unknown:
            raise TVMLiteError(
                f"LegalizeOps: skip_ops names unknown operator '{unknown[0]}' "
                "(operators are named as in TVM, e.g. 'relax.nn.conv2d')"
            )
        object.__setattr__(self, "skip_ops", tuple(self.skip_ops))
        if not isinstance(self.enable_warning, bool):
            raise TVMLiteError(
                f"LegalizeOps: enable_warning must be True or False, got {self.enable_warning!r}"
            )

    def run(self, mod: IRModule) -> IRModule:
        # TVM's switch: with the config False no LegalizeOps runs, explicit or in a pipeline
        if not PassContext.current().get(LEGALIZE_KEY, True):
            return mod
        dialect = self.dialect or mod.dialect
        table = KernelTable(
            mod,
            dict(self.customize_legalize_map or {}),
            dialect == TVM027,
            frozenset(self.skip_ops),
            self.enable_warning,
        )
        functions: dict[str, Any] = {}
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function):
                func = table.visit_expr(func)
            functions[gname] = func
        if not table.kernels:
            return mod
        return mod.replace(functions={**table.kernels, **functions}, dialect=dialect)


class KernelTable(ExprMutator):
    """One run over a module's graph functions: rewrites every operator call it
    meets (nested scopes too, but not functions marked as skipped), holds the new
    kernels by name, and emits the helper bindings a rule asks for before the
    binding being rewritten."""

    def __init__(
        self,
        mod: IRModule,
        customize: dict[str, LegalizeFn],
        s_tir: bool = False,
        skip: frozenset[str] = frozenset(),
        warn: bool = False,
    ) -> None:
        super().__init__()
        self.mod = mod
        self.customize = customize
        self.s_tir = s_tir
        self.skip = skip
        self.warn = warn
        self.kernels: dict[str, tir.PrimFunc] = {}
        self._by_hash: dict[int, list[str]] = {}

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

    def emit(
        self, value: relax.Expr, name: str = "lv", struct_info: relax.StructInfo | None = None
    ) -> relax.Var:
        """Bind `value`, legalized in turn, before the binding being rewritten."""
        return super().emit(self.legalize_expr(value), name, struct_info)

    # ------------------------------------------------------------ rewriting

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        value = self.visit_expr(b.value)
        var = self._define(b.var)
        sinfo = sinfo_of(value)
        if _sharper(var.struct_info, sinfo):
            var = self.var_remap[b.var] = type(var)(var.name, sinfo, var.span)
        return replace(b, value=value, var=var)

    def visit_Call(self, e: relax.Call) -> relax.Expr:
        return self.legalize_expr(super().visit_Call(e))

    def visit_Function(self, e: relax.Function) -> relax.Expr:
        # Another codegen's functions keep their operators; a `Primitive` one (a
        # fusion group TVM printed or a user wrote) is legalized like any other.
        if any(e.attr(k) for k in EXTERNAL_COMPILER):
            return e
        return super().visit_Function(e)

    def legalize_expr(self, expr: relax.Expr) -> relax.Expr:
        """`expr` with its operator call replaced (helper bindings are emitted)."""
        if not (isinstance(expr, relax.Call) and isinstance(expr.op, relax.Op)):
            return expr
        name = expr.op.name
        if name in self.skip:
            return expr
        rule = self.customize.get(name) or registry.rule_for(name)
        op = lookup(name)
        if rule is None or op is None:
            if self.warn and not name.startswith(NOT_COMPUTATIONS):
                warnings.warn(f"LegalizeOps: no legalization for {name}", stacklevel=2)
            return expr
        emitted = self.emitted()
        mark = len(emitted)
        try:
            ctx = LegalizeCtx(expr, op, sinfo_of(expr), self)
            result = rule(ctx)
        except LegalizeUnsupported:
            result = None
        if result is None:
            del emitted[mark:]  # the helpers of a rule that gave up
            return expr
        return self.legalize_expr(result) if result is not expr else expr


def _sharper(old: relax.StructInfo, new: relax.StructInfo) -> bool:
    """Whether `new` gives a shape where `old` has none, and agrees with it elsewhere."""
    if isinstance(old, relax.TensorStructInfo) and isinstance(new, relax.TensorStructInfo):
        return old.shape is None and isinstance(new.shape, tuple) and compatible(old, new)
    if isinstance(old, relax.TupleStructInfo) and isinstance(new, relax.TupleStructInfo):
        if len(old.fields) != len(new.fields):
            return False
        pairs = list(zip(old.fields, new.fields, strict=True))
        sharper = [_sharper(a, b) for a, b in pairs]
        return any(sharper) and all(s or a == b for s, (a, b) in zip(sharper, pairs, strict=True))
    return False
