"""Calls into other functions: call_tir (+ inplace, with_grad), call_dps_packed,
packed calls, builtins with context, and closures.

Their result struct info is stated in the text (`out_sinfo=`/`out_ty=` or
`sinfo_args=`/`ty_args=`) and kept in `Call.sinfo_args`; several outputs are
one `TupleStructInfo`, as TVM stores them. `R.call_packed` is not an operator
in TVM: it builds `Call(ExternFunc(symbol), args, sinfo_args=...)`.
"""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops.context import InferCtx, sinfo_of
from tvmlite.dsl.ops.convert import Fail
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, BuildCtx, OpDef, register
from tvmlite.dsl.ops.registry import OpPatternKind as K

OUT_KEYWORDS = ("out_sinfo", "out_ty")
TY_KEYWORDS = ("sinfo_args", "ty_args")


def _tuple_arg(ctx: BuildCtx, index: int) -> None:
    """A lone non-tuple argument list is wrapped in a tuple, as TVM does."""
    value = ctx.args[index]
    if value is None or isinstance(value, relax.Tuple):
        return
    if not isinstance(sinfo_of(value, ctx.span), relax.TupleStructInfo):
        ctx.args[index] = relax.Tuple((value,))


def build_dps_call(ctx: BuildCtx) -> None:
    _tuple_arg(ctx, 1)
    if not ctx.sinfo_args:
        Fail(ctx.op, ctx.span)("missing the output struct info (out_sinfo= / out_ty=)")
    if len(ctx.sinfo_args) > 1:
        ctx.sinfo_args = [relax.TupleStructInfo(tuple(ctx.sinfo_args))]


def build_tuple_args(ctx: BuildCtx) -> None:
    _tuple_arg(ctx, 1)


def infer_from_sinfo_args(ctx: InferCtx) -> relax.StructInfo:
    """The result is what the text states; none stated means an opaque object."""
    sinfo = ctx.call.sinfo_args
    if not sinfo:
        return relax.ObjectStructInfo()
    return sinfo[0] if len(sinfo) == 1 else relax.TupleStructInfo(tuple(sinfo))


def infer_dps_call(ctx: InferCtx) -> relax.StructInfo:
    callee = ctx.arg(0)
    if not isinstance(callee, (relax.GlobalVar, relax.ExternFunc, relax.Var)):
        ctx.fail(f"func must be a function, got {type(callee).__name__}")
    if ctx.nargs > 1 and not isinstance(ctx.sinfo(1), relax.TupleStructInfo):
        ctx.fail("args must be a tuple")
    if not ctx.call.sinfo_args:
        ctx.fail("missing the output struct info (out_sinfo= / out_ty=)")
    return infer_from_sinfo_args(ctx)


FUNC_ARGS = (ArgDef("func", "func"), ArgDef("args", "tuple"))
INPLACE = (AttrDef("inplace_indices", kind="ints"),)


def call_tir_op(name: str) -> OpDef:
    """call_tir's schema, for it and the distributed variants (`R.dist.call_tir`).
    Classic signatures: `call_tir(gvar, args, out_sinfo, tir_vars=None)`; 0.27 spells
    the third one `out_ty` and drops `tir_vars`."""
    return OpDef(
        name,
        (*FUNC_ARGS, ArgDef("tir_vars", "shape", None)),
        (),
        K.kOpaque,
        infer_dps_call,
        build_dps_call,
        sinfo_keywords=OUT_KEYWORDS,
        signature=("func", "args", "out_sinfo", "tir_vars"),
    )


