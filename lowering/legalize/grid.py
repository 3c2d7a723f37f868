"""Sampling grids: image.affine_grid and image.grid_sample, as TOPI computes them.

affine_grid maps a regular grid over `size` (2-d or 3-d), normalised to
[-1, 1], through each batch's affine matrix. grid_sample reads the input at
the grid's points (x first: `grid[n, 0]` is the innermost axis) after
un-normalising them, with `zeros` (reads outside the input give 0, so nothing
out of bounds is loaded), `border` (clamped) or `reflection` padding, and
bilinear (trilinear in 3-d), nearest or (2-d only) bicubic interpolation.
TOPI supports the NCHW and NCDHW layouts only, and so does this.
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize

I32 = "int32"
CUBIC_A = -0.75  # PyTorch's bicubic coefficient, which TOPI uses


@register_legalize("relax.image.affine_grid")
def legalize_affine_grid(ctx: LegalizeCtx) -> relax.Expr:
    size = [E.value_of(ctx.k(v)) for v in ctx.args[1].values]  # type: ignore[attr-defined]
    if not all(isinstance(s, int) for s in size) or len(size) not in (2, 3):
        raise LegalizeUnsupported("affine_grid needs a static 2-d or 3-d size")
    align = bool(ctx.attrs.get("align_corners", True))
    if align and any(s <= 1 for s in size):  # type: ignore[operator]
        raise LegalizeUnsupported("affine_grid with align_corners needs every size above 1")
    shape, ndim = ctx.out_shape(), len(size)

    def build(kb: te.KernelBuilder, theta: te.Tensor) -> te.Tensor:
        dtype = theta.dtype
        if align:
            starts = [-1.0] * ndim
            steps = [(2.0 - 1e-7) / (s - 1) for s in size]  # type: ignore[operator]
        else:
            starts = [-1.0 + 1.0 / s for s in size]  # type: ignore[operator]
            steps = [2.0 / s for s in size]  # type: ignore[operator]

        def body(n: tir.Var, dim: tir.Var, *coords: tir.Var) -> tir.PrimExpr:
            value = theta[n, dim, ndim]  # the translation column
            for r in range(ndim):
                coord = E.add(E.const(starts[r], dtype), E.mul(coords[r], E.const(steps[r], dtype)))
                value = E.add(value, E.mul(theta[n, dim, ndim - 1 - r], coord))
            return value

        return kb.compute(shape, body, "T_affine_grid")

    return ctx.call_te("affine_grid", build, args=ctx.args[:1])


class _Sampler:
    """The index arithmetic of one grid_sample kernel over a `rank`-d input."""

    def __init__(self, x: te.Tensor, grid: te.Tensor, padding: str, align: bool) -> None:
        self.x, self.grid, self.padding, self.align = x, grid, padding, align
        self.rank = x.ndim - 2
        self.sizes = [x.shape[2 + k] for k in range(self.rank)]

    def pixel(self, n: tir.Var, c: tir.Var, at: list[tir.PrimExpr]) -> tir.PrimExpr:
        """The input at integer position `at`, 0 outside it (and then not read)."""
        inside = [
            E.logical_and(
                E.binary("ge", p, E.const(0, p.dtype)), E.binary("lt", p, E.cast(s, p.dtype))
            )
            for p, s in zip(at, self.sizes, strict=True)
        ]
        cond = inside[0]
        for more in inside[1:]:
            cond = E.logical_and(cond, more)
        return E.if_then_else(cond, self.x.load([n, c, *at]), E.const(0.0, self.x.dtype))

    def unnormalize(self, v: tir.PrimExpr, size: tir.PrimExpr) -> tir.PrimExpr:
        f = E.cast(size, v.dtype)
        if self.align:
            return E.div(E.mul(E.add(v, 1.0), E.sub(f, 1.0)), 2.0)
        return E.add(-0.5, E.div(E.mul(E.add(v, 1.0), f), 2.0))

    def clip(self, v: tir.PrimExpr, size: tir.PrimExpr) -> tir.PrimExpr:
        return E.minimum(E.maximum(v, E.const(0, v.dtype)), E.cast(E.sub(size, 1), v.dtype))

    def reflect(self, v: tir.PrimExpr, size: tir.PrimExpr) -> tir.PrimExpr:
        """TOPI's reflection about the border (at pixel centres with align_corners,
        else at the outer edges), in float (an integer tap is converted first)."""
        span, start = (E.sub(size, 1), 0.0) if self.align else (size, -0.5)
        fv = v if v.dtype != I32 else E.cast(v, "float32")
        fspan = E.cast(span, fv.dtype)
        dist = E.call("fabs", fv.dtype, E.sub(start, fv))
        times = E.cast(E.div(E.cast(dist, I32), span), I32)
        extra = E.sub(dist, E.mul(times, span))
        even = E.binary("eq", E.truncmod(times, 2), E.const(0, I32))
        folded = E.if_then_else(even, E.add(extra, start), E.add(E.sub(fspan, extra), start))
        inside = E.logical_and(
            E.binary("ge", fv, E.const(start, fv.dtype)),
            E.binary("le", fv, E.add(fspan, start)),
        )
        return E.if_then_else(inside, fv, folded)

    def source(self, n: tir.Var, out: tuple[tir.Var, ...]) -> list[tir.PrimExpr]:
        """The input coordinates (outermost axis first) output position `out` samples."""
        coords = []
        for k in range(self.rank):
            v = self.unnormalize(self.grid.load([n, E.idx(self.rank - 1 - k), *out]), self.sizes[k])
            if self.padding == "reflection":
                v = self.clip(self.reflect(v, self.sizes[k]), self.sizes[k])
            elif self.padding == "border":
                v = self.clip(v, self.sizes[k])
            coords.append(v)
        return coords

    def linear(self, n: tir.Var, c: tir.Var, out: tuple[tir.Var, ...]) -> tir.PrimExpr:
        coords = self.source(n, out)
        lows = [E.cast(E.call("floor", v.dtype, v), I32) for v in coords]
        fracs = [E.sub(v, E.cast(lo, v.dtype)) for v, lo in zip(coords, lows, strict=True)]
        total: tir.PrimExpr | None = None
        for corner in range(1 << self.rank):
            picks, weight = [], None
            for k in range(self.rank):
                high = (corner >> (self.rank - 1 - k)) & 1
                picks.append(E.add(lows[k], E.const(high, I32)) if high else lows[k])
                w = fracs[k] if high else E.sub(1.0, fracs[k])
                weight = w if weight is None else E.mul(weight, w)
            term = E.mul(self.pixel(n, c, picks), weight)
            total = term if total is None else E.add(total, term)
        assert total is not None
        return total

    def nearest(self, n: tir.Var, c: tir.Var, out: tuple[tir.Var, ...]) -> tir.PrimExpr:
        picks = [E.cast(E.call("nearbyint", v.dtype, v), I32) for v in self.source(n, out)]
        return self.pixel(n, c, picks)

    def cubic(self, n: tir.Var, c: tir.Var, out: tuple[tir.Var, ...]) -> tir.PrimExpr:
        """TOPI's 2-d bicubic: padding is applied to the integer taps, not the point."""
        y, x = (
            self.unnormalize(self.grid.load([n, E.idx(1 - k), *out]), self.sizes[k])
            for k in range(2)
        )
        floors = [E.cast(E.call("floor", v.dtype, v), I32) for v in (y, x)]
        fy, fx = (E.sub(v, E.cast(f, v.dtype)) for v, f in zip((y, x), floors, strict=True))

        def tap(k: int, offset: int) -> tir.PrimExpr:
            p = E.add(floors[k], E.const(offset, I32))
            if self.padding == "reflection":
                p = self.reflect(p, self.sizes[k])
            if self.padding in ("border", "reflection"):
                p = E.cast(self.clip(p, self.sizes[k]), I32)
            return p

        rows = []
        for i in range(4):
            yy = tap(0, i - 1)
            rows.append(cubic([self.pixel(n, c, [yy, tap(1, j - 1)]) for j in range(4)], fx))
        return cubic(rows, fy)


