"""Legalization rules: operator name -> function building its replacement.

A rule receives a `LegalizeCtx` for one `R.<op>` call and returns the Relax
expression that replaces it, usually `ctx.call_te(...)`, which builds a prim
function with the kernel builder and returns the `R.call_tir` of it. A rule may
also return other `R.*` calls (composite operators); the pass legalizes those
in turn. Rules are registered at import, or by users through
`register_legalize`, which replaces the built-in rule for that operator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tvmlite.dsl import arith, relax, tir
from tvmlite.dsl.analysis import free_vars, substitute
from tvmlite.dsl.call_tir import call_tir
from tvmlite.dsl.index_map import IndexMap
from tvmlite.dsl.ops import OpDef, OpPatternKind, make_call, sinfo_of
from tvmlite.lowering.analysis.relax_util import tir_vars
from tvmlite.lowering.legalize import te
from tvmlite.printer.relax_expr import index_map_script

LegalizeFn = Callable[["LegalizeCtx"], "relax.Expr | None"]
BuildFn = Callable[..., "te.Tensor | Sequence[te.Tensor]"]

_RULES: dict[str, LegalizeFn] = {}

# Function attribute keys carrying the operator a legalized kernel came from.
OP_NAME, OP_KIND, OP_ATTRS = "op_name", "op_kind", "op_attrs"
TVM_OP_NAME = "operator_name"  # what TVM's own kernels carry (AlterOpImpl, printed modules)


def register_legalize(name: str) -> Callable[[LegalizeFn], LegalizeFn]:
    """Decorator: make the decorated function the legalization of `name`
    (`"relax.add"`), replacing any earlier rule."""

    def wrap(fn: LegalizeFn) -> LegalizeFn:
        _RULES[name] = fn
        return fn

    return wrap


def rule_for(name: str) -> LegalizeFn | None:
    return _RULES.get(name)


def legalized_ops() -> list[str]:
    """Names of every operator with a legalization rule, sorted."""
    return sorted(_RULES)


class KernelSink(Protocol):
    """What a rule may emit into, through its `LegalizeCtx`: new kernels, and
    bindings placed before the call being replaced. LegalizeOps' kernel table is
    the one implementation; the rules know nothing else of the pass."""

    s_tir: bool  # new kernels are spelled as TVM 0.27 prints them

    def add_kernel(self, name: str, func: tir.PrimFunc) -> relax.GlobalVar:
        """Add `func` under a fresh name made from `name` (or reuse an identical
        kernel); the GlobalVar to call it by."""
        ...

    def emit(self, value: relax.Expr) -> relax.Var:
        """Bind `value` (legalized in turn) before the binding being rewritten."""
        ...

    def emit_match_cast(
        self, value: relax.Expr, struct_info: relax.StructInfo, name: str
    ) -> relax.Var:
        """Bind `R.match_cast(value, struct_info)` before the binding being rewritten."""
        ...


@dataclass
class LegalizeCtx:
    """One operator call being legalized, and the means to replace it."""

    call: relax.Call
    op: OpDef
    out_sinfo: relax.StructInfo
    table: KernelSink
    vmap: dict[tir.Var, tir.Var] = field(default_factory=dict)

    def __post_init__(self) -> None:
        values = [a for a in self.call.args if isinstance(a, relax.ShapeExpr | relax.PrimValue)]
        found = tir_vars((*self.arg_sinfo, self.out_sinfo, *values))
        self.vmap = {v: tir.Var(v.name, v.dtype) for v in found}

    @property
    def args(self) -> tuple[relax.Expr, ...]:
        return self.call.args

    @property
    def attrs(self) -> dict[str, Any]:
        return dict(self.call.attrs)

    @property
    def arg_sinfo(self) -> list[relax.StructInfo]:
        return [sinfo_of(a) for a in self.call.args]

    def k(self, e: tir.PrimExpr) -> tir.PrimExpr:
        """A Relax-level shape expression in the kernel's own vars."""
        return substitute(e, self.vmap)

    def out_shape(self, i: int | None = None) -> tuple[tir.PrimExpr, ...]:
        sinfo = self.out_sinfo if i is None else self.out_sinfo.fields[i]  # type: ignore[union-attr]
        if not isinstance(sinfo, relax.TensorStructInfo) or not isinstance(sinfo.shape, tuple):
            raise LegalizeUnsupported(f"{self.op.display}: result without a known shape")
        return tuple(self.k(d) for d in sinfo.shape)

    def out_dtype(self, i: int | None = None) -> str:
        sinfo = self.out_sinfo if i is None else self.out_sinfo.fields[i]  # type: ignore[union-attr]
        return sinfo.dtype

    def emit(self, expr: relax.Expr) -> relax.Var:
        """Bind `expr` (legalized in turn) before the call; returns its var."""
        return self.table.emit(expr)

    def emit_shape(self, counts: relax.Expr, names: Sequence[str]) -> tuple[tir.Var, ...]:
        """New int64 vars holding the values of the 1-d int64 tensor `counts` (a
        kernel's result), bound through `R.tensor_to_shape` and `R.match_cast`: how
        a data-dependent output size (nonzero) reaches the call that allocates it."""
        dims = tuple(tir.Var(n, "int64") for n in names)
        shape = self.emit(self.make_op("relax.tensor_to_shape", counts))
        self.table.emit_match_cast(shape, relax.ShapeStructInfo(dims, len(dims)), "lv")
        return dims

    def make_op(self, name: str, *args: Any, **kwargs: Any) -> relax.Call:
        """An `R.<op>` call built as the parser would (attributes normalized)."""
        return make_call(name, list(args), kwargs, self.call.span)

    def call_te(
        self,
        name: str,
        fbuild: BuildFn,
        args: Sequence[relax.Expr] | None = None,
        scalar_consts: bool = False,
        out_sinfo: relax.StructInfo | None = None,
        kind: OpPatternKind | None = None,
        scalars: Sequence[tir.Var] = (),
    ) -> relax.Call:
        """Build a kernel with `fbuild(kb, *inputs)` and call it through call_tir.

        Tensor arguments become placeholders named after their vars, a tuple
        argument a list of them; with `scalar_consts`, 0-d constants are passed
        as immediates instead (as TVM's binary legalizations do). `kind` overrides
        the op kind recorded on the kernel (the op's pattern by default).
        `scalars` are symbolic vars (the kernel's, from `k`) that the computation reads
        but no buffer shape holds: they are passed as scalar parameters too."""
        kb = te.KernelBuilder()
        inputs: list[Any] = []
        tensor_args: list[relax.Expr] = []
        placeholders: list[te.Tensor] = []
        for arg in self.args if args is None else args:
            inputs.append(self._input(kb, arg, scalar_consts, tensor_args, placeholders))
        result = fbuild(kb, *inputs)
        outputs = [result] if isinstance(result, te.Tensor) else list(result)
        params: list[te.Tensor | tir.Var] = [*placeholders, *outputs]
        extra = _undefined_vars(params)
        extra += [v for v in scalars if v not in extra and not _is_dim(v, params)]
        inverse = {kv: rv for rv, kv in self.vmap.items()}
        attrs = self.kernel_attrs(self.op.pattern if kind is None else kind)
        func = kb.build([*params, *extra], attrs, self.table.s_tir)
        gv = self.table.add_kernel(name, func)
        scalars = relax.ShapeExpr(tuple(inverse.get(v, v) for v in extra)) if extra else None
        sinfo = self.out_sinfo if out_sinfo is None else out_sinfo
        return call_tir(gv, tensor_args, sinfo, scalars)

    def kernel_attrs(self, kind: OpPatternKind) -> tuple[tuple[str, Any], ...]:
        """The attributes of a kernel legalizing this call: the operator it came
        from (name, kind, attributes) and no aliasing between its buffers."""
        noalias = "tirx.noalias" if self.table.s_tir else "tir.noalias"
        attrs = tuple((k, attr_value(v)) for k, v in self.call.attrs)
        return (
            (OP_ATTRS, attrs),
            (OP_KIND, kind.spelling),
            (OP_NAME, self.op.name),
            (noalias, True),
        )

    def _input(
        self,
        kb: te.KernelBuilder,
        arg: relax.Expr,
        scalar_consts: bool,
        tensor_args: list[relax.Expr],
        placeholders: list[te.Tensor],
    ) -> Any:
        if isinstance(arg, relax.Tuple):
            return [self._input(kb, f, False, tensor_args, placeholders) for f in arg.fields]
        if isinstance(arg, relax.PrimValue):
            return self.k(arg.value)
        if isinstance(arg, relax.ShapeExpr):
            return tuple(self.k(v) for v in arg.values)
        if isinstance(arg, (relax.StringImm, relax.DataTypeImm)):
            return arg.value
        if scalar_consts and isinstance(arg, relax.Constant) and arg.data.ndim == 0:
            return _scalar(arg)
        sinfo = sinfo_of(arg)
        if isinstance(sinfo, relax.TupleStructInfo):
            fields = [relax.TupleGetItem(arg, i) for i in range(len(sinfo.fields))]
            return [self._input(kb, f, False, tensor_args, placeholders) for f in fields]
        if not isinstance(sinfo, relax.TensorStructInfo) or not isinstance(sinfo.shape, tuple):
            raise LegalizeUnsupported(f"{self.op.display}: argument without a known shape")
        name = arg.name if isinstance(arg, relax.Var) else "A"
        t = kb.placeholder([self.k(d) for d in sinfo.shape], sinfo.dtype, name)
        tensor_args.append(arg)
        placeholders.append(t)
        return t


