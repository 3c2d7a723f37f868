"""Quantization: quantize and dequantize, one elementwise kernel each, as TVM
legalizes them.

The scale and zero point are per tensor (a 0-d constant, passed as an
immediate, or a tensor whose dims are all 1) or per channel along `axis` (a
tensor with one element per channel, read row-major). quantize computes
`clip(round(x / scale) + zp)` (round half to even); dequantize
`(x - zp) * scale` in float32 (int32 for the subtraction of integer data),
clipped to `out_dtype`'s range unless that is float32. float8 types, which TVM's
inference admits, are left unlegalized: there is no float8 code generation.
"""

from __future__ import annotations

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import static_dims
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize
from tvmlite.lowering.legalize.sort import split_index

Param = te.Tensor | tir.PrimExpr


def _param(p: Param, index: tuple[tir.Var, ...], axis: int) -> tir.PrimExpr:
    """A scale or zero point at output position `index`: its only element, or the
    one of the channel `index[axis]` (counted row-major when the parameter has
    several dims, as `(3, 1)`, which TVM's inference admits but its kernel cannot
    index)."""
    if not isinstance(p, te.Tensor):
        return p
    if all(E.value_of(d) == 1 for d in p.shape):
        return p.load([E.idx(0)] * p.ndim)
    if p.ndim == 1:
        return p[index[axis]]
    dims = static_dims(p.shape, "a quantization parameter")
    return p.load(split_index(index[axis], dims))


def _no_float8(ctx: LegalizeCtx) -> None:
    if any(d.startswith("float8") for d in (ctx.attrs["out_dtype"], ctx.arg_sinfo[0].dtype)):  # type: ignore[union-attr]
        raise LegalizeUnsupported("float8 quantization (no float8 code generation)")


def clip_cast(value: tir.PrimExpr, dtype: str) -> tir.PrimExpr:
    """`value` clamped to `dtype`'s range, then cast to it."""
    return E.cast(E.maximum(E.minimum(value, E.max_value(dtype)), E.min_value(dtype)), dtype)


def _axis(ctx: LegalizeCtx) -> int:
    axis = ctx.attrs.get("axis", -1)
    ndim = len(ctx.arg_sinfo[0].shape)  # type: ignore[union-attr]
    return axis + ndim if axis < 0 else axis


@register_legalize("relax.quantize")
def legalize_quantize(ctx: LegalizeCtx) -> relax.Expr:
    _no_float8(ctx)
    out_dtype = ctx.attrs["out_dtype"]
    axis = _axis(ctx)

    def build(kb: te.KernelBuilder, x: te.Tensor, scale: Param, zp: Param) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            scaled = E.div(x[ax], _param(scale, ax, axis))
            scaled = E.call("round", scaled.dtype, scaled)
            return clip_cast(E.add(scaled, _param(zp, ax, axis)), out_dtype)

        return kb.compute(x.shape, body, "quantized")

    return ctx.call_te("quantize", build, scalar_consts=True)


@register_legalize("relax.dequantize")
def legalize_dequantize(ctx: LegalizeCtx) -> relax.Expr:
    _no_float8(ctx)
    out_dtype = ctx.attrs["out_dtype"]
    axis = _axis(ctx)

    def build(kb: te.KernelBuilder, x: te.Tensor, scale: Param, zp: Param) -> te.Tensor:
        wide = "float32" if dt.is_float(x.dtype) else "int32"

        def body(*ax: tir.Var) -> tir.PrimExpr:
            sub = E.sub(E.cast(x[ax], wide), _param(zp, ax, axis))
            out = E.mul(sub, E.cast(_param(scale, ax, axis), "float32"))
            return out if out_dtype == "float32" else clip_cast(out, out_dtype)

        return kb.compute(x.shape, body, "dequantized")

    return ctx.call_te("dequantize", build, scalar_consts=True)