register(call_tir_op("relax.call_tir"))
register(
    OpDef(
        "relax.call_tir_inplace",
        (*FUNC_ARGS, ArgDef("tir_vars", "shape", None)),
        INPLACE,
        K.kOpaque,
        infer_dps_call,
        build_dps_call,
        sinfo_keywords=OUT_KEYWORDS,
        signature=("func", "args", "inplace_indices", "out_sinfo", "tir_vars"),
    )
)
register(
    OpDef(
        "relax.call_tir_with_grad",
        (*FUNC_ARGS, ArgDef("tir_vars", "shape", None)),
        (AttrDef("te_grad_name", kind="str"), AttrDef("te_grad_kwargs", None, "dict?")),
        K.kOpaque,
        infer_dps_call,
        build_dps_call,
        sinfo_keywords=OUT_KEYWORDS,
        signature=("func", "args", "out_sinfo", "te_grad_name", "te_grad_kwargs", "tir_vars"),
    )
)
register(
    OpDef(
        "relax.call_dps_packed",
        FUNC_ARGS,
        (),
        K.kOpaque,
        infer_dps_call,
        build_dps_call,
        sinfo_keywords=OUT_KEYWORDS,
        signature=("func", "args", "out_sinfo"),
    )
)

PACKED_ARGS = (ArgDef("func", "func"), ArgDef("args", "any", variadic=True))
register(
    OpDef(
        "relax.call_pure_packed",
        PACKED_ARGS,
        (),
        K.kOpaque,
        infer_from_sinfo_args,
        sinfo_keywords=TY_KEYWORDS,
    )
)
register(
    OpDef(
        "relax.call_inplace_packed",
        PACKED_ARGS,
        INPLACE,
        K.kOpaque,
        infer_from_sinfo_args,
        sinfo_keywords=TY_KEYWORDS,
    )
)


def build_call_packed(ctx: BuildCtx) -> relax.Call:
    func, *args = ctx.args
    if not isinstance(func, relax.ExternFunc):
        Fail(ctx.op, ctx.span)('func must be a symbol name such as "vm.builtin.f"')
    return relax.Call(
        func,
        tuple(args),
        sinfo_args=tuple(ctx.sinfo_args),
        span=ctx.span,  # type: ignore[arg-type]
    )


register(
    OpDef(
        "relax.call_packed",
        PACKED_ARGS,
        (),
        K.kOpaque,
        infer_from_sinfo_args,
        build_call_packed,
        sinfo_keywords=TY_KEYWORDS,
    )
)
for _name in ("call_builtin_with_ctx", "invoke_closure", "invoke_pure_closure"):
    register(
        OpDef(
            f"relax.{_name}",
            (ArgDef("closure" if "closure" in _name else "func", "func"), ArgDef("args", "tuple")),
            (),
            K.kOpaque,
            infer_from_sinfo_args,
            build_tuple_args,
            sinfo_keywords=TY_KEYWORDS,
            signature=("closure" if "closure" in _name else "func", "args", "sinfo_args"),
        )
    )


# `R.call_py_func(R.str("name"), (args,), ty_args=...)`: a Python function of TVM's
# BasePyModule. Parsed and printed; no build runs Python functions.
register(
    OpDef(
        "relax.call_py_func",
        (ArgDef("func_name", "any"), ArgDef("args", "tuple")),
        (),
        K.kOpaque,
        infer_from_sinfo_args,
        build_tuple_args,
        sinfo_keywords=TY_KEYWORDS,
        signature=("func_name", "args", "sinfo_args"),
    )
)


def infer_make_closure(ctx: InferCtx) -> relax.StructInfo:
    return relax.FuncStructInfo(None, relax.ObjectStructInfo())


register(
    OpDef(
        "relax.make_closure",
        (ArgDef("func", "func"), ArgDef("args", "tuple")),
        (),
        K.kOpaque,
        infer_make_closure,
        build_tuple_args,
    )
)


def infer_void(ctx: InferCtx) -> relax.StructInfo:
    return relax.TupleStructInfo(())


register(
    OpDef(
        "relax.vm.call_tir_dyn",
        (ArgDef("func", "any"), ArgDef("args", "tuple")),  # R.str("f") stays a string
        (),
        K.kOpaque,
        infer_void,
        build_tuple_args,
    )
)
