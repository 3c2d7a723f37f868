"""Numerics of the legalized convolution, pool, norm, attention, scatter, search,
image and creation kernels: each op is legalized, its kernels compiled, and
`main` run on random inputs against a NumPy reference computed here."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.lowering import compile_prim_funcs
from tvmlite.transform import LegalizeOps

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
RNG = np.random.default_rng(7)


def module(params: str, call: str) -> str:
    return (
        HEADER
        + "@I.ir_module\nclass Module:\n    @R.function\n"
        + f"    def main({params}):\n        gv = {call}\n        return gv\n"
    )


def _value(e: relax.Expr, env: dict, lib: Any) -> Any:
    if isinstance(e, relax.Var):
        return env[e]
    if isinstance(e, relax.Tuple):
        return tuple(_value(f, env, lib) for f in e.fields)
    if isinstance(e, relax.TupleGetItem):
        return _value(e.tuple_value, env, lib)[e.index]
    assert isinstance(e, relax.Call) and e.op == relax.Op("relax.call_tir"), e
    ins = [_value(a, env, lib) for a in e.args[1].fields]  # type: ignore[attr-defined]
    sinfo = e.sinfo_args[0]
    fields = sinfo.fields if isinstance(sinfo, relax.TupleStructInfo) else (sinfo,)
    outs = [np.zeros([d.value for d in f.shape], f.dtype) for f in fields]  # type: ignore[union-attr]
    lib[e.args[0].name](*ins, *outs)  # type: ignore[attr-defined]
    return tuple(outs) if isinstance(sinfo, relax.TupleStructInfo) else outs[0]


def run(src: str, *inputs: np.ndarray) -> Any:
    """Legalize `src`, compile its kernels and interpret `main` on `inputs`."""
    mod = LegalizeOps()(tvmlite.parse(src))
    prims = {k: f for k, f in mod.functions.items() if isinstance(f, tir.PrimFunc)}
    assert prims, "nothing was legalized"
    lib = compile_prim_funcs(prims)
    main = mod.functions["main"]
    env: dict = dict(zip(main.params, inputs, strict=True))
    for block in main.body.blocks:
        for b in block.bindings:
            env[b.var] = _value(b.value, env, lib)
    return _value(main.body.body, env, lib)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype("float32")


def t(shape: tuple[int, ...], dtype: str = "float32") -> str:
    return f'R.Tensor({shape}, dtype="{dtype}")'


def close(got: np.ndarray, want: np.ndarray, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ---------------------------------------------------------------- references


def conv_ref(x: np.ndarray, w: np.ndarray, stride: list, pad: list, dil: list, groups: int):  # noqa: ANN201
    """N-d grouped convolution, NC... / OI..., by einsum over padded windows."""
    n = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0), *((pad[i], pad[i + n]) for i in range(n))])
    ks = w.shape[2:]
    outs = [(xp.shape[2 + i] - (ks[i] - 1) * dil[i] - 1) // stride[i] + 1 for i in range(n)]
    cin, cout = x.shape[1] // groups, w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0], *outs), "float32")
    for pos in np.ndindex(*outs):
        sl = tuple(
            slice(pos[i] * stride[i], pos[i] * stride[i] + (ks[i] - 1) * dil[i] + 1, dil[i])
            for i in range(n)
        )
        for g in range(groups):
            patch = xp[(slice(None), slice(g * cin, (g + 1) * cin), *sl)]
            wg = w[g * cout : (g + 1) * cout]
            flat = patch.reshape(patch.shape[0], -1) @ wg.reshape(wg.shape[0], -1).T
            out[(slice(None), slice(g * cout, (g + 1) * cout), *pos)] = flat
    return out


def test_conv2d_groups_padding_dilation() -> None:
    x, w = f32(1, 4, 7, 6), f32(6, 2, 3, 3)
    call = "R.nn.conv2d(x, w, strides=[2, 1], padding=[1, 0, 2, 1], dilation=[1, 2], groups=2)"
    got = run(module(f"x: {t(x.shape)}, w: {t(w.shape)}", call), x, w)
    close(got, conv_ref(x, w, [2, 1], [1, 0, 2, 1], [1, 2], 2))


def test_conv2d_depthwise_nhwc() -> None:
    x, w = f32(1, 5, 5, 3), f32(3, 3, 1, 3)
    call = (
        'R.nn.conv2d(x, w, padding=[1, 1, 1, 1], groups=3, data_layout="NHWC", '
        'kernel_layout="HWIO")'
    )
    got = run(module(f"x: {t(x.shape)}, w: {t(w.shape)}", call), x, w)
    ref = conv_ref(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), [1, 1], [1] * 4, [1, 1], 3)
    close(got, ref.transpose(0, 2, 3, 1))


def test_conv1d_and_conv3d() -> None:
    x, w = f32(2, 3, 11), f32(4, 3, 3)
    call = "R.nn.conv1d(x, w, strides=[2], padding=[2, 1], dilation=[2])"
    got = run(module(f"x: {t(x.shape)}, w: {t(w.shape)}", call), x, w)
    close(got, conv_ref(x, w, [2], [2, 1], [2], 1))
    x3, w3 = f32(1, 2, 4, 4, 3), f32(2, 2, 2, 3, 2)
    call = "R.nn.conv3d(x, w, padding=[1, 0, 1, 0, 1, 0])"
    got = run(module(f"x: {t(x3.shape)}, w: {t(w3.shape)}", call), x3, w3)
    close(got, conv_ref(x3, w3, [1] * 3, [1, 0, 1, 0, 1, 0], [1] * 3, 1))


def conv_transpose_ref(x: np.ndarray, w: np.ndarray, stride: int, pad: int, opad: int):  # noqa: ANN201
    n, cin, width = x.shape
    k = w.shape[2]
    full = np.zeros((n, w.shape[1], (width - 1) * stride + k + opad), "float32")
    for i in range(width):
        full[:, :, i * stride : i * stride + k] += np.einsum("nc,cok->nok", x[:, :, i], w)
    return full[:, :, pad : full.shape[2] - pad]


@pytest.mark.parametrize(("stride", "pad", "opad"), [(2, 1, 0), (3, 0, 1)])
def test_conv1d_transpose(stride: int, pad: int, opad: int) -> None:
    x, w = f32(1, 3, 5), f32(3, 2, 3)
    call = (
        f"R.nn.conv1d_transpose(x, w, strides=[{stride}], padding=[{pad}, {pad}], "
        f"output_padding=[{opad}])"
    )
    got = run(module(f"x: {t(x.shape)}, w: {t(w.shape)}", call), x, w)
    close(got, conv_transpose_ref(x, w, stride, pad, opad))


def test_conv2d_transpose_matches_scatter_form() -> None:
    x, w = f32(1, 2, 3, 3), f32(2, 3, 2, 2)
    call = "R.nn.conv2d_transpose(x, w, strides=[2, 2])"
    got = run(module(f"x: {t(x.shape)}, w: {t(w.shape)}", call), x, w)
    ref = np.zeros((1, 3, 6, 6), "float32")
    for i in range(3):
        for j in range(3):
            ref[0, :, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2] += np.einsum(
                "c,cohw->ohw", x[0, :, i, j], w
            )
    close(got, ref)


# ---------------------------------------------------------------- pools


def pool_ref(x: np.ndarray, k: int, s: int, p: int, kind: str, include: bool, ceil: bool):  # noqa: ANN201
    h = x.shape[2]
    span = h + 2 * p - k + (s - 1 if ceil else 0)
    o = span // s + 1
    if ceil and (o - 1) * s >= h + p:
        o -= 1
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, [(0, 0), (0, 0), (p, p + s), (p, p + s)], constant_values=fill)
    out = np.zeros((*x.shape[:2], o, o), "float32")
    for i in range(o):
        for j in range(o):
            win = xp[:, :, i * s : i * s + k, j * s : j * s + k]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
                continue
            rows = [r for r in range(i * s - p, i * s - p + k) if (0 <= r < h) or include]
            cols = [c for c in range(j * s - p, j * s - p + k) if (0 <= c < h) or include]
            if include:
                rows = [r for r in rows if r < h + p]
                cols = [c for c in cols if c < h + p]
            out[:, :, i, j] = win.sum(axis=(2, 3)) / (len(rows) * len(cols))
    return out


@pytest.mark.parametrize(
    ("kind", "include", "ceil"),
    [("max", False, False), ("max", False, True), ("avg", False, False), ("avg", True, False),
     ("avg", False, True)],
)  # fmt: skip
def test_pool2d(kind: str, include: bool, ceil: bool) -> None:
    x = f32(1, 2, 7, 7)
    call = (
        f"R.nn.{kind}_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], "
        f"ceil_mode={ceil}, count_include_pad={include})"
    )
    got = run(module(f"x: {t(x.shape)}", call), x)
    close(got, pool_ref(x, 3, 2, 1, kind, include, ceil))


def test_pool1d_and_adaptive_uneven() -> None:
    x = f32(2, 3, 9)
    got = run(module(f"x: {t(x.shape)}", "R.nn.max_pool1d(x, pool_size=[2], strides=[2])"), x)
    close(got, x[:, :, :8].reshape(2, 3, 4, 2).max(-1))
    y = f32(1, 2, 7, 5)
    got = run(module(f"x: {t(y.shape)}", "R.nn.adaptive_avg_pool2d(x, output_size=[3, 2])"), y)
    ref = np.zeros((1, 2, 3, 2), "float32")
    for i in range(3):
        for j in range(2):
            h0, h1 = i * 7 // 3, -(-(i + 1) * 7 // 3)
            w0, w1 = j * 5 // 2, -(-(j + 1) * 5 // 2)
            ref[:, :, i, j] = y[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    close(got, ref)


# ---------------------------------------------------------------- norms


def test_rms_group_instance_batch_norm() -> None:
    x, g, b = f32(2, 6, 3, 3), f32(6), f32(6)
    params = f"x: {t(x.shape)}, g: {t(g.shape)}, b: {t(b.shape)}"
    got = run(module(f"x: {t(x.shape)}, g: {t((3,))}", "R.nn.rms_norm(x, g, axes=[-1])"), x, g[:3])
    close(got, x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g[:3])
    got = run(
        module(params, "R.nn.group_norm(x, g, b, num_groups=3, channel_axis=1, axes=[2, 3])"),
        x,
        g,
        b,
    )
    xg = x.reshape(2, 3, 2, 3, 3)
    norm = (xg - xg.mean((2, 3, 4), keepdims=True)) / np.sqrt(
        xg.var((2, 3, 4), keepdims=True) + 1e-5
    )
    close(got, norm.reshape(x.shape) * g[:, None, None] + b[:, None, None])
    got = run(module(params, "R.nn.instance_norm(x, g, b, channel_axis=1, axes=[2, 3])"), x, g, b)
    norm = (x - x.mean((2, 3), keepdims=True)) / np.sqrt(x.var((2, 3), keepdims=True) + 1e-5)
    close(got, norm * g[:, None, None] + b[:, None, None])
    mean, var = f32(6), np.abs(f32(6)) + 0.5
    call = "R.nn.batch_norm(x, g, b, m, v, axis=1, training=False)"
    out = run(module(f"{params}, m: {t((6,))}, v: {t((6,))}", call), x, g, b, mean, var)
    ref = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * g[:, None, None]
    close(out[0], ref + b[:, None, None])
    close(out[1], mean)
    close(out[2], var)


def test_batch_norm_training_updates_moving_stats() -> None:
    x, g, b, mean, var = f32(4, 3, 2), f32(3), f32(3), f32(3), np.abs(f32(3)) + 0.5
    params = ", ".join(
        f"{n}: {t(a.shape)}" for n, a in zip("xgbmv", (x, g, b, mean, var), strict=True)
    )
    call = "R.nn.batch_norm(x, g, b, m, v, axis=1, momentum=0.25)"
    out = run(module(params, call), x, g, b, mean, var)
    bm, bv = x.mean((0, 2)), x.var((0, 2))
    ref = (x - bm[:, None]) / np.sqrt(bv[:, None] + 1e-5) * g[:, None] + b[:, None]
    close(out[0], ref)
    close(out[1], 0.75 * mean + 0.25 * bm)
    close(out[2], 0.75 * var + 0.25 * bv)


def attention_ref(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray | None, causal: bool
):  # noqa: ANN201
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    if bias is not None:
        s = s + bias
    if causal:  # masked keys leave the softmax entirely
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


@pytest.mark.parametrize(("bias", "causal"), [(False, False), (True, False), (False, True)])
def test_attention(bias: bool, causal: bool) -> None:
    q, k, v, bb = f32(2, 4, 3, 8), f32(2, 4, 3, 8), f32(2, 4, 3, 8), f32(2, 3, 4, 4)
    params = f"q: {t(q.shape)}, k: {t(k.shape)}, v: {t(v.shape)}"
    args = "q, k, v"
    if bias:
        params, args = f"{params}, bb: {t(bb.shape)}", f"{args}, bb"
    mask = ', causal_mask="TopLeft"' if causal else ""
    inputs = (q, k, v, bb) if bias else (q, k, v)
    got = run(module(params, f"R.nn.attention({args}{mask})"), *inputs)
    close(got, attention_ref(q, k, v, bb if bias else None, causal))
