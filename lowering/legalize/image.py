"""Image resizing: image.resize2d with nearest-neighbour and (bi)linear
interpolation, in NCHW or NHWC, following TOPI's coordinate transforms
(`half_pixel`, `align_corners`, `asymmetric`, `pytorch_half_pixel`,
`tf_half_pixel_for_nn`) and rounding methods. Cubic is left unlegalized."""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize

F = "float32"


def source_coord(mode: str, out: tir.PrimExpr, in_size: int, out_size: int) -> tir.PrimExpr:
    """The input coordinate (float) that output position `out` samples."""
    x = E.cast(out, F)
    if mode == "align_corners":
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        return E.mul(x, E.const(scale, F))
    scale = E.const(in_size / out_size, F)
    if mode == "asymmetric":
        return E.mul(x, scale)
    if mode == "tf_half_pixel_for_nn":
        return E.mul(E.add(x, E.const(0.5, F)), scale)
    if mode == "pytorch_half_pixel" and out_size == 1:
        return E.const(0, F)
    if mode in ("half_pixel", "pytorch_half_pixel"):
        return E.sub(E.mul(E.add(x, E.const(0.5, F)), scale), E.const(0.5, F))
    raise LegalizeUnsupported(f"resize coordinate mode {mode!r}")


def _nearest_index(x: tir.PrimExpr, rounding: str, mode: str, size: int) -> tir.PrimExpr:
    if rounding == "":
        rounding = "round" if mode == "align_corners" else "floor"
    half = E.const(0.5, F)
    if rounding == "round":
        v = E.call("round", F, x)
    elif rounding == "round_prefer_floor":
        v = E.call("ceil", F, E.sub(x, half))
    elif rounding == "round_prefer_ceil":
        v = E.call("floor", F, E.add(x, half))
    elif rounding == "floor":
        v = E.call("floor", F, x)
    else:
        v = E.call("ceil", F, x)
    return _clamp(E.cast(v, "int64"), size)


def _clamp(i: tir.PrimExpr, size: int) -> tir.PrimExpr:
    return E.minimum(E.maximum(i, E.idx(0)), E.idx(size - 1))


def resize2d_compute(
    kb: te.KernelBuilder, x: te.Tensor, attrs: dict, out: tuple[tir.PrimExpr, ...]
) -> te.Tensor:
    layout, method = attrs["layout"], attrs["method"]
    mode, rounding = attrs["coordinate_transformation_mode"], attrs["rounding_method"]
    hy, wx = layout.index("H"), layout.index("W")
    sizes = [E.value_of(x.shape[a]) for a in (hy, wx)] + [E.value_of(out[a]) for a in (hy, wx)]
    if not all(isinstance(s, int) for s in sizes):
        raise LegalizeUnsupported("resize2d with symbolic sizes")
    in_h, in_w, out_h, out_w = sizes  # type: ignore[misc]
    dtype = attrs.get("out_dtype") or x.dtype

    def body(*ax: tir.Var) -> tir.PrimExpr:
        ys = source_coord(mode, ax[hy], in_h, out_h)  # type: ignore[arg-type]
        xs = source_coord(mode, ax[wx], in_w, out_w)  # type: ignore[arg-type]

        def at(yi: tir.PrimExpr, xi: tir.PrimExpr) -> tir.PrimExpr:
            index = list(ax)
            index[hy], index[wx] = yi, xi
            return E.cast(x.load(index), F)

        if method == "nearest_neighbor":
            yi = _nearest_index(ys, rounding, mode, in_h)  # type: ignore[arg-type]
            xi = _nearest_index(xs, rounding, mode, in_w)  # type: ignore[arg-type]
            return E.cast(at(yi, xi), dtype)
        y0f, x0f = E.call("floor", F, ys), E.call("floor", F, xs)
        dy, dx = E.sub(ys, y0f), E.sub(xs, x0f)
        y0, x0 = E.cast(y0f, "int64"), E.cast(x0f, "int64")
        ya, yb = _clamp(y0, in_h), _clamp(E.add(y0, 1), in_h)  # type: ignore[arg-type]
        xa, xb = _clamp(x0, in_w), _clamp(E.add(x0, 1), in_w)  # type: ignore[arg-type]
        one = E.const(1, F)
        top = E.add(E.mul(at(ya, xa), E.sub(one, dx)), E.mul(at(ya, xb), dx))
        bottom = E.add(E.mul(at(yb, xa), E.sub(one, dx)), E.mul(at(yb, xb), dx))
        return E.cast(E.add(E.mul(top, E.sub(one, dy)), E.mul(bottom, dy)), dtype)

    return kb.compute(out, body, "resize", prefix="i")


@register_legalize("relax.image.resize2d")
def legalize_resize2d(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs
    if attrs["method"] not in ("nearest_neighbor", "linear"):
        raise LegalizeUnsupported(f"resize2d method {attrs['method']!r}")
    if sorted(attrs["layout"]) != sorted("NCHW"):
        raise LegalizeUnsupported(f"resize2d layout {attrs['layout']}")
    roi = attrs.get("roi") or ()
    if any(float(getattr(r, "value", r)) != 0.0 for r in roi):
        raise LegalizeUnsupported("resize2d with a region of interest")
    out = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        return resize2d_compute(kb, x, attrs, out)

    return ctx.call_te("resize2d", build, args=ctx.args[:1])
