"""Rules of Relax functions that the parser and every pass must keep (TVM's
WellFormed). Structural rules hold for everything the parser builds: dataflow
vars used only inside their block, each var bound once, `call_tir` with a prim
function, a tuple and the output struct info, module calls with the right number
of arguments. Semantic rules are what TVM's parser lets through with its
well-formedness check off (and what TVM's own tests print), so parsing keeps such
a module faithfully and `lower`/`build` refuse it: vars used only when bound and
in scope, a public function's `global_symbol` equal to its name, calls only of
functions that exist, bodies and bindings that match their annotations, binary
operators on one dtype, no negative constant tensor dim, no operator from outside
Relax, and purity: no impure call (`R.call_packed`, `R.print`, `R.assert_op`, a
`pure=False` function...) inside a dataflow block or a pure function.

Also the struct-info helpers both the parser and the checks need: the struct
info of an expression, whether an annotation fits an inferred struct info, and
a short text form for messages.
"""

from __future__ import annotations

from collections.abc import Mapping

from tvmlite.diagnostics import Span, VerifyError
from tvmlite.dsl import ops, relax, tir
from tvmlite.dsl.call_tir import KERNEL_CALLS, CallTIR
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_functor import ExprVisitor

# Calls whose result struct info is stated by `sinfo_args` (out_sinfo / ty_args).
SINFO_ARG_OPS = frozenset(
    {
        "relax.call_tir",
        "relax.call_tir_inplace",
        "relax.call_dps_packed",
        "relax.call_pure_packed",
        "relax.call_inplace_packed",
        "relax.call_builtin_with_ctx",
        "relax.dist.call_tir",
        "relax.dist.call_tir_local_view",
    }
)
VOID_OPS = frozenset({"relax.print", "relax.assert_op"})
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
VOID = relax.TupleStructInfo(())
_OPAQUE = relax.FuncStructInfo(None, relax.ObjectStructInfo())

# ---------------------------------------------------------------- text for messages

_PRIM_SYMBOLS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "floordiv": "//",
    "floormod": "%",
    "mod": "%",
}


def prim_text(e: tir.PrimExpr) -> str:
    if isinstance(e, tir.IntImm):
        return str(e.value)
    if isinstance(e, tir.FloatImm):
        return repr(e.value)
    if isinstance(e, tir.Var):
        return e.name
    if isinstance(e, tir.BinaryOp) and e.kind in _PRIM_SYMBOLS:
        return f"{prim_text(e.a)} {_PRIM_SYMBOLS[e.kind]} {prim_text(e.b)}"
    if isinstance(e, tir.BinaryOp):
        return f"T.{e.kind}({prim_text(e.a)}, {prim_text(e.b)})"
    return "..."


def sinfo_text(si: relax.StructInfo) -> str:
    """Struct info as it is written (`R.Tensor((4, 16), dtype="float32")`)."""
    if isinstance(si, relax.TensorStructInfo):
        parts = []
        if isinstance(si.shape, tuple):
            dims = ", ".join(prim_text(d) for d in si.shape)
            parts.append(f"({dims},)" if len(si.shape) == 1 else f"({dims})")
        elif isinstance(si.shape, relax.Var):
            parts.append(si.shape.name)
        if si.dtype != "void":
            parts.append(f'dtype="{si.dtype}"')
        if si.shape is None and si.ndim != -1:
            parts.append(f"ndim={si.ndim}")
        if isinstance(si, relax.DTensorStructInfo):  # positional, as TVM prints it
            quoted = [f'"{t}"' for t in (si.dtype, si.device_mesh, si.placement)]
            return f"R.DTensor({', '.join([parts[0], *quoted])})"
        return f"R.Tensor({', '.join(parts)})" if parts else "R.Tensor"
    if isinstance(si, relax.ShapeStructInfo):
        if si.values is not None:
            return f"R.Shape([{', '.join(prim_text(v) for v in si.values)}])"
        return f"R.Shape(ndim={si.ndim})"
    if isinstance(si, relax.TupleStructInfo):
        return f"R.Tuple({', '.join(sinfo_text(f) for f in si.fields)})" if si.fields else "R.Tuple"
    if isinstance(si, relax.PrimStructInfo):
        return f'R.Prim("{si.dtype}")'
    if isinstance(si, relax.FuncStructInfo):
        return "R.Callable"
    return "R.Object"


# ---------------------------------------------------------------- compatibility


def _shapes_conflict(a: tuple[tir.PrimExpr, ...], b: tuple[tir.PrimExpr, ...]) -> bool:
    """Whether some pair of dims (up to the shorter rank) conflicts; a plain loop
    because every annotated binding asks."""
    for x, y in zip(a, b, strict=False):
        if isinstance(x, tir.IntImm) and isinstance(y, tir.IntImm) and x.value != y.value:
            return True
    return False