def cubic(p: list[tir.PrimExpr], t: tir.PrimExpr, a: float = CUBIC_A) -> tir.PrimExpr:
    """Keys' cubic convolution of the four taps `p` around a point `t` past the second
    (TOPI's weights, coefficient `a`)."""

    def near(f: tir.PrimExpr) -> tir.PrimExpr:
        return E.add(E.mul(E.mul(E.sub(E.mul(a + 2, f), a + 3), f), f), 1.0)

    def far(f: tir.PrimExpr) -> tir.PrimExpr:
        inner = E.add(E.mul(E.sub(E.mul(a, f), 5 * a), f), 8 * a)
        return E.sub(E.mul(inner, f), 4 * a)

    weights = [far(E.add(t, 1.0)), near(t), near(E.sub(1.0, t)), far(E.sub(2.0, t))]
    total = E.mul(p[0], weights[0])
    for q, w in zip(p[1:], weights[1:], strict=True):
        total = E.add(total, E.mul(q, w))
    return total


@register_legalize("relax.image.grid_sample")
def legalize_grid_sample(ctx: LegalizeCtx) -> relax.Expr:
    attrs = ctx.attrs
    layout, method = attrs.get("layout", "NCHW"), attrs.get("method", "bilinear")
    padding = attrs.get("padding_mode", "zeros")
    if layout not in ("NCHW", "NCDHW"):
        raise LegalizeUnsupported(f"grid_sample layout {layout}")
    if padding not in ("zeros", "border", "reflection"):
        raise LegalizeUnsupported(f"grid_sample padding_mode {padding!r}")
    allowed = ("bilinear", "nearest", "bicubic") if layout == "NCHW" else ("bilinear", "nearest")
    if method not in allowed:
        raise LegalizeUnsupported(f"grid_sample method {method!r} in {layout}")
    shape = ctx.out_shape()

    def build(kb: te.KernelBuilder, x: te.Tensor, grid: te.Tensor) -> te.Tensor:
        sampler = _Sampler(x, grid, padding, bool(attrs.get("align_corners")))
        interpolate: Callable[..., tir.PrimExpr] = {
            "bilinear": sampler.linear,
            "nearest": sampler.nearest,
            "bicubic": sampler.cubic,
        }[method]

        def body(n: tir.Var, c: tir.Var, *out: tir.Var) -> tir.PrimExpr:
            return interpolate(n, c, out)

        return kb.compute(shape, body, "T_grid_sample")

    return ctx.call_te("grid_sample", build)