class LegalizeUnsupported(Exception):
    """A rule cannot legalize this particular call (unknown shape, odd attributes);
    the pass leaves the call as it is."""


def attr_value(value: Any) -> Any:
    """Operator attributes as function-attribute values (lists become tuples, an
    index map its text)."""
    if isinstance(value, IndexMap):
        return index_map_script(value)
    if isinstance(value, list):
        return tuple(attr_value(v) for v in value)
    return value


def _scalar(c: relax.Constant) -> tir.PrimExpr:
    dtype = "bool" if c.data.dtype.name == "bool" else str(c.data.dtype)
    return arith.const(c.data.item(), dtype)


def _is_dim(var: tir.Var, params: list[te.Tensor | tir.Var]) -> bool:
    return any(d is var for p in params if isinstance(p, te.Tensor) for d in p.shape)


def _undefined_vars(params: list[te.Tensor | tir.Var]) -> list[tir.Var]:
    """Symbolic vars that appear in buffer shapes but are no buffer's bare dim: the
    kernel takes them as scalar parameters."""
    dims = [d for p in params if isinstance(p, te.Tensor) for d in p.shape]
    return [v for v in free_vars(dims) if v not in dims]


def op_name_of(func: tir.PrimFunc) -> str | None:
    """The operator a kernel computes: tvmlite's `op_name` or TVM's `operator_name`."""
    name = func.attr(OP_NAME) or func.attr(TVM_OP_NAME)
    return str(name) if name is not None else None


def op_info(func: tir.PrimFunc) -> dict[str, Any] | None:
    """The operator a legalized kernel came from: {"name", "kind", "attrs"}, or None
    for a prim function that did not come from legalization. A kernel TVM made
    names it only (`operator_name`): its kind is the operator's registered one."""
    from tvmlite.dsl.ops import lookup

    name = op_name_of(func)
    if name is None:
        return None
    kind = func.attr(OP_KIND)
    if kind is None and lookup(name) is not None:
        kind = lookup(name).pattern.spelling
    return {"name": name, "kind": kind, "attrs": dict(func.attr(OP_ATTRS, ()))}
