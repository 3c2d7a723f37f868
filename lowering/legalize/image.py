"""Image resizing: image.resize2d and resize3d with nearest-neighbour and
(bi/tri)linear interpolation, and resize2d with bicubic, in any order of the N, C
and spatial axes, following TOPI's coordinate transforms (`half_pixel`,
`align_corners`, `asymmetric`, `pytorch_half_pixel`, `tf_half_pixel_for_nn`),
rounding methods and cubic taps (clamped to the edge; `cubic_exclude` is not
supported)."""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.grid import cubic
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize

F = "float32"


Size = int | tir.PrimExpr  # a dim: an int, or the expression of a symbolic one


def _less_one(size: Size) -> Size:
    return size - 1 if isinstance(size, int) else E.sub(size, 1)


def _ratio(a: Size, b: Size) -> tir.PrimExpr:
    """`a / b` in float32: a constant when both are."""
    if isinstance(a, int) and isinstance(b, int):
        return E.const(a / b, F)
    return E.div(E.cast(a, F), E.cast(b, F))


def source_coord(mode: str, out: tir.PrimExpr, in_size: Size, out_size: Size) -> tir.PrimExpr:
    """The input coordinate (float) that output position `out` samples; sizes
    may be symbolic (the scale is then computed at run time)."""
    x = E.cast(out, F)
    if mode == "align_corners":
        if isinstance(out_size, int) and out_size <= 1:
            return E.mul(x, E.const(0.0, F))
        scale = _ratio(_less_one(in_size), _less_one(out_size))
        if not isinstance(out_size, int):
            scale = E.select(E.binary("lt", E.idx(1), out_size), scale, E.const(0.0, F))
        return E.mul(x, scale)
    scale = _ratio(in_size, out_size)
    if mode == "asymmetric":
        return E.mul(x, scale)
    if mode == "tf_half_pixel_for_nn":
        return E.mul(E.add(x, E.const(0.5, F)), scale)
    if mode == "pytorch_half_pixel" and out_size == 1:
        return E.const(0, F)
    if mode in ("half_pixel", "pytorch_half_pixel"):
        coord = E.sub(E.mul(E.add(x, E.const(0.5, F)), scale), E.const(0.5, F))
        if mode == "pytorch_half_pixel" and not isinstance(out_size, int):
            return E.select(E.binary("eq", out_size, E.idx(1)), E.const(0, F), coord)
        return coord
    raise LegalizeUnsupported(f"resize coordinate mode {mode!r}")


def _size(e: tir.PrimExpr) -> Size:
    v = E.value_of(e)
    return v if isinstance(v, int) else e


def _nearest_index(x: tir.PrimExpr, rounding: str, mode: str, size: Size) -> tir.PrimExpr:
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


def _clamp(i: tir.PrimExpr, size: Size) -> tir.PrimExpr:
    return E.minimum(E.maximum(i, E.idx(0)), E.sub(E.idx(size), 1))


