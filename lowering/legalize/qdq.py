"""Quantization: quantize and dequantize, one elementwise kernel each, as TVM
legalizes them.

The scale and zero point are per tensor (a 0-d constant, passed as an
immediate, or a tensor whose dims are all 1) or per channel along `axis` (a 1-d
tensor indexed by that axis). quantize computes `clip(round(x / scale) + zp)`
(no rounding for a float `out_dtype`); dequantize `(x - zp) * scale` in float32
(int32 for the subtraction of integer data), clipped to `out_dtype`'s range
unless that is float32.
"""

from __future__ import annotations

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx, register_legalize

Param = te.Tensor | tir.PrimExpr


def _param(p: Param, index: tuple[tir.Var, ...], axis: int) -> tir.PrimExpr:
    """A scale or zero point at output position `index`."""
    if not isinstance(p, te.Tensor):
        return p
    if all(E.value_of(d) == 1 for d in p.shape):
        return p.load([E.idx(0)] * p.ndim)
    return p[index[axis]]


def clip_cast(value: tir.PrimExpr, dtype: str) -> tir.PrimExpr:
    """`value` clamped to `dtype`'s range, then cast to it."""
    return E.cast(E.maximum(E.minimum(value, E.max_value(dtype)), E.min_value(dtype)), dtype)


def _axis(ctx: LegalizeCtx) -> int:
    axis = ctx.attrs.get("axis", -1)
    ndim = len(ctx.arg_sinfo[0].shape)  # type: ignore[union-attr]
    return axis + ndim if axis < 0 else axis


@register_legalize("relax.quantize")
def legalize_quantize(ctx: LegalizeCtx) -> relax.Expr:
    out_dtype = ctx.attrs["out_dtype"]
    axis = _axis(ctx)

    def build(kb: te.KernelBuilder, x: te.Tensor, scale: Param, zp: Param) -> te.Tensor:
        def body(*ax: tir.Var) -> tir.PrimExpr:
            scaled = E.div(x[ax], _param(scale, ax, axis))
            if "int" in out_dtype:
                scaled = E.call("round", scaled.dtype, scaled)
            return clip_cast(E.add(scaled, _param(zp, ax, axis)), out_dtype)

        return kb.compute(x.shape, body, "quantized")

    return ctx.call_te("quantize", build, scalar_consts=True)


@register_legalize("relax.dequantize")
def legalize_dequantize(ctx: LegalizeCtx) -> relax.Expr:
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
