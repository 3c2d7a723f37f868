"""`R.call_tir` taken apart, and put together.

The IR stores `R.call_tir(f, (x, y), out_sinfo=..., tir_vars=...)` as a plain
`relax.Call` of the operator `relax.call_tir` with the arguments `(GlobalVar f,
Tuple(x, y)[, ShapeExpr])` and the result struct info in `sinfo_args` (one
`TupleStructInfo` for several results). Passes, the verifier and codegen read
such a call through `CallTIR.of(expr)`, so the positions are known in one place,
and build one with `call_tir(...)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tvmlite.dsl import relax, tir

CALL_TIR = "relax.call_tir"
# Calls of a prim function of the module with destination-passing outputs.
KERNEL_CALLS = frozenset({CALL_TIR, "relax.call_tir_inplace"})


@dataclass(frozen=True, slots=True)
class CallTIR:
    """A kernel call: `callee` (the prim function's name), the tensor `args`, the
    `out_sinfo` of its result and `tir_vars` (the symbolic values passed as
    trailing scalar parameters, or None)."""

    call: relax.Call
    callee: relax.GlobalVar
    args: tuple[relax.Expr, ...]
    out_sinfo: relax.StructInfo
    tir_vars: relax.Expr | None

    @staticmethod
    def of(expr: Any, ops: frozenset[str] | tuple[str, ...] = (CALL_TIR,)) -> CallTIR | None:
        """The view of `expr` when it is a call of one of `ops` with a module function
        as callee, a tuple of arguments (a tuple literal, or a var holding a tuple: its
        fields are then `var[i]`) and one result struct info; else None."""
        if not (isinstance(expr, relax.Call) and isinstance(expr.op, relax.Op)):
            return None
        if expr.op.name not in ops or len(expr.sinfo_args) != 1 or not 2 <= len(expr.args) <= 3:
            return None
        callee, args = expr.args[0], expr.args[1]
        if not isinstance(callee, relax.GlobalVar):
            return None
        if isinstance(args, relax.Tuple):
            fields = args.fields
        elif isinstance(args, relax.Var) and isinstance(args.struct_info, relax.TupleStructInfo):
            fields = tuple(
                relax.TupleGetItem(args, i, span=args.span)
                for i in range(len(args.struct_info.fields))
            )
        else:
            return None
        tir_vars = expr.args[2] if len(expr.args) == 3 else None
        return CallTIR(expr, callee, fields, expr.sinfo_args[0], tir_vars)

    @property
    def outputs(self) -> tuple[relax.StructInfo, ...]:
        """The struct info of each result tensor (a tuple result has several)."""
        out = self.out_sinfo
        return out.fields if isinstance(out, relax.TupleStructInfo) else (out,)

    def kernel(self, functions: Mapping[str, Any]) -> tir.PrimFunc | None:
        """The prim function called, looked up in a module's `functions`."""
        func = functions.get(self.callee.name)
        return func if isinstance(func, tir.PrimFunc) else None


def call_tir(
    callee: relax.GlobalVar,
    args: Sequence[relax.Expr],
    out_sinfo: relax.StructInfo,
    tir_vars: relax.Expr | None = None,
) -> relax.Call:
    """`R.call_tir(callee, args, out_sinfo[, tir_vars])` as the IR stores it (the
    parser builds the same shape, with spans)."""
    call_args: tuple[relax.Expr, ...] = (callee, relax.Tuple(tuple(args)))
    if tir_vars is not None:
        call_args += (tir_vars,)
    return relax.Call(relax.Op(CALL_TIR), call_args, (), (out_sinfo,))
