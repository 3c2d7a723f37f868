"""Rules of Relax functions (TVM's WellFormed), in three levels, each what one
place asks:

- STRUCTURAL, what every parsed module and every pass keeps: dataflow vars used
  only inside their block, each var bound once, `call_tir` with a prim function,
  a tuple and the output struct info, module calls with the right number of
  arguments.
- WELL_FORMED, TVM's well-formedness check, which `tvmlite.parse` runs by default
  (`check_well_formed=False` keeps a module as TVM's own tests print it): vars used
  only when bound and in scope, a public function's `global_symbol` equal to its
  name, calls only of functions that exist and with arguments that fit their
  parameters, kernel calls whose output struct info fits the prim function (and
  in-place outputs their inputs), bindings that match their annotations, binary
  operators on one dtype, no operator from outside Relax, and purity: no impure
  call (`R.call_packed`, `R.print`, `R.assert_op`, a `pure=False` function...)
  inside a dataflow block or a pure function.
- BUILD, what `lower` and `build` ask on top, as TVM's builds do: bodies that
  match their return annotation, no negative constant tensor dim.

The struct info the rules compare is `sinfo.py`'s; the kernel-call rules are
`kernel_calls.py`'s.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from tvmlite.diagnostics import Span, VerifyError, did_you_mean
from tvmlite.dsl import ops, relax, tir
from tvmlite.dsl.call_tir import KERNEL_CALLS, CallTIR
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_functor import ExprVisitor
from tvmlite.dsl.verify.kernel_calls import kernel_call_problem
from tvmlite.dsl.verify.sinfo import compatible, signatures_of, sinfo_text, struct_info_of

STRUCTURAL, WELL_FORMED, BUILD = 0, 1, 2

# Operators with visible side effects (TVM's FPurity false); every other operator
# is pure. A packed call (`R.call_packed`) is impure too; `R.call_pure_packed`,
# `R.call_dps_packed` and `R.call_inplace_packed` promise it is not.
IMPURE_OPS = frozenset(
    {
        "relax.print",
        "relax.assert_op",
        "relax.invoke_closure",
        "relax.call_builtin_with_ctx",
        "relax.memory.kill_tensor",
        "relax.memory.kill_storage",
        "relax.vm.kill_object",
        "relax.vm.call_tir_dyn",
    }
)
FORCE_PURE = "relax.force_pure"  # TVM's kForcePure: the function is pure whatever it calls


# ---------------------------------------------------------------- the checks


def verify_module(
    mod: IRModule,
    symbols: bool = True,
    level: int = BUILD,
    lenient: Collection[str] = (),
) -> None:
    """Check every Relax function of `mod` at `level` (see the module docstring);
    raises a located VerifyError. `symbols=False` skips the global_symbol rule (a
    lone function, which TVM prints as `main` when its symbol is no identifier, is
    no module member). The functions named in `lenient` (written with
    `check_well_formed=False`) are checked at STRUCTURAL."""
    sigs = signatures_of(mod)
    for name, func in mod.functions.items():
        if not isinstance(func, relax.Function):
            continue
        own = STRUCTURAL if name in lenient else level
        symbol = func.attr("global_symbol")
        if own >= WELL_FORMED and symbols and symbol is not None and str(symbol) != name:
            raise VerifyError(
                f'function {name} has global_symbol "{symbol}": a public function\'s '
                "global_symbol must be its name",
                func.span,
                func.span.source.filename if func.span is not None else None,
            )
        _FunctionChecker(mod, sigs, own).check(func)


def verify_function(func: relax.Function, mod: IRModule | None = None) -> None:
    """Check one Relax function (against `mod` when it belongs to one)."""
    _FunctionChecker(mod, signatures_of(mod) if mod else {}, BUILD).check(func)


def _negative_dim(si: relax.StructInfo) -> tir.IntImm | None:
    if isinstance(si, relax.TensorStructInfo) and isinstance(si.shape, tuple):
        return next((d for d in si.shape if isinstance(d, tir.IntImm) and d.value < 0), None)
    inner: tuple[relax.StructInfo, ...] = ()
    if isinstance(si, relax.TupleStructInfo):
        inner = si.fields
    elif isinstance(si, relax.FuncStructInfo):
        inner = (*(si.params or ()), si.ret)
    return next((d for d in map(_negative_dim, inner) if d is not None), None)


class _FunctionChecker(ExprVisitor):
    """Scope and call rules over one function, nested functions included. `where`
    is the binding (or function) being checked: errors point at it too."""

    def __init__(
        self,
        mod: IRModule | None,
        sigs: Mapping[str, relax.FuncStructInfo],
        level: int,
    ) -> None:
        self.mod = mod
        self.sigs = sigs
        self.level = level
        self.defined: list[set[relax.Var]] = []
        self.closed: dict[relax.Var, Span | None] = {}
        self.bound: set[relax.Var] = set()  # every var bound so far: each only once
        self.where: object = None
        self.pure: list[relax.Function] = []  # enclosing function, when it must be pure
        self.dataflow = False  # inside a dataflow block of the innermost function

    def error(self, message: str, *nodes: object) -> VerifyError:
        span = next((n.span for n in nodes if getattr(n, "span", None) is not None), None)
        filename = span.source.filename if span is not None else None
        return VerifyError(message, span, filename)

    def check(self, func: relax.Function) -> None:
        self.visit_Function(func)
        body_sinfo = struct_info_of(func.body.body, self.sigs)
        if self.level >= BUILD and not compatible(func.ret_struct_info, body_sinfo):
            raise self.error(
                f"the function returns {sinfo_text(body_sinfo)} but its return annotation is "
                f"{sinfo_text(func.ret_struct_info)}",
                *(() if isinstance(func.body.body, relax.Var) else (func.body.body,)),
                func.body,
                func,
            )

    def is_defined(self, var: relax.Var) -> bool:
        return any(var in frame for frame in self.defined)

    def visit_struct_info(self, si: relax.StructInfo) -> None:
        pass  # annotations are checked against inferred struct info, not walked

    def _dims(self, si: relax.StructInfo, *nodes: object) -> None:
        """A tensor struct info with a negative constant dim (kept by the parser, as
        TVM keeps it) cannot be built."""
        dim = _negative_dim(si)
        if dim is not None:
            raise self.error(
                f"a shape dimension must not be negative, got {dim.value}", dim, *nodes
            )

    def visit_Function(self, e: relax.Function) -> None:
        outer, self.where = self.where, e
        if self.level >= BUILD:
            for si in (*(p.struct_info for p in e.params), e.ret_struct_info):
                self._dims(si, e)
        outer_pure, outer_dataflow = self.pure, self.dataflow
        self.pure = [e] if e.is_pure and not e.attr(FORCE_PURE) else []
        self.dataflow = False
        for param in e.params:
            self._bind_once(param, e)
        self.defined.append(set(e.params))
        try:
            self.visit_expr(e.body)
        finally:
            self.defined.pop()
            self.where = outer
            self.pure, self.dataflow = outer_pure, outer_dataflow

    def _bind_once(self, var: relax.Var, where: object) -> None:
        if var in self.bound:
            raise self.error(f"{var.name} is bound more than once", where, var)
        self.bound.add(var)

    def visit_SeqExpr(self, e: relax.SeqExpr) -> None:
        self.defined.append(set())
        owner = self.where
        for block in e.blocks:
            self.visit_binding_block(block)
        self.where = owner
        self.visit_expr(e.body)
        self.defined.pop()

    def visit_binding_block(self, block: relax.BindingBlock) -> None:
        local: list[relax.Var] = []
        outer_dataflow, self.dataflow = self.dataflow, block.is_dataflow
        for binding in block.bindings:
            self.where = binding
            var = binding.var
            if isinstance(binding.value, relax.Function):
                self.defined[-1].add(var)  # a local function may call itself
            self.visit_expr(binding.value)
            if self.level >= BUILD:
                self._dims(var.struct_info, binding)
            if self.level >= WELL_FORMED and isinstance(binding, relax.VarBinding):
                self._check_annotation(binding)
            self._bind_once(var, binding)
            if isinstance(var, relax.DataflowVar):
                if not block.is_dataflow:
                    raise self.error(
                        f"dataflow variable {var.name} is bound outside a dataflow block",
                        var,
                        binding,
                    )
                local.append(var)
            self.defined[-1].add(var)
        self.dataflow = outer_dataflow
        for var in local:
            self.defined[-1].discard(var)
            self.closed[var] = block.span

    def _check_annotation(self, binding: relax.VarBinding) -> None:
        if isinstance(binding.value, relax.Function):
            return  # a local function's struct info is its signature
        inferred = struct_info_of(binding.value, self.sigs)
        if not compatible(binding.var.struct_info, inferred):
            raise self.error(
                f"{binding.var.name} is annotated {sinfo_text(binding.var.struct_info)} but its "
                f"value is {sinfo_text(inferred)}{_bool_scan_hint(binding.value)}",
                binding,
            )

    def visit_Var(self, e: relax.Var) -> None:
        if self.is_defined(e):
            return
        if e in self.closed:
            raise self.error(
                f"dataflow variable {e.name} is used outside its dataflow block", self.where, e
            )
        if self.level < WELL_FORMED:
            return  # a declared free var (`gv: R.Tuple` alone), as TVM prints one
        if e not in self.bound:
            raise self.error(f"{e.name} is used but nothing binds it", e, self.where)
        raise self.error(f"{e.name} is used outside the scope that defines it", self.where, e)

    def visit_Call(self, e: relax.Call) -> None:
        if isinstance(e.op, relax.Op) and e.op.name in KERNEL_CALLS:
            self._call_tir(e, self.where)
        elif isinstance(e.op, relax.GlobalVar):
            self._global_call(e, e.op, self.where)
        if self.level < WELL_FORMED:
            super().visit_Call(e)
            return
        if isinstance(e.op, relax.Op) and not e.op.name.startswith("relax."):
            raise self.error(
                f"T.{e.op.name} is an operator registered outside Relax, which tvmlite "
                "does not know: the module cannot be built",
                e,
                self.where,
            )
        conflict = ops.dtype_conflict(e)
        if conflict is not None:
            raise self.error(conflict, e, self.where)
        impure = self._impure(e)
        if impure is not None and self.dataflow:
            raise self.error(
                f"{impure} has side effects: it cannot be inside a dataflow block "
                "(bind it after R.output, outside the block)",
                e,
                self.where,
            )
        if impure is not None and self.pure:
            name = self.pure[0].attr("global_symbol") or "this function"
            raise self.error(
                f"{impure} has side effects, but {name} is pure "
                "(declare it @R.function(pure=False))",
                e,
                self.where,
            )
        super().visit_Call(e)

    def _impure(self, call: relax.Call) -> str | None:
        """What makes `call` impure, for a message, or None when it is pure."""
        op = call.op
        if isinstance(op, relax.Op):
            return op.name.replace("relax.", "R.") if op.name in IMPURE_OPS else None
        if isinstance(op, relax.ExternFunc):
            return f"R.call_packed({op.global_symbol!r})"
        if isinstance(op, relax.GlobalVar) and self.mod is not None:
            func = self.mod.functions.get(op.name)
            if isinstance(func, relax.Function) and not func.is_pure:
                return f"the call of {op.name} (pure=False)"
            return None
        if isinstance(op, relax.Var):
            si = op.struct_info
            if isinstance(si, relax.FuncStructInfo) and not si.purity:
                return f"the call of {op.name} (an impure callable)"
        return None

    def _call_tir(self, call: relax.Call, where: object) -> None:
        name = call.op.name.replace("relax.", "R.")  # type: ignore[union-attr]
        view = CallTIR.of(call, KERNEL_CALLS)
        if view is None:
            raise self.error(
                f"{name} needs a prim function of the module, a tuple of arguments and the "
                "output struct info",
                call,
                where,
            )
        if self.mod is None or self.level < WELL_FORMED:
            return
        callee = view.callee
        if callee.name not in self.mod.functions:
            hint = did_you_mean(callee.name, self.mod.functions)
            raise self.error(f"{name} of unknown function {callee.name}{hint}", callee, call, where)
        kernel = view.kernel(self.mod.functions)
        if kernel is None:
            raise self.error(
                f"{name} calls {callee.name}, which is not a prim function", callee, call, where
            )
        args = [struct_info_of(a, self.sigs) for a in view.args]
        problem = kernel_call_problem(view, kernel, args)
        if problem is not None:
            raise self.error(f"{name} of {callee.name}: {problem}", call, where)

    def _global_call(self, call: relax.Call, gv: relax.GlobalVar, where: object) -> None:
        if self.mod is None:
            return
        func = self.mod.functions.get(gv.name)
        if func is None and self.level >= WELL_FORMED:
            hint = did_you_mean(gv.name, self.mod.functions)
            raise self.error(f"call of unknown function {gv.name}{hint}", gv, call, where)
        if not isinstance(func, relax.Function):
            return
        if len(func.params) != len(call.args):
            raise self.error(
                f"{gv.name} takes {len(func.params)} arguments but {len(call.args)} were given",
                call,
                where,
            )
        if self.level < WELL_FORMED:
            return
        for k, (param, arg) in enumerate(zip(func.params, call.args, strict=True)):
            given = struct_info_of(arg, self.sigs)
            if not compatible(param.struct_info, given):
                raise self.error(
                    f"argument {k} of {gv.name} ({param.name}) must be "
                    f"{sinfo_text(param.struct_info)}, got {sinfo_text(given)}",
                    call,
                    where,
                )


def _bool_scan_hint(value: relax.Expr) -> str:
    """Why a scan of bools is not bool: TVM 0.27 types `R.cumsum` of bools bool,
    which no scan can accumulate in; tvmlite counts in int64, as PyTorch does."""
    if not (
        isinstance(value, relax.Call)
        and isinstance(value.op, relax.Op)
        and value.op.name in ("relax.cumsum", "relax.cumprod")
        and value.args
    ):
        return ""
    data = ops.sinfo_of(value.args[0])
    if not isinstance(data, relax.TensorStructInfo) or data.dtype != "bool":
        return ""
    return (
        f" ({value.op.name.removeprefix('relax.')} of bools runs in int64, as in PyTorch and "
        "NumPy; TVM types it bool, which cannot be computed: annotate it int64)"
    )
