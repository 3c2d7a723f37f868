"""Convolutions: conv1d/2d/3d in any primal layout (NCHW/OIHW, NHWC/HWIO, ...)
with groups, and the transposed convolutions conv1d/2d/3d_transpose.

The forward kernels follow `topi.nn.conv`: a `pad_temp` stage, then one
reduction block named after the layout (`conv2d_nchw`, `group_conv2d_nchw`)
over `nn, ff, yy, xx` and `rc, ry, rx`, both permuted into the layout's
order. Transposed convolutions follow TOPI's dilate, pad, flip-kernel and
reduce stages (`data_dilate`, `data_pad`, `kernel`, `compute`).
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.padding import dilate_compute, pad_compute, spatial_axes
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize

# Names TOPI gives the output and reduction axes, by layout letter.
_OUT_NAMES = {"N": "nn", "C": "ff"}
_SPATIAL_NAMES = ("yy", "xx", "zz")
_REDUCE_NAMES = ("ry", "rx", "rz")

# (builder, data, weight, attrs, out_shape, out_dtype) -> the output tensor
ConvCompute = Callable[
    [te.KernelBuilder, te.Tensor, te.Tensor, dict, tuple[tir.PrimExpr, ...], str], te.Tensor
]


def _check_layouts(data: str, kernel: str, out: str | None, n: int) -> None:
    letters = {1: "W", 2: "HW", 3: "DHW"}[n]
    if sorted(data) != sorted("NC" + letters) or sorted(kernel) != sorted("OI" + letters):
        raise LegalizeUnsupported(f"conv layouts {data}/{kernel}")
    if out not in (None, data):
        raise LegalizeUnsupported("conv with an out_layout other than the data layout")


def conv_compute(
    kb: te.KernelBuilder,
    x: te.Tensor,
    w: te.Tensor,
    attrs: dict,
    out_shape: tuple[tir.PrimExpr, ...],
    out_dtype: str,
) -> te.Tensor:
    """`topi.nn.conv` for any number of spatial dims."""
    layout, klayout = attrs["data_layout"], attrs["kernel_layout"]
    n = len(layout) - 2
    strides, dilation, groups = attrs["strides"], attrs["dilation"], int(attrs["groups"])
    padding = list(attrs["padding"])
    if len(padding) == n:
        padding = padding + padding
    sp = spatial_axes(layout)
    before: list[E.Expr] = [0] * (n + 2)
    after: list[E.Expr] = [0] * (n + 2)
    for j, axis in enumerate(sp):
        before[axis], after[axis] = padding[j], padding[j + n]
    temp = pad_compute(kb, x, before, after, E.const(0, x.dtype), "pad_temp")
    c_axis = layout.index("C")
    in_channels = x.shape[c_axis]
    num_filter = w.shape[klayout.index("O")]
    in_per_group = E.floordiv(in_channels, groups) if groups != 1 else in_channels
    kspatial = [w.shape[klayout.index(c)] for c in layout if c in "DHW"]
    names = [_OUT_NAMES.get(c, "") for c in layout]
    for j, axis in enumerate(sp):
        names[axis] = _SPATIAL_NAMES[j]

    def body(*ax: tir.Var) -> te.Reduce:
        rc = te.reduce_axis(in_per_group, "rc")
        rs = [te.reduce_axis(k, _REDUCE_NAMES[j]) for j, k in enumerate(kspatial)]
        ff = ax[layout.index("C")]
        channel: tir.PrimExpr = rc.var
        if groups != 1:
            group = E.floordiv(ff, E.floordiv(num_filter, groups))
            channel = E.add(E.mul(group, in_per_group), rc.var)
        index: list[tir.PrimExpr] = [ax[layout.index("N")]] * (n + 2)
        index[c_axis] = channel
        for j, axis in enumerate(sp):
            index[axis] = E.add(E.mul(ax[axis], strides[j]), E.mul(rs[j].var, dilation[j]))
        kindex: list[tir.PrimExpr] = [ff] * (n + 2)
        kindex[klayout.index("I")] = rc.var
        for j, c in enumerate(c for c in layout if c in "DHW"):
            kindex[klayout.index(c)] = rs[j].var
        prod = E.mul(E.cast(temp.load(index), out_dtype), E.cast(w.load(kindex), out_dtype))
        order = {"C": rc, **{c: rs[j] for j, c in enumerate(c for c in layout if c in "DHW")}}
        return te.sum_(prod, [order[c] for c in layout if c != "N"])

    prefix = "group_" if groups != 1 else ""
    name = f"{prefix}conv{n}d_{layout.lower()}"
    return kb.compute(out_shape, body, name, names=names)


def _rule(name: str, check: Callable[[dict], None], compute: ConvCompute):  # noqa: ANN202 - returns a rule
    """The rule that checks the attributes, then calls `compute` as the TE kernel `name`."""

    def rule(ctx: LegalizeCtx) -> relax.Expr:
        attrs = ctx.attrs
        check(attrs)
        shape, dtype = ctx.out_shape(), ctx.out_dtype()

        def build(kb: te.KernelBuilder, x: te.Tensor, w: te.Tensor) -> te.Tensor:
            return compute(kb, x, w, attrs, shape, dtype)

        return ctx.call_te(name, build)

    rule.__name__ = f"legalize_{name}"
    return rule


def _conv_rule(n: int):  # noqa: ANN202 - returns a rule
    def check(attrs: dict) -> None:
        _check_layouts(attrs["data_layout"], attrs["kernel_layout"], attrs.get("out_layout"), n)

    return _rule(f"conv{n}d", check, conv_compute)


for _n in (1, 2, 3):
    register_legalize(f"relax.nn.conv{_n}d")(_conv_rule(_n))


_TRANSPOSE_LAYOUTS = {1: ("NCW", "IOW"), 2: ("NCHW", "IOHW"), 3: ("NCDHW", "IODHW")}


def conv_transpose_compute(
    kb: te.KernelBuilder,
    x: te.Tensor,
    w: te.Tensor,
    attrs: dict,
    out_shape: tuple[tir.PrimExpr, ...],
    out_dtype: str,
) -> te.Tensor:
    """TOPI's (group) conv_transpose in NC[D]HW/IO[D]HW: dilate the data by the
    strides, pad by `kernel - 1 - padding`, flip the kernel and convolve."""
    n = x.ndim - 2
    strides, dilation = attrs["strides"], attrs["dilation"]
    groups = int(attrs["groups"])
    padding = list(attrs["padding"])
    if len(padding) == n:
        padding = padding + padding
    opad = attrs.get("output_padding") or [0] * n
    if any(d != 1 for d in dilation):
        raise LegalizeUnsupported("dilated transposed convolution")
    dilated = dilate_compute(kb, x, [1, 1, *strides], "data_dilate")
    ks = [E.value_of(k) for k in w.shape[2:]]
    if not all(isinstance(k, int) for k in ks):
        raise LegalizeUnsupported("transposed convolution with a symbolic kernel")
    before = [0, 0, *(k - 1 - p for k, p in zip(ks, padding[:n], strict=True))]
    after = [
        0,
        0,
        *(k - 1 - p + o for k, p, o in zip(ks, padding[n:], opad, strict=True)),
    ]
    data_pad = pad_compute(kb, dilated, before, after, E.const(0, x.dtype), "data_pad")
    in_c, out_c = x.shape[1], w.shape[1]
    in_per_group = E.floordiv(in_c, groups) if groups != 1 else in_c
    names = {1: ["o", "i", "w"], 2: ["o", "i", "h", "w"], 3: ["o", "i", "d", "h", "w"]}[n]

    def flip(o: tir.Var, i: tir.Var, *s: tir.Var) -> tir.PrimExpr:
        rev = [E.sub(k - 1, v) for k, v in zip(ks, s, strict=True)]
        if groups == 1:
            return w.load([i, o, *rev])
        ic = E.add(E.mul(E.floordiv(o, out_c), in_per_group), i)
        return w.load([ic, E.floormod(o, out_c), *rev])

    kshape = [E.mul(out_c, groups), in_per_group, *w.shape[2:]]
    kname = "kernel" if n == 1 else "kernel_transform"
    kernel = kb.compute(kshape, flip, kname, names=names)
    out_names = {1: ["b", "c", "w"], 2: ["b", "c", "h", "w"], 3: ["b", "c", "d", "h", "w"]}[n]

    def body(b: tir.Var, c: tir.Var, *s: tir.Var) -> te.Reduce:
        dc = te.reduce_axis(in_per_group, "dc")
        rnames = {1: ["dw"], 2: ["dh", "dw"], 3: ["dd", "dh", "dw"]}[n]
        rs = [te.reduce_axis(k, nm) for k, nm in zip(w.shape[2:], rnames, strict=True)]
        channel: tir.PrimExpr = dc.var
        if groups != 1:
            channel = E.add(E.mul(E.floordiv(c, out_c), in_per_group), dc.var)
        index = [b, channel, *(E.add(v, r.var) for v, r in zip(s, rs, strict=True))]
        prod = E.mul(
            E.cast(data_pad.load(index), out_dtype),
            E.cast(kernel.load([c, dc.var, *(r.var for r in rs)]), out_dtype),
        )
        return te.sum_(prod, [dc, *rs])

    return kb.compute(out_shape, body, "compute", names=out_names)


def _conv_transpose_rule(n: int):  # noqa: ANN202 - returns a rule
    def check(attrs: dict) -> None:
        data_layout, kernel_layout = _TRANSPOSE_LAYOUTS[n]
        if attrs["data_layout"] != data_layout or attrs["kernel_layout"] != kernel_layout:
            raise LegalizeUnsupported("conv_transpose layouts other than NC*/IO*")
        if attrs.get("out_layout") not in (None, data_layout):
            raise LegalizeUnsupported("conv_transpose out_layout")

    return _rule(f"conv{n}d_transpose", check, conv_transpose_compute)


for _n in (1, 2, 3):
    register_legalize(f"relax.nn.conv{_n}d_transpose")(_conv_transpose_rule(_n))