def compatible(ann: relax.StructInfo, inferred: relax.StructInfo) -> bool:
    """Whether a value of struct info `inferred` may be annotated `ann`: same kind,
    and no known dtype, rank or static dimension that disagrees. Symbolic dims
    are not compared (they may be equal at run time)."""
    if isinstance(ann, relax.ObjectStructInfo) or isinstance(inferred, relax.ObjectStructInfo):
        return True
    if isinstance(ann, relax.DTensorStructInfo) and isinstance(inferred, relax.DTensorStructInfo):
        if (ann.device_mesh, ann.placement) != (inferred.device_mesh, inferred.placement):
            return False
    elif isinstance(ann, relax.DTensorStructInfo) and type(inferred) is relax.TensorStructInfo:
        pass  # an operator on distributed tensors infers the global tensor only
    elif type(ann) is not type(inferred):
        return False
    if isinstance(ann, relax.TensorStructInfo):
        assert isinstance(inferred, relax.TensorStructInfo)
        if "void" not in (ann.dtype, inferred.dtype) and ann.dtype != inferred.dtype:
            return False
        if -1 not in (ann.ndim, inferred.ndim) and ann.ndim != inferred.ndim:
            return False
        if isinstance(ann.shape, tuple) and isinstance(inferred.shape, tuple):
            return not _shapes_conflict(ann.shape, inferred.shape)
        return True
    if isinstance(ann, relax.ShapeStructInfo):
        assert isinstance(inferred, relax.ShapeStructInfo)
        if -1 not in (ann.ndim, inferred.ndim) and ann.ndim != inferred.ndim:
            return False
        if ann.values is not None and inferred.values is not None:
            return not _shapes_conflict(ann.values, inferred.values)
        return True
    if isinstance(ann, relax.TupleStructInfo):
        assert isinstance(inferred, relax.TupleStructInfo)
        return len(ann.fields) == len(inferred.fields) and all(
            compatible(a, b) for a, b in zip(ann.fields, inferred.fields, strict=False)
        )
    if isinstance(ann, relax.PrimStructInfo):
        assert isinstance(inferred, relax.PrimStructInfo)
        return ann.dtype == inferred.dtype
    return True


def join(a: relax.StructInfo, b: relax.StructInfo) -> relax.StructInfo:
    """The struct info of a value that is `a` or `b` (the two arms of an if)."""
    if a == b:
        return a
    if isinstance(a, relax.TensorStructInfo) and isinstance(b, relax.TensorStructInfo):
        dtype = a.dtype if a.dtype == b.dtype else "void"
        ndim = a.ndim if a.ndim == b.ndim else -1
        return relax.TensorStructInfo(None, dtype, ndim)
    both_tuples = isinstance(a, relax.TupleStructInfo) and isinstance(b, relax.TupleStructInfo)
    if both_tuples and len(a.fields) == len(b.fields):
        return relax.TupleStructInfo(
            tuple(join(x, y) for x, y in zip(a.fields, b.fields, strict=False))
        )
    both_prims = isinstance(a, relax.PrimStructInfo) and isinstance(b, relax.PrimStructInfo)
    if both_prims and a.dtype == b.dtype:
        return relax.PrimStructInfo(a.dtype)
    return relax.ObjectStructInfo()


# ---------------------------------------------------------------- struct info of expressions


def signatures_of(mod: IRModule) -> dict[str, relax.FuncStructInfo]:
    """Each module function's struct info, as calls to it see it."""
    sigs: dict[str, relax.FuncStructInfo] = {}
    for name, func in mod.functions.items():
        if isinstance(func, relax.Function):
            params = tuple(p.struct_info for p in func.params)
            sigs[name] = relax.FuncStructInfo(params, func.ret_struct_info, func.is_pure)
        elif isinstance(func, tir.PrimFunc):
            sigs[name] = prim_signature(len(func.params))
        else:
            sigs[name] = _OPAQUE
    return sigs


def prim_signature(n_params: int) -> relax.FuncStructInfo:
    """How Relax sees a prim function called directly: n values in, nothing out."""
    return relax.FuncStructInfo((relax.ObjectStructInfo(),) * n_params, VOID, False)


