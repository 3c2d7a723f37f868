"""LegalizeOps: replace every high-level `R.<op>` call with `R.call_tir` of a prim
function that computes it.

This pass owns the Relax side of legalization: walking graph functions with
the Relax `ExprMutator`, replacing calls binding by binding (a rule may bind
helper values first, through the mutator's emitter),
naming kernels as TVM does (`add`, `add1`, ...) and sharing identical ones.
The kernels come from the rules in `lowering/legalize/`.

Models repeat themselves (layers, residual blocks), so most calls are the
same operator on arguments of the same types as an earlier call. Such a call
reuses the earlier call's result with its own arguments, without running the
rule again: building a kernel and comparing it with the ones already made
costs a thousand times more than the lookup, and a rule sees nothing of its
arguments but their struct info (and the values of constants, shapes and
prim values), so the kernel would be the same. Calls whose rule emitted helper
bindings are always legalized afresh. Functions marked `Compiler`, `Codegen`
or `Composite` (another codegen's) are left alone, and so are calls that have
no rule or already are `call_tir`, so running the pass twice changes nothing.
A binding whose legalized value knows a shape its var does not (an output
sized at run time, as `R.nonzero`'s) gets a new var with that shape, and later
uses see it (TVM's ExprMutator re-emits such bindings the same way), so the
operators after it can be legalized.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import TVMLiteError, did_you_mean
from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import CallTIR, call_tir
from tvmlite.dsl.module import TVM027, IRModule
from tvmlite.dsl.ops import lookup, sinfo_of
from tvmlite.dsl.ops.registry import op_names
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.structural import structural_equal, structural_hash
from tvmlite.dsl.tir_mutator import replace
from tvmlite.dsl.verify.sinfo import compatible
from tvmlite.lowering.legalize import registry
from tvmlite.lowering.legalize.registry import (
    LegalizeCtx,
    LegalizeFn,
    LegalizeUnsupported,
    attr_value,
)
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
            hint = did_you_mean(unknown[0], op_names(), quote=True)
            raise TVMLiteError(
                f"LegalizeOps: skip_ops names unknown operator '{unknown[0]}'"
                + (hint or " (operators are named as in TVM, e.g. 'relax.nn.conv2d')")
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
        self._counters: dict[str, int] = {}  # next suffix to try per kernel name
        self._memo: dict[Any, _Replay] = {}

    def add_kernel(self, name: str, func: tir.PrimFunc) -> relax.GlobalVar:
        """Add `func` under a fresh name, or reuse an identical kernel's."""
        key = structural_hash(func)
        for existing in self._by_hash.get(key, []):
            if structural_equal(self.kernels[existing], func):
                return relax.GlobalVar(existing)
        n = self._counters.get(name, 0)
        unique = f"{name}{n}" if n else name
        while unique in self.kernels or unique in self.mod.functions:
            n += 1
            unique = f"{name}{n}"
        self._counters[name] = n + 1
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
        key = _call_key(rule, expr)
        replay = self._memo.get(key) if key is not None else None
        if replay is not None:
            return replay.apply(expr)
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
        result = self.legalize_expr(result) if result is not expr else expr
        if key is not None and len(emitted) == mark:
            found = _Replay.of(result, expr)
            if found is not None:
                self._memo[key] = found
        return result


def why_left(call: relax.Call) -> str:
    """Why LegalizeOps leaves operator call `call` as it is, for the message of a
    build that meets it: the rule is tried again, on its own, for its reason."""
    name = call.op.name
    rule, op = registry.rule_for(name), lookup(name)
    if rule is None or op is None:
        return "tvmlite has no legalization for it"
    try:
        result = rule(LegalizeCtx(call, op, sinfo_of(call), KernelTable(IRModule(), {})))
    except LegalizeUnsupported as e:
        return f"its legalization does not handle this call ({e})"
    if result is None:
        return "its legalization does not handle this call"
    return (
        "it was not legalized (LegalizeOps is on by default, unless the PassContext config "
        f"{LEGALIZE_KEY} is False; tvmlite.transform.LegalizeOps() runs it)"
    )


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


def _call_key(rule: LegalizeFn, call: relax.Call) -> Any:
    """What a rule's result depends on: the operator, its attributes, the result's
    and the arguments' struct info, the values of non-var arguments, which
    arguments are the same var; None when an argument is of a kind the memo does
    not handle."""
    args = []
    for a in call.args:
        key = _arg_key(a)
        if key is None:
            return None
        args.append(key)
    leaves = [f for a in call.args for f in (a.fields if isinstance(a, relax.Tuple) else (a,))]
    first: dict[int, int] = {}
    same = tuple(first.setdefault(id(leaf), k) for k, leaf in enumerate(leaves))
    key = (rule, call.op.name, tuple(args), same, attr_value(call.attrs), call.sinfo_args)
    try:
        hash(key)
    except TypeError:  # an attribute value that is not hashable
        return None
    return key


def _arg_key(a: relax.Expr) -> Any:
    if isinstance(a, relax.Var):
        return ("var", a.struct_info)
    if isinstance(a, relax.Tuple):
        fields = [_arg_key(f) for f in a.fields]
        return None if any(f is None for f in fields) else ("tuple", tuple(fields))
    if isinstance(a, relax.Constant) and a.data.ndim:
        # Rules read the values of scalar constants only (they become immediates): a
        # tensor constant counts by its type, so a model's weights are never hashed.
        return ("tensor constant", a.data.dtype.str, a.data.shape, a.struct_info)
    if isinstance(a, relax.Constant | relax.ShapeExpr | relax.PrimValue):
        return a  # compared by value
    if isinstance(a, relax.StringImm | relax.DataTypeImm):
        return a
    return None


@dataclass(frozen=True)
class _Replay:
    """A `call_tir` legalization as a function of the call's arguments: each
    tensor argument is a path into the call's arguments (or a fixed value)."""

    call: CallTIR
    paths: tuple[Any, ...]

    @staticmethod
    def of(result: relax.Expr, call: relax.Call) -> _Replay | None:
        view = CallTIR.of(result)
        if view is None:
            return None
        paths = []
        for t in view.args:
            path = _path(t, call.args)
            if path is None:
                return None
            paths.append(path)
        return _Replay(view, tuple(paths))

    def apply(self, call: relax.Call) -> relax.Call:
        args = [_follow(path, call.args) for path in self.paths]
        old = self.call
        return call_tir(old.callee, args, old.out_sinfo, old.tir_vars)


def _path(t: relax.Expr, args: tuple[relax.Expr, ...]) -> Any:
    for k, a in enumerate(args):
        if t is a:
            return ("arg", k)
        if isinstance(a, relax.Tuple):
            for j, f in enumerate(a.fields):
                if t is f:
                    return ("field", k, j)
        if isinstance(t, relax.TupleGetItem) and t.tuple_value is a:
            return ("item", k, t.index)
    if isinstance(t, relax.Constant):
        return ("fixed", t)
    return None


def _follow(path: Any, args: tuple[relax.Expr, ...]) -> relax.Expr:
    kind = path[0]
    if kind == "arg":
        return args[path[1]]
    if kind == "field":
        return args[path[1]].fields[path[2]]
    if kind == "item":
        return relax.TupleGetItem(args[path[1]], path[2])
    return path[1]
