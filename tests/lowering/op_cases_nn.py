"""Numerics cases: convolutions and their transposes, pools, normalizations,
dropout, pad, losses and image.resize2d."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_cases_common import Case, Inputs, case, f64

G = Inputs(3)

# --------------------------------------------------------------- convolution


def conv_ref(x: np.ndarray, w: np.ndarray, strides: list, pads: list, dil: list, groups: int):
    """N-d grouped convolution, NC*/OI*, padding as (befores..., afters...)."""
    nd = x.ndim - 2
    xp = np.pad(f64(x), [(0, 0), (0, 0)] + [(pads[i], pads[i + nd]) for i in range(nd)])
    k = w.shape[2:]
    outs = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(nd)]
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0], *outs))
    for g in range(groups):
        xs, ws = xp[:, g * cg : (g + 1) * cg], f64(w[g * og : (g + 1) * og])
        for kpos in np.ndindex(*k):
            window = tuple(
                slice(
                    kpos[i] * dil[i], kpos[i] * dil[i] + strides[i] * (outs[i] - 1) + 1, strides[i]
                )
                for i in range(nd)
            )
            out[:, g * og : (g + 1) * og] += np.einsum(
                "nc...,oc->no...", xs[(slice(None), slice(None), *window)], ws[(..., *kpos)]
            )
    return out.astype(x.dtype)


def conv_transpose_ref(
    x: np.ndarray, w: np.ndarray, strides: list, pads: list, opad: list, groups: int
):
    """N-d grouped transposed convolution, NC*/IO*: scatter each input position."""
    nd = x.ndim - 2
    ins, k = x.shape[2:], w.shape[2:]
    cg, og = x.shape[1] // groups, w.shape[1]
    full = [(ins[i] - 1) * strides[i] + k[i] + opad[i] for i in range(nd)]
    buf = np.zeros((x.shape[0], og * groups, *full))
    for g in range(groups):
        xs, ws = f64(x[:, g * cg : (g + 1) * cg]), f64(w[g * cg : (g + 1) * cg])
        for kpos in np.ndindex(*k):
            dest = tuple(
                slice(kpos[i], kpos[i] + strides[i] * (ins[i] - 1) + 1, strides[i])
                for i in range(nd)
            )
            buf[(slice(None), slice(g * og, (g + 1) * og), *dest)] += np.einsum(
                "nc...,co->no...", xs, ws[(..., *kpos)]
            )
    sizes = [full[i] - pads[i] - pads[i + nd] for i in range(nd)]
    crop = tuple(slice(pads[i], pads[i] + sizes[i]) for i in range(nd))
    return buf[(slice(None), slice(None), *crop)].astype(x.dtype)


def _conv(
    strides: list, pads: list, dil: list, groups: int, layouts: tuple[str, str] | None = None
):
    def ref(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        if layouts is None:
            return conv_ref(x, w, strides, pads, dil, groups)
        data, kernel = layouts
        nd = len(data) - 2
        xc = np.transpose(x, [data.index(c) for c in "NC" + "DHW"[3 - nd :]])
        wc = np.transpose(w, [kernel.index(c) for c in "OI" + "DHW"[3 - nd :]])
        out = conv_ref(xc, wc, strides, pads, dil, groups)
        canon = "NC" + "DHW"[3 - nd :]
        return np.transpose(out, [canon.index(c) for c in data])

    return ref


def _conv_t(strides: list, pads: list, opad: list, groups: int):
    return lambda x, w: conv_transpose_ref(x, w, strides, pads, opad, groups)


def _conv_cases() -> list[Case]:
    u = G.uniform
    c = []
    for name, call, xs, ws, ref in (
        ("conv1d-basic", "R.nn.conv1d(x, y)", (1, 2, 7), (3, 2, 3), _conv([1], [0, 0], [1], 1)),
        (
            "conv1d-stride2-dil2-pad",
            "R.nn.conv1d(x, y, strides=[2], padding=[2, 1], dilation=[2])",
            (2, 3, 9),
            (2, 3, 3),
            _conv([2], [2, 1], [2], 1),
        ),
        (
            "conv1d-groups2",
            "R.nn.conv1d(x, y, padding=[1, 1], groups=2)",
            (1, 4, 6),
            (4, 2, 3),
            _conv([1], [1, 1], [1], 2),
        ),
        (
            "conv1d-nwc",
            'R.nn.conv1d(x, y, padding=[1, 0], data_layout="NWC", kernel_layout="WIO")',
            (1, 6, 3),
            (3, 3, 2),
            _conv([1], [1, 0], [1], 1, ("NWC", "WIO")),
        ),
        (
            "conv2d-basic-pad1",
            "R.nn.conv2d(x, y, padding=[1, 1, 1, 1])",
            (1, 3, 5, 5),
            (4, 3, 3, 3),
            _conv([1, 1], [1, 1, 1, 1], [1, 1], 1),
        ),
        (
            "conv2d-stride-asym-pad",
            "R.nn.conv2d(x, y, strides=[2, 1], padding=[1, 0, 2, 1])",
            (2, 2, 6, 5),
            (3, 2, 3, 2),
            _conv([2, 1], [1, 0, 2, 1], [1, 1], 1),
        ),
        (
            "conv2d-dilation",
            "R.nn.conv2d(x, y, dilation=[2, 1], padding=[2, 1, 2, 1])",
            (1, 2, 6, 6),
            (2, 2, 3, 3),
            _conv([1, 1], [2, 1, 2, 1], [2, 1], 1),
        ),
        (
            "conv2d-groups2",
            "R.nn.conv2d(x, y, strides=[2, 2], padding=[1, 1, 1, 1], groups=2)",
            (1, 4, 5, 5),
            (6, 2, 3, 3),
            _conv([2, 2], [1, 1, 1, 1], [1, 1], 2),
        ),
        (
            "conv2d-depthwise",
            "R.nn.conv2d(x, y, padding=[1, 1, 1, 1], groups=3)",
            (1, 3, 4, 4),
            (3, 1, 3, 3),
            _conv([1, 1], [1, 1, 1, 1], [1, 1], 3),
        ),
        (
            "conv2d-nhwc-hwio",
            'R.nn.conv2d(x, y, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO")',
            (1, 5, 4, 3),
            (3, 3, 3, 2),
            _conv([1, 1], [1, 1, 1, 1], [1, 1], 1, ("NHWC", "HWIO")),
        ),
        (
            "conv3d-basic",
            "R.nn.conv3d(x, y)",
            (1, 2, 4, 4, 3),
            (2, 2, 2, 3, 2),
            _conv([1, 1, 1], [0] * 6, [1, 1, 1], 1),
        ),
        (
            "conv3d-stride-pad-groups",
            "R.nn.conv3d(x, y, strides=[2, 1, 2], padding=[1, 0, 1, 0, 1, 1], groups=2)",
            (1, 4, 5, 4, 5),
            (2, 2, 3, 2, 3),
            _conv([2, 1, 2], [1, 0, 1, 0, 1, 1], [1, 1, 1], 2),
        ),
        (
            "conv3d-ndhwc",
            'R.nn.conv3d(x, y, dilation=[1, 2, 1], data_layout="NDHWC", kernel_layout="DHWIO")',
            (1, 3, 5, 3, 2),
            (2, 2, 2, 2, 3),
            _conv([1, 1, 1], [0] * 6, [1, 2, 1], 1, ("NDHWC", "DHWIO")),
        ),
        (
            "conv1d_transpose-stride2-pad",
            "R.nn.conv1d_transpose(x, y, strides=[2], padding=[1, 1])",
            (1, 4, 6),
            (4, 2, 3),
            _conv_t([2], [1, 1], [0], 1),
        ),
        (
            "conv1d_transpose-outpad-groups",
            "R.nn.conv1d_transpose(x, y, strides=[3], "
            "padding=[1, 0], output_padding=[2], groups=2)",
            (2, 4, 3),
            (4, 3, 4),
            _conv_t([3], [1, 0], [2], 2),
        ),
        (
            "conv2d_transpose-stride2",
            "R.nn.conv2d_transpose(x, y, strides=[2, 2])",
            (1, 3, 3, 4),
            (3, 2, 3, 3),
            _conv_t([2, 2], [0, 0, 0, 0], [0, 0], 1),
        ),
        (
            "conv2d_transpose-pad-outpad",
            "R.nn.conv2d_transpose(x, y, strides=[2, 3], "
            "padding=[1, 0, 0, 1], output_padding=[1, 2])",
            (1, 2, 3, 3),
            (2, 3, 3, 4),
            _conv_t([2, 3], [1, 0, 0, 1], [1, 2], 1),
        ),
        (
            "conv2d_transpose-groups",
            "R.nn.conv2d_transpose(x, y, padding=[1, 1, 1, 1], groups=2)",
            (1, 4, 4, 4),
            (4, 1, 3, 3),
            _conv_t([1, 1], [1, 1, 1, 1], [0, 0], 2),
        ),
        (
            "conv3d_transpose-stride2",
            "R.nn.conv3d_transpose(x, y, strides=[2, 1, 2], padding=[0, 1, 1, 0, 0, 1])",
            (1, 2, 2, 3, 2),
            (2, 3, 2, 3, 3),
            _conv_t([2, 1, 2], [0, 1, 1, 0, 0, 1], [0, 0, 0], 1),
        ),
    ):
        c.append(case(name, call, (u(*xs, lo=-1, hi=1), u(*ws, lo=-1, hi=1)), ref))
    c.append(
        case(
            "conv2d-float64",
            "R.nn.conv2d(x, y, padding=[0, 1, 0, 1])",
            (u(1, 2, 4, 4, dtype="float64"), u(3, 2, 2, 3, dtype="float64")),
            _conv([1, 1], [0, 1, 0, 1], [1, 1], 1),
        )
    )
    return c


# ---------------------------------------------------------------------- pools


def pool_ref(
    x: np.ndarray, kind: str, k: list, s: list, d: list, pads: list, ceil: bool, include: bool
):
    """TVM/PyTorch pooling: out = floor-or-ceil of the padded extent; avg divides by
    the window inside data+padding (include) or inside the data (exclude)."""
    nd = x.ndim - 2
    ins = x.shape[2:]
    outs = []
    for i in range(nd):
        num = ins[i] + pads[i] + pads[i + nd] - d[i] * (k[i] - 1) - 1 + (s[i] - 1 if ceil else 0)
        outs.append(num // s[i] + 1)
    out = np.zeros((*x.shape[:2], *outs))
    for o in np.ndindex(*outs):
        inside, padded = [], []
        for i in range(nd):
            pos = [o[i] * s[i] - pads[i] + j * d[i] for j in range(k[i])]
            inside.append([p for p in pos if 0 <= p < ins[i]])
            padded.append([p for p in pos if p <= ins[i] + pads[i + nd] - 1])
        win = f64(x)[(slice(None), slice(None), *np.ix_(*inside))]
        axes = tuple(range(2, 2 + nd))
        if kind == "max":
            out[(slice(None), slice(None), *o)] = win.max(axis=axes)
        else:
            count = math.prod(len(p) for p in (padded if include else inside))
            out[(slice(None), slice(None), *o)] = win.sum(axis=axes) / count
    return out.astype(x.dtype)


def adaptive_ref(x: np.ndarray, size: list) -> np.ndarray:
    nd = x.ndim - 2
    out = np.zeros((*x.shape[:2], *size))
    for o in np.ndindex(*size):
        sl = tuple(
            slice((o[i] * x.shape[2 + i]) // size[i], -(-((o[i] + 1) * x.shape[2 + i]) // size[i]))
            for i in range(nd)
        )
        out[(slice(None), slice(None), *o)] = f64(x)[(slice(None), slice(None), *sl)].mean(
            axis=tuple(range(2, 2 + nd))
        )
    return out.astype(x.dtype)


def _pool(
    kind: str,
    k: list,
    s: list,
    d: list,
    pads: list,
    ceil: bool,
    include: bool,
    layout: str | None = None,
):
    def ref(x: np.ndarray) -> np.ndarray:
        if layout is None:
            return pool_ref(x, kind, k, s, d, pads, ceil, include)
        xc = np.moveaxis(x, -1, 1)
        return np.moveaxis(pool_ref(xc, kind, k, s, d, pads, ceil, include), 1, -1)

    return ref


def _pool_cases() -> list[Case]:
    u = G.uniform
    c = []
    for kind in ("max", "avg"):
        for n, label, shape, attrs, args in (
            (
                1,
                "stride-pad",
                (2, 3, 9),
                "pool_size=[3], strides=[2], padding=[1, 1]",
                ([3], [2], [1], [1, 1], False),
            ),
            (
                1,
                "dilation-ceil",
                (1, 2, 8),
                "pool_size=[2], strides=[3], dilation=[2], padding=[0, 1], ceil_mode=True",
                ([2], [3], [2], [0, 1], True),
            ),
            (
                2,
                "2x2",
                (1, 2, 6, 6),
                "pool_size=[2, 2], strides=[2, 2]",
                ([2, 2], [2, 2], [1, 1], [0] * 4, False),
            ),
            (
                2,
                "asym-pad",
                (2, 2, 5, 7),
                "pool_size=[3, 2], strides=[2, 2], padding=[1, 0, 1, 1]",
                ([3, 2], [2, 2], [1, 1], [1, 0, 1, 1], False),
            ),
            (
                2,
                "ceil",
                (1, 1, 5, 5),
                "pool_size=[2, 2], strides=[2, 2], ceil_mode=True",
                ([2, 2], [2, 2], [1, 1], [0] * 4, True),
            ),
            (
                2,
                "dilation-pad",
                (1, 2, 7, 6),
                "pool_size=[2, 3], dilation=[2, 1], padding=[1, 1, 0, 1]",
                ([2, 3], [1, 1], [2, 1], [1, 1, 0, 1], False),
            ),
            (
                3,
                "stride-pad",
                (1, 2, 4, 5, 4),
                "pool_size=[2, 3, 2], strides=[2, 1, 2], padding=[0, 1, 1, 0, 1, 0]",
                ([2, 3, 2], [2, 1, 2], [1, 1, 1], [0, 1, 1, 0, 1, 0], False),
            ),
        ):
            for include in (False,) if kind == "max" else (False, True):
                tag = ("-incl" if include else "-excl") if kind == "avg" else ""
                c.append(
                    case(
                        f"{kind}_pool{n}d-{label}{tag}",
                        f"R.nn.{kind}_pool{n}d(x, {attrs}, count_include_pad={include})",
                        u(*shape),
                        _pool(kind, *args, include),
                    )
                )
    c.append(
        case(
            "max_pool2d-nhwc",
            'R.nn.max_pool2d(x, pool_size=[2, 2], strides=[1, 2], layout="NHWC")',
            u(1, 4, 5, 3),
            _pool("max", [2, 2], [1, 2], [1, 1], [0] * 4, False, False, "NHWC"),
        )
    )
    c.append(
        case(
            "avg_pool2d-nhwc",
            "R.nn.avg_pool2d(x, pool_size=[3, 3], padding=[1, 1, 1, 1], "
            'layout="NHWC", count_include_pad=False)',
            u(1, 4, 4, 2),
            _pool("avg", [3, 3], [1, 1], [1, 1], [1] * 4, False, False, "NHWC"),
        )
    )
    c.append(
        case(
            "max_pool2d-int32",
            "R.nn.max_pool2d(x, pool_size=[2, 2], strides=[2, 2])",
            G.ints(-50, 50, 1, 2, 4, 4),
            _pool("max", [2, 2], [2, 2], [1, 1], [0] * 4, False, False),
        )
    )
    for n, shape, size in (
        (1, (2, 3, 7), [3]),
        (1, (1, 2, 5), [5]),
        (2, (1, 2, 7, 5), [3, 2]),
        (2, (2, 1, 4, 6), [1, 1]),
        (3, (1, 2, 5, 4, 3), [2, 3, 2]),
    ):
        c.append(
            case(
                f"adaptive_avg_pool{n}d-{'x'.join(map(str, size))}",
                f"R.nn.adaptive_avg_pool{n}d(x, output_size={size})",
                u(*shape),
                lambda x, s=size: adaptive_ref(x, s),
            )
        )
    c.append(
        case(
            "adaptive_avg_pool2d-default-size",
            "R.nn.adaptive_avg_pool2d(x)",
            u(1, 2, 3, 3),
            lambda x: adaptive_ref(x, [3, 3]),
        )
    )
    c.append(
        case(
            "adaptive_avg_pool2d-nhwc",
            'R.nn.adaptive_avg_pool2d(x, output_size=[2, 3], layout="NHWC")',
            u(1, 5, 7, 2),
            lambda x: np.moveaxis(adaptive_ref(np.moveaxis(x, -1, 1), [2, 3]), 1, -1),
        )
    )
    return c


# ------------------------------------------------------------ normalization

EPS = 1e-5


def _norm(x: np.ndarray, axes: tuple, eps: float = EPS) -> np.ndarray:
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


def _layer_norm(axes: list, eps: float = EPS):
    def ref(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (_norm(f64(x), tuple(axes), eps) * g + b).astype(x.dtype)

    return ref


def _per_channel(v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = -1
    return f64(v).reshape(shape)


def _group_norm(groups: int, channel: int):
    def ref(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        xc = np.moveaxis(f64(x), channel, 1)
        n, ch = xc.shape[:2]
        grouped = xc.reshape(n, groups, ch // groups, *xc.shape[2:])
        normed = _norm(grouped, tuple(range(2, grouped.ndim))).reshape(xc.shape)
        out = normed * _per_channel(g, xc.ndim, 1) + _per_channel(b, xc.ndim, 1)
        return np.moveaxis(out, 1, channel).astype(x.dtype)

    return ref


def _instance_norm(channel: int, axes: list):
    def ref(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        normed = _norm(f64(x), tuple(axes))
        out = normed * _per_channel(g, x.ndim, channel) + _per_channel(b, x.ndim, channel)
        return out.astype(x.dtype)

    return ref


def _rms_norm(axes: list, eps: float = EPS):
    def ref(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        xd = f64(x)
        rms = np.sqrt((xd * xd).mean(axis=tuple(axes), keepdims=True) + eps)
        return (xd / rms * w).astype(x.dtype)

    return ref


def _batch_norm(
    axis: int,
    training: bool,
    momentum: float = 0.1,
    center: bool = True,
    scale: bool = True,
    eps: float = EPS,
):
    def ref(x: np.ndarray, g: np.ndarray, b: np.ndarray, mean: np.ndarray, var: np.ndarray):
        xd, nd = f64(x), x.ndim
        axes = tuple(d for d in range(nd) if d != axis % nd)
        bm, bv = xd.mean(axis=axes), xd.var(axis=axes)
        m, v = (bm, bv) if training else (f64(mean), f64(var))
        out = (xd - _per_channel(m, nd, axis)) / np.sqrt(_per_channel(v, nd, axis) + eps)
        if scale:
            out = out * _per_channel(g, nd, axis)
        if center:
            out = out + _per_channel(b, nd, axis)
        if training:
            mean = (1 - momentum) * f64(mean) + momentum * bm
            var = (1 - momentum) * f64(var) + momentum * bv
        return tuple(a.astype(x.dtype) for a in (out, mean, var))

    return ref


def _norm_cases() -> list[Case]:
    u = G.uniform
    x4 = u(2, 4, 3, 3)
    stats = (u(4), u(4), u(4), u(4, lo=0.5, hi=2.0))
    c = [
        case(
            "layer_norm-last",
            "R.nn.layer_norm(x, y, z, axes=[-1])",
            (u(2, 3, 8), u(8), u(8)),
            _layer_norm([-1]),
        ),
        case(
            "layer_norm-2axes",
            "R.nn.layer_norm(x, y, z, axes=[1, 2])",
            (u(2, 3, 4), u(3, 4), u(3, 4)),
            _layer_norm([1, 2]),
        ),
        case(
            "layer_norm-eps-float64",
            "R.nn.layer_norm(x, y, z, axes=[1], epsilon=0.1)",
            (u(3, 5, dtype="float64"), u(5, dtype="float64"), u(5, dtype="float64")),
            _layer_norm([1], 0.1),
        ),
        case(
            "group_norm-nchw",
            "R.nn.group_norm(x, y, z, num_groups=2, channel_axis=1, axes=[2, 3])",
            (x4, u(4), u(4)),
            _group_norm(2, 1),
        ),
        case(
            "group_norm-ncl-3groups",
            "R.nn.group_norm(x, y, z, num_groups=3, channel_axis=1, axes=[2])",
            (u(2, 6, 5), u(6), u(6)),
            _group_norm(3, 1),
        ),
        case(
            "group_norm-channels-last",
            "R.nn.group_norm(x, y, z, num_groups=2, channel_axis=-1, axes=[1, 2])",
            (u(2, 3, 2, 4), u(4), u(4)),
            _group_norm(2, 3),
        ),
        case(
            "instance_norm-nchw",
            "R.nn.instance_norm(x, y, z, channel_axis=1, axes=[2, 3])",
            (x4, u(4), u(4)),
            _instance_norm(1, [2, 3]),
        ),
        case(
            "instance_norm-ncl",
            "R.nn.instance_norm(x, y, z, channel_axis=1, axes=[2])",
            (u(2, 3, 6), u(3), u(3)),
            _instance_norm(1, [2]),
        ),
        case(
            "rms_norm-last", "R.nn.rms_norm(x, y, axes=[-1])", (u(2, 3, 8), u(8)), _rms_norm([-1])
        ),
        case(
            "rms_norm-2axes",
            "R.nn.rms_norm(x, y, axes=[1, 2], epsilon=0.01)",
            (u(2, 3, 4), u(3, 4)),
            _rms_norm([1, 2], 0.01),
        ),
        case(
            "batch_norm-inference",
            "R.nn.batch_norm(x, y, z, w, u, axis=1, training=False)",
            (x4, *stats),
            _batch_norm(1, False),
        ),
        case(
            "batch_norm-training",
            "R.nn.batch_norm(x, y, z, w, u, axis=1, momentum=0.25, training=True)",
            (x4, *stats),
            _batch_norm(1, True, 0.25),
        ),
        case(
            "batch_norm-last-axis-noscale",
            "R.nn.batch_norm(x, y, z, w, u, axis=-1, center=False, scale=False, training=False)",
            (u(5, 4), *stats),
            _batch_norm(-1, False, center=False, scale=False),
        ),
        case(
            "dropout-identity",
            "R.nn.dropout(x, rate=0.3)",
            x4,
            lambda v: (v.copy(), np.ones_like(v)),
        ),
        case(
            "dropout-float64",
            "R.nn.dropout(x)",
            u(3, 2, dtype="float64"),
            lambda v: (v.copy(), np.ones_like(v)),
        ),
    ]
    return c


# -------------------------------------------------------------------- padding


def _pad(width: list, mode: str, value: float = 0.0):
    np_mode = {
        "constant": "constant",
        "reflect": "reflect",
        "replicate": "edge",
        "circular": "wrap",
    }[mode]

    def ref(x: np.ndarray) -> np.ndarray:
        pairs = [(width[2 * i], width[2 * i + 1]) for i in range(x.ndim)]
        if mode == "constant":
            return np.pad(x, pairs, constant_values=value)
        return np.pad(x, pairs, mode=np_mode)

    return ref


def _pad_cases() -> list[Case]:
    x, x3 = G.uniform(3, 5), G.uniform(2, 3, 4)
    c = [
        case(
            "pad-constant-value",
            "R.nn.pad(x, pad_width=[1, 2, 0, 3], pad_value=1.5)",
            x,
            _pad([1, 2, 0, 3], "constant", 1.5),
        ),
        case(
            "pad-constant-int32",
            'R.nn.pad(x, pad_width=[0, 0, 2, 1], pad_mode="constant")',
            G.ints(0, 9, 2, 3),
            _pad([0, 0, 2, 1], "constant"),
        ),
    ]
    for mode in ("reflect", "replicate", "circular"):
        c.append(
            case(
                f"pad-{mode}-2d",
                f'R.nn.pad(x, pad_width=[2, 1, 3, 4], pad_mode="{mode}")',
                x,
                _pad([2, 1, 3, 4], mode),
            )
        )
        c.append(
            case(
                f"pad-{mode}-3d",
                f'R.nn.pad(x, pad_width=[0, 0, 1, 2, 2, 0], pad_mode="{mode}")',
                x3,
                _pad([0, 0, 1, 2, 2, 0], mode),
            )
        )
    return c


# --------------------------------------------------------------------- losses


def _nll(reduction: str, ignore: int = -100):
    def ref(p: np.ndarray, t: np.ndarray, w: Any = None) -> np.ndarray:
        weights = np.ones(p.shape[0 if p.ndim == 1 else 1]) if w is None else f64(w)
        keep = t != ignore
        safe = np.where(keep, t, 0)
        if p.ndim == 1:
            picked = f64(p)[safe]
        else:
            picked = np.take_along_axis(f64(p), np.expand_dims(safe, 1), 1).squeeze(1)
        wt = np.where(keep, weights[safe], 0.0)
        loss = -picked * wt
        if reduction == "none":
            return loss.astype(p.dtype)
        total = loss.sum()
        return np.asarray(total if reduction == "sum" else total / wt.sum()).astype(p.dtype)

    return ref


def _loss_cases() -> list[Case]:
    u = G.uniform
    p2, p3, w = u(4, 3), u(2, 3, 5), u(3, lo=0.2, hi=1.5)
    t2 = np.array([0, 2, 1, 2], "int64")
    t3 = G.ints(0, 3, 2, 5, dtype="int64")
    t3[0, 1] = -1
    return [
        case(
            "cross_entropy_with_logits-2d",
            "R.nn.cross_entropy_with_logits(x, y)",
            (p2, u(4, 3, lo=0, hi=1)),
            lambda x, y: np.asarray(-(f64(x) * y).sum() / x.shape[0]).astype("float32"),
        ),
        case(
            "cross_entropy_with_logits-1d",
            "R.nn.cross_entropy_with_logits(x, y)",
            (u(5), u(5, lo=0, hi=1)),
            lambda x, y: np.asarray(-(f64(x) * y).sum()).astype("float32"),
        ),
        case("nll_loss-mean", "R.nn.nll_loss(x, y)", (p2, t2), _nll("mean")),
        case("nll_loss-weighted-mean", "R.nn.nll_loss(x, y, z)", (p2, t2, w), _nll("mean")),
        case("nll_loss-sum", 'R.nn.nll_loss(x, y, z, reduction="sum")', (p2, t2, w), _nll("sum")),
        case("nll_loss-none", 'R.nn.nll_loss(x, y, reduction="none")', (p2, t2), _nll("none")),
        case(
            "nll_loss-ignore-index",
            "R.nn.nll_loss(x, y, z, ignore_index=2)",
            (p2, t2, w),
            _nll("mean", 2),
        ),
        case(
            "nll_loss-spatial-none",
            'R.nn.nll_loss(x, y, z, reduction="none", ignore_index=-1)',
            (p3, t3, w),
            _nll("none", -1),
        ),
        case(
            "nll_loss-spatial-mean",
            "R.nn.nll_loss(x, y, ignore_index=-1)",
            (p3, t3),
            _nll("mean", -1),
        ),
        case(
            "nll_loss-1d",
            'R.nn.nll_loss(x, y, reduction="sum")',
            (u(4), np.array(2, "int64")),
            _nll("sum"),
        ),
    ]


# ------------------------------------------------------------------- resize2d


def _source(mode: str, out: int, in_size: int) -> np.ndarray:
    o = np.arange(out, dtype="float64")
    if mode == "align_corners":
        return o * ((in_size - 1) / (out - 1) if out > 1 else 0.0)
    scale = in_size / out
    if mode == "asymmetric":
        return o * scale
    if mode == "tf_half_pixel_for_nn":
        return (o + 0.5) * scale
    if mode == "pytorch_half_pixel" and out == 1:
        return np.zeros(1)
    return (o + 0.5) * scale - 0.5  # half_pixel, pytorch_half_pixel


def _nearest(c: np.ndarray, rounding: str, size: int) -> np.ndarray:
    idx = {
        "round": np.round,
        "floor": np.floor,
        "ceil": np.ceil,
        "round_prefer_ceil": lambda v: np.floor(v + 0.5),
        "round_prefer_floor": lambda v: np.ceil(v - 0.5),
    }[rounding](c)
    return np.clip(idx.astype(int), 0, size - 1)


def resize_ref(size: tuple, method: str, mode: str, rounding: str = "round", nhwc: bool = False):
    def ref(x: np.ndarray) -> np.ndarray:
        xc = f64(np.moveaxis(x, -1, 1) if nhwc else x)
        h, w = xc.shape[2:]
        ys, xs = _source(mode, size[0], h), _source(mode, size[1], w)
        if method == "nearest_neighbor":
            out = xc[:, :, _nearest(ys, rounding, h)][:, :, :, _nearest(xs, rounding, w)]
        else:
            y0, x0 = np.floor(ys), np.floor(xs)
            dy, dx = (ys - y0)[:, None], (xs - x0)[None, :]
            ya, yb = np.clip(y0.astype(int), 0, h - 1), np.clip(y0.astype(int) + 1, 0, h - 1)
            xa, xb = np.clip(x0.astype(int), 0, w - 1), np.clip(x0.astype(int) + 1, 0, w - 1)

            def at(yi: np.ndarray, xi: np.ndarray) -> np.ndarray:
                return xc[:, :, yi][:, :, :, xi]

            top = at(ya, xa) * (1 - dx) + at(ya, xb) * dx
            bottom = at(yb, xa) * (1 - dx) + at(yb, xb) * dx
            out = top * (1 - dy) + bottom * dy
        return (np.moveaxis(out, 1, -1) if nhwc else out).astype(x.dtype)

    return ref


def _resize_cases() -> list[Case]:
    x, y = G.uniform(1, 2, 4, 4), G.uniform(2, 1, 5, 7)
    r = "R.image.resize2d"
    return [
        case(
            "resize2d-linear-half_pixel-up",
            f'{r}(x, R.shape([6, 8]), method="linear")',
            x,
            resize_ref((6, 8), "linear", "half_pixel"),
        ),
        case(
            "resize2d-linear-align_corners-down",
            f'{r}(x, R.shape([3, 4]), method="linear", '
            'coordinate_transformation_mode="align_corners")',
            y,
            resize_ref((3, 4), "linear", "align_corners"),
        ),
        case(
            "resize2d-linear-asymmetric",
            f'{r}(x, R.shape([5, 3]), method="linear", '
            'coordinate_transformation_mode="asymmetric")',
            y,
            resize_ref((5, 3), "linear", "asymmetric"),
        ),
        case(
            "resize2d-linear-pytorch_half_pixel",
            f'{r}(x, R.shape([1, 6]), method="linear", '
            'coordinate_transformation_mode="pytorch_half_pixel")',
            x,
            resize_ref((1, 6), "linear", "pytorch_half_pixel"),
        ),
        case(
            "resize2d-nearest-asymmetric-floor",
            f"{r}(x, R.shape([8, 6]), "
            'method="nearest_neighbor", coordinate_transformation_mode="asymmetric", '
            'rounding_method="floor")',
            x,
            resize_ref((8, 6), "nearest_neighbor", "asymmetric", "floor"),
        ),
        case(
            "resize2d-nearest-tf_half_pixel-prefer_ceil",
            f"{r}(x, R.shape([3, 5]), "
            'method="nearest_neighbor", coordinate_transformation_mode="tf_half_pixel_for_nn", '
            'rounding_method="round_prefer_ceil")',
            y,
            resize_ref((3, 5), "nearest_neighbor", "tf_half_pixel_for_nn", "round_prefer_ceil"),
        ),
        case(
            "resize2d-nearest-align_corners-round",
            f"{r}(x, R.shape([7, 3]), "
            'method="nearest_neighbor", coordinate_transformation_mode="align_corners")',
            x,
            resize_ref((7, 3), "nearest_neighbor", "align_corners", "round"),
        ),
        case(
            "resize2d-linear-nhwc",
            f'{r}(x, R.shape([3, 5]), layout="NHWC", method="linear")',
            G.uniform(1, 4, 3, 2),
            resize_ref((3, 5), "linear", "half_pixel", nhwc=True),
        ),
    ]


CASES: list[Case] = (
    _conv_cases() + _pool_cases() + _norm_cases() + _pad_cases() + _loss_cases() + _resize_cases()
)