def struct_info_of(
    expr: relax.Expr, signatures: Mapping[str, relax.FuncStructInfo], span: Span | None = None
) -> relax.StructInfo:
    """The struct info of a normalized expression (call arguments are leaves)."""
    if isinstance(expr, relax.Var):
        return expr.struct_info
    if isinstance(expr, relax.Call):
        return _call_sinfo(expr, signatures, span)
    if isinstance(expr, relax.Tuple):
        return relax.TupleStructInfo(tuple(struct_info_of(f, signatures) for f in expr.fields))
    if isinstance(expr, relax.TupleGetItem):
        tup = struct_info_of(expr.tuple_value, signatures)
        if isinstance(tup, relax.TupleStructInfo) and 0 <= expr.index < len(tup.fields):
            return tup.fields[expr.index]
        return relax.ObjectStructInfo()
    if isinstance(expr, relax.Constant):
        if expr.struct_info is not None:
            return expr.struct_info
        shape = tuple(tir.IntImm("int64", d) for d in expr.data.shape)
        return relax.TensorStructInfo(shape, str(expr.data.dtype), len(shape))
    if isinstance(expr, relax.ShapeExpr):
        return relax.ShapeStructInfo(expr.values, len(expr.values))
    if isinstance(expr, relax.PrimValue):
        return relax.PrimStructInfo(expr.value.dtype, expr.value)
    if isinstance(expr, relax.GlobalVar):
        return signatures.get(expr.name, _OPAQUE)
    if isinstance(expr, relax.ExternFunc):
        return _OPAQUE
    if isinstance(expr, relax.StringImm):
        return relax.StringStructInfo()
    if isinstance(expr, relax.If):
        return join(
            struct_info_of(expr.true_branch, signatures),
            struct_info_of(expr.false_branch, signatures),
        )
    if isinstance(expr, relax.SeqExpr):
        return struct_info_of(expr.body, signatures)
    if isinstance(expr, relax.Function):
        params = tuple(p.struct_info for p in expr.params)
        return relax.FuncStructInfo(params, expr.ret_struct_info, expr.is_pure)
    return relax.ObjectStructInfo()


def _call_sinfo(
    call: relax.Call, signatures: Mapping[str, relax.FuncStructInfo], span: Span | None
) -> relax.StructInfo:
    op = call.op
    if isinstance(op, relax.Op):
        if op.name in SINFO_ARG_OPS:
            return _from_sinfo_args(call)
        if op.name in VOID_OPS:
            return VOID
        if op.name == "relax.null_value":
            return relax.ObjectStructInfo()
        return ops.infer_struct_info(call, span or call.span)
    if isinstance(op, relax.ExternFunc):
        return _from_sinfo_args(call)
    callee = struct_info_of(op, signatures)
    if isinstance(callee, relax.FuncStructInfo):
        args = [struct_info_of(a, signatures) for a in call.args]
        return call_result(callee, args)
    return relax.ObjectStructInfo()


def _from_sinfo_args(call: relax.Call) -> relax.StructInfo:
    if len(call.sinfo_args) == 1:
        return call.sinfo_args[0]
    if call.sinfo_args:
        return relax.TupleStructInfo(call.sinfo_args)
    return relax.ObjectStructInfo()


# ---------------------------------------------------------------- calls of functions


def call_result(callee: relax.FuncStructInfo, args: list[relax.StructInfo]) -> relax.StructInfo:
    """The callee's return struct info with its symbolic dims replaced by what the
    arguments bind them to; a dim that stays unknown erases that shape."""
    if callee.params is None:
        return callee.ret
    bound: dict[tir.Var, tir.PrimExpr] = {}
    for param, arg in zip(callee.params, args, strict=False):
        _match(param, arg, bound)
    return _subst_sinfo(callee.ret, bound)


def _match(param: relax.StructInfo, arg: relax.StructInfo, bound: dict) -> None:
    if isinstance(param, relax.TensorStructInfo) and isinstance(arg, relax.TensorStructInfo):
        if isinstance(param.shape, tuple) and isinstance(arg.shape, tuple):
            for p, a in zip(param.shape, arg.shape, strict=False):
                if isinstance(p, tir.Var):
                    bound.setdefault(p, a)
    elif isinstance(param, relax.ShapeStructInfo) and isinstance(arg, relax.ShapeStructInfo):
        if param.values is not None and arg.values is not None:
            for p, a in zip(param.values, arg.values, strict=False):
                if isinstance(p, tir.Var):
                    bound.setdefault(p, a)
    elif isinstance(param, relax.PrimStructInfo) and isinstance(arg, relax.PrimStructInfo):
        if isinstance(param.value, tir.Var) and arg.value is not None:
            bound.setdefault(param.value, arg.value)
    elif isinstance(param, relax.TupleStructInfo) and isinstance(arg, relax.TupleStructInfo):
        for p, a in zip(param.fields, arg.fields, strict=False):
            _match(p, a, bound)