def resize_compute(
    kb: te.KernelBuilder, x: te.Tensor, attrs: dict, out: tuple[tir.PrimExpr, ...], spatial: str
) -> te.Tensor:
    """Resize over the `spatial` axes (`"HW"`, `"DHW"`) of `attrs["layout"]`: the
    nearest input, or linear interpolation axis by axis (outermost last), as
    TOPI's `_lerp` nests them."""
    layout, method = attrs["layout"], attrs["method"]
    mode, rounding = attrs["coordinate_transformation_mode"], attrs["rounding_method"]
    axes = [layout.index(letter) for letter in spatial]
    sizes = [(_size(x.shape[a]), _size(out[a])) for a in axes]
    dtype = attrs.get("out_dtype") or x.dtype

    def body(*ax: tir.Var) -> tir.PrimExpr:
        coords = [
            source_coord(mode, ax[a], i, o)  # type: ignore[arg-type]
            for a, (i, o) in zip(axes, sizes, strict=True)
        ]

        def at(picks: list[tir.PrimExpr]) -> tir.PrimExpr:
            index = list(ax)
            for a, p in zip(axes, picks, strict=True):
                index[a] = p
            return E.cast(x.load(index), F)

        if method == "nearest_neighbor":
            picks = [
                _nearest_index(c, rounding, mode, i)  # type: ignore[arg-type]
                for c, (i, _) in zip(coords, sizes, strict=True)
            ]
            return E.cast(at(picks), dtype)
        if method == "cubic":
            return E.cast(_bicubic(coords, [i for i, _ in sizes], at, attrs), dtype)
        one = E.const(1, F)
        lows, highs, fracs = [], [], []
        for c, (size, _) in zip(coords, sizes, strict=True):
            floor = E.call("floor", F, c)
            low = E.cast(floor, "int64")
            lows.append(_clamp(low, size))  # type: ignore[arg-type]
            highs.append(_clamp(E.add(low, 1), size))  # type: ignore[arg-type]
            fracs.append(E.sub(c, floor))

        def lerp(k: int, picks: list[tir.PrimExpr]) -> tir.PrimExpr:
            if k == len(axes):
                return at(picks)
            a, b = lerp(k + 1, [*picks, lows[k]]), lerp(k + 1, [*picks, highs[k]])
            return E.add(E.mul(a, E.sub(one, fracs[k])), E.mul(b, fracs[k]))

        return E.cast(lerp(0, []), dtype)

    return kb.compute(out, body, "resize", prefix="i")


def _bicubic(coords: list, sizes: list[int], at, attrs: dict) -> tir.PrimExpr:  # noqa: ANN001
    """Rows of four taps around the point, each interpolated along the last axis, then
    the rows along the first (TOPI's order)."""
    floors = [E.call("floor", F, c) for c in coords]
    fracs = [E.sub(c, f) for c, f in zip(coords, floors, strict=True)]
    alpha = float(attrs.get("cubic_alpha", -0.75))

    def tap(k: int, offset: int) -> tir.PrimExpr:
        return _clamp(E.add(E.cast(floors[k], "int64"), offset), sizes[k])

    rows = [
        cubic([at([tap(0, i - 1), tap(1, j - 1)]) for j in range(4)], fracs[1], alpha)
        for i in range(4)
    ]
    return cubic(rows, fracs[0], alpha)


def _legalize_resize(ctx: LegalizeCtx, spatial: str) -> relax.Expr:
    attrs = {**ctx.attrs, "name": ctx.op.display}
    methods = (
        ("nearest_neighbor", "linear", "cubic")
        if spatial == "HW"
        else ("nearest_neighbor", "linear")
    )
    if attrs["method"] not in methods:
        raise LegalizeUnsupported(f"{ctx.op.display} method {attrs['method']!r}")
    if attrs["method"] == "cubic" and attrs.get("cubic_exclude", 0):
        raise LegalizeUnsupported(f"{ctx.op.display} with cubic_exclude")
    if sorted(attrs["layout"]) != sorted("NC" + spatial):
        raise LegalizeUnsupported(f"{ctx.op.display} layout {attrs['layout']}")
    roi = attrs.get("roi") or ()
    if any(float(getattr(r, "value", r)) != 0.0 for r in roi):
        raise LegalizeUnsupported(f"{ctx.op.display} with a region of interest")
    out = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        return resize_compute(kb, x, attrs, out, spatial)

    return ctx.call_te(ctx.op.name.removeprefix("relax.image."), build, args=ctx.args[:1])


@register_legalize("relax.image.resize2d")
def legalize_resize2d(ctx: LegalizeCtx) -> relax.Expr:
    return _legalize_resize(ctx, "HW")


@register_legalize("relax.image.resize3d")
def legalize_resize3d(ctx: LegalizeCtx) -> relax.Expr:
    return _legalize_resize(ctx, "DHW")
