"""Kernel calls against their prim function (part of TVM's well-formedness check):
each argument of `R.call_tir` must fit the parameter it is passed to (a tensor
the buffer's dtype, rank and known dims, a scalar the var's dtype), the output
struct info must fit the buffers the kernel writes (their dtype and rank, and
their dims when the inputs bind every symbolic dim of them), and an in-place
output must be its input: the same dtype and shape.

Only what is certain is refused: a kernel whose parameters do not line up with
the call (a build reports that, naming them) is not compared.
"""

from __future__ import annotations

from collections.abc import Sequence

from tvmlite.dsl import relax, tir
from tvmlite.dsl.arith import simplify
from tvmlite.dsl.call_tir import CallTIR
from tvmlite.dsl.verify.sinfo import compatible, sinfo_text, subst_prim

_ANY = relax.ObjectStructInfo()


def kernel_call_problem(
    view: CallTIR, kernel: tir.PrimFunc, args: Sequence[relax.StructInfo]
) -> str | None:
    """Why the call `view` of `kernel` (its arguments of struct info `args`) is
    ill-formed, or None."""
    inplace = dict(view.call.attrs).get("inplace_indices") or ()
    outputs = view.outputs
    for k, index in enumerate(inplace):
        if 0 <= index < len(args) and k < len(outputs):
            given, out = args[index], outputs[k]
            if not (compatible(out, given) and compatible(given, out)):
                return (
                    f"output {k} is {sinfo_text(out)}, but it is written in place into argument "
                    f"{index}, {sinfo_text(given)}: an in-place output has its input's shape "
                    "and dtype"
                )
    fresh = [out for k, out in enumerate(outputs) if k >= len(inplace) or inplace[k] < 0]
    tir_vars = view.tir_vars.values if isinstance(view.tir_vars, relax.ShapeExpr) else ()
    buffers = dict(kernel.buffer_map)
    bound: dict[tir.Var, tir.PrimExpr] = {}
    for k, (param, arg) in enumerate(zip(kernel.params, args, strict=False)):
        buffer = buffers.get(param)
        if buffer is not None and isinstance(arg, relax.TensorStructInfo):
            _bind(buffer.shape, arg.shape, bound)
        expected = _parameter(param, buffer, bound)
        if not compatible(expected, arg):
            return (
                f"argument {k} is {sinfo_text(arg)}, but the kernel takes "
                f"{sinfo_text(expected)} as {buffer.name if buffer is not None else param.name}"
            )
    if len(kernel.params) != len(args) + len(fresh) + len(tir_vars):
        return None
    trailing = kernel.params[len(args) + len(fresh) :]
    for var, value in zip(trailing, tir_vars, strict=True):
        bound.setdefault(var, value)
    for k, (param, out) in enumerate(zip(kernel.params[len(args) :], fresh, strict=False)):
        buffer = buffers.get(param)
        if buffer is None or not isinstance(out, relax.TensorStructInfo):
            continue
        written = _parameter(param, buffer, bound)
        if not compatible(out, written):
            return (
                f"output {k} is {sinfo_text(out)}, but the kernel writes "
                f"{sinfo_text(written)} as {buffer.name}"
            )
    return None


def _parameter(
    param: tir.Var, buffer: tir.Buffer | None, bound: dict[tir.Var, tir.PrimExpr]
) -> relax.StructInfo:
    """The struct info a kernel parameter takes: its buffer's tensor (with the dims
    `bound` knows; the shape left out when one is unknown, as TVM infers it) or
    its scalar."""
    if buffer is None:
        return relax.PrimStructInfo(param.dtype) if param.dtype != "handle" else _ANY
    dims = [subst_prim(d, bound) for d in buffer.shape]
    dims = [None if d is None else simplify(d) for d in dims]
    if any(d is None for d in dims):
        return relax.TensorStructInfo(None, buffer.dtype, len(dims))
    return relax.TensorStructInfo(tuple(dims), buffer.dtype, len(dims))  # type: ignore[arg-type]


def _bind(dims: tuple[tir.PrimExpr, ...], shape: object, bound: dict) -> None:
    if not isinstance(shape, tuple) or len(shape) != len(dims):
        return
    for dim, value in zip(dims, shape, strict=True):
        if isinstance(dim, tir.Var):
            bound.setdefault(dim, value)
