"""Struct info of Relax expressions, for the parser and the checks alike (TVM's
normalizer): the struct info of a normalized expression and of a call of a
function, whether an annotation fits an inferred struct info, the join of two
branches, and the short text form messages use.
"""

from __future__ import annotations

from collections.abc import Mapping

from tvmlite.diagnostics import Span
from tvmlite.dsl import ops, relax, tir
from tvmlite.dsl.module import IRModule

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
            sigs[name] = prim_signature(len(func.params), func.ret_type)
        else:
            sigs[name] = _OPAQUE
    return sigs


def prim_signature(n_params: int, ret: str | None = None) -> relax.FuncStructInfo:
    """How Relax sees a prim function called directly: n values in, and the scalar
    of dtype `ret` out (nothing for None or "void")."""
    out = VOID if ret in (None, "void") else relax.PrimStructInfo(ret)
    return relax.FuncStructInfo((relax.ObjectStructInfo(),) * n_params, out, False)


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


def subst_prim(e: tir.PrimExpr, bound: dict) -> tir.PrimExpr | None:
    if isinstance(e, tir.Var):
        return bound.get(e)
    if isinstance(e, (tir.IntImm, tir.FloatImm)):
        return e
    if isinstance(e, tir.BinaryOp):
        a, b = subst_prim(e.a, bound), subst_prim(e.b, bound)
        if a is None or b is None:
            return None
        return tir.BinaryOp(e.kind, a, b, e.dtype)
    return None


def _subst_sinfo(si: relax.StructInfo, bound: dict) -> relax.StructInfo:
    if isinstance(si, relax.TensorStructInfo) and isinstance(si.shape, tuple):
        dims = [subst_prim(d, bound) for d in si.shape]
        if any(d is None for d in dims):
            return relax.TensorStructInfo(None, si.dtype, si.ndim, si.vdevice)
        return relax.TensorStructInfo(tuple(dims), si.dtype, si.ndim, si.vdevice)  # type: ignore[arg-type]
    if isinstance(si, relax.ShapeStructInfo) and si.values is not None:
        values = [subst_prim(d, bound) for d in si.values]
        if any(v is None for v in values):
            return relax.ShapeStructInfo(None, si.ndim)
        return relax.ShapeStructInfo(tuple(values), si.ndim)  # type: ignore[arg-type]
    if isinstance(si, relax.PrimStructInfo) and si.value is not None:
        return relax.PrimStructInfo(si.dtype, subst_prim(si.value, bound))
    if isinstance(si, relax.TupleStructInfo):
        return relax.TupleStructInfo(tuple(_subst_sinfo(f, bound) for f in si.fields))
    return si