def _subst_prim(e: tir.PrimExpr, bound: dict) -> tir.PrimExpr | None:
    if isinstance(e, tir.Var):
        return bound.get(e)
    if isinstance(e, (tir.IntImm, tir.FloatImm)):
        return e
    if isinstance(e, tir.BinaryOp):
        a, b = _subst_prim(e.a, bound), _subst_prim(e.b, bound)
        if a is None or b is None:
            return None
        return tir.BinaryOp(e.kind, a, b, e.dtype)
    return None


def _subst_sinfo(si: relax.StructInfo, bound: dict) -> relax.StructInfo:
    if isinstance(si, relax.TensorStructInfo) and isinstance(si.shape, tuple):
        dims = [_subst_prim(d, bound) for d in si.shape]
        if any(d is None for d in dims):
            return relax.TensorStructInfo(None, si.dtype, si.ndim, si.vdevice)
        return relax.TensorStructInfo(tuple(dims), si.dtype, si.ndim, si.vdevice)  # type: ignore[arg-type]
    if isinstance(si, relax.ShapeStructInfo) and si.values is not None:
        values = [_subst_prim(d, bound) for d in si.values]
        if any(v is None for v in values):
            return relax.ShapeStructInfo(None, si.ndim)
        return relax.ShapeStructInfo(tuple(values), si.ndim)  # type: ignore[arg-type]
    if isinstance(si, relax.PrimStructInfo) and si.value is not None:
        return relax.PrimStructInfo(si.dtype, _subst_prim(si.value, bound))
    if isinstance(si, relax.TupleStructInfo):
        return relax.TupleStructInfo(tuple(_subst_sinfo(f, bound) for f in si.fields))
    return si


# ---------------------------------------------------------------- the checks


def verify_module(mod: IRModule, symbols: bool = True, semantic: bool = True) -> None:
    """Check every Relax function of `mod`; raises a located VerifyError.
    `symbols=False` skips the global_symbol rule (a lone function, which TVM
    prints as `main` when its symbol is no identifier, is no module member).
    `semantic=False` checks the structural rules only (see the module docstring):
    what the parser asks, since TVM parses such modules and keeps them as written."""
    sigs = signatures_of(mod)
    for name, func in mod.functions.items():
        if isinstance(func, relax.Function):
            symbol = func.attr("global_symbol")
            if semantic and symbols and symbol is not None and str(symbol) != name:
                raise VerifyError(
                    f'function {name} has global_symbol "{symbol}": a public function\'s '
                    "global_symbol must be its name",
                    func.span,
                    func.span.source.filename if func.span is not None else None,
                )
            _FunctionChecker(mod, sigs, semantic).check(func)


def verify_function(func: relax.Function, mod: IRModule | None = None) -> None:
    """Check one Relax function (against `mod` when it belongs to one)."""
    _FunctionChecker(mod, signatures_of(mod) if mod else {}).check(func)


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
        semantic: bool = True,
    ) -> None:
        self.mod = mod
        self.sigs = sigs
        self.semantic = semantic
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
        if self.semantic and not compatible(func.ret_struct_info, body_sinfo):
            raise self.error(
                f"the function returns {sinfo_text(body_sinfo)} but its return annotation is "
                f"{sinfo_text(func.ret_struct_info)}",
                func.body.body,
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
        if self.semantic:
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
            if self.semantic:
                self._dims(var.struct_info, binding)
            if self.semantic and isinstance(binding, relax.VarBinding):
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
        if not self.semantic:
            return  # a declared free var (`gv: R.Tuple` alone), as TVM prints one
        if e not in self.bound:
            raise self.error(f"{e.name} is used but nothing binds it", e, self.where)
        raise self.error(f"{e.name} is used outside the scope that defines it", self.where, e)

    def visit_Call(self, e: relax.Call) -> None:
        if isinstance(e.op, relax.Op) and e.op.name in KERNEL_CALLS:
            self._call_tir(e, self.where)
        elif isinstance(e.op, relax.GlobalVar):
            self._global_call(e, e.op, self.where)
        if not self.semantic:
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
        if self.mod is None or not self.semantic:
            return
        callee = view.callee
        if callee.name not in self.mod.functions:
            raise self.error(f"{name} of unknown function {callee.name}", callee, call, where)
        if view.kernel(self.mod.functions) is None:
            raise self.error(
                f"{name} calls {callee.name}, which is not a prim function", callee, call, where
            )

    def _global_call(self, call: relax.Call, gv: relax.GlobalVar, where: object) -> None:
        if self.mod is None:
            return
        func = self.mod.functions.get(gv.name)
        if func is None and self.semantic:
            raise self.error(f"call of unknown function {gv.name}", gv, call, where)
        if isinstance(func, relax.Function) and len(func.params) != len(call.args):
            raise self.error(
                f"{gv.name} takes {len(func.params)} arguments but {len(call.args)} were given",
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
