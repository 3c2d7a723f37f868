"""Numerics cases: layout changes (`R.layout_transform` with `T.index_map`) and
quantization (`R.quantize`, `R.dequantize`, TVM's formulas)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from op_cases_common import Case, Inputs, case

G = Inputs(5)


def _pad_axis(v: np.ndarray, axis: int, to: int, value: float) -> np.ndarray:
    width = [(0, 0)] * v.ndim
    width[axis] = (0, to - v.shape[axis])
    return np.pad(v, width, constant_values=value)


def _nchw_to_nchwc(block: int, value: float = 0) -> Callable[[np.ndarray], np.ndarray]:
    def ref(v: np.ndarray) -> np.ndarray:
        n, c, h, w = v.shape
        outer = -(-c // block)
        p = _pad_axis(v, 1, outer * block, value)
        return p.reshape(n, outer, block, h, w).transpose(0, 1, 3, 4, 2)

    return ref


def _nchwc_to_nchw(v: np.ndarray) -> np.ndarray:
    n, c, h, w, b = v.shape
    return v.transpose(0, 1, 4, 2, 3).reshape(n, c * b, h, w)


def _retile(cols: int, value: float) -> Callable[[np.ndarray], np.ndarray]:
    """Flatten, pad to a multiple of `cols`, and cut into rows of `cols`."""

    def ref(v: np.ndarray) -> np.ndarray:
        flat = v.ravel()
        rows = -(-flat.size // cols)
        return _pad_axis(flat, 0, rows * cols, value).reshape(rows, cols)

    return ref


def _layout_cases() -> list[Case]:
    def lt(lam: str, extra: str = "") -> str:
        return f"R.layout_transform(x, index_map=T.index_map({lam}){extra})"

    nchw = G.uniform(2, 16, 3, 5)
    odd = G.uniform(2, 10, 3, 3)
    nchwc = G.uniform(2, 4, 3, 5, 4)
    ints = G.ints(-50, 50, 8, 6)
    return [
        case(
            "layout_transform-nchw-to-nchw4c",
            lt("lambda n, c, h, w: (n, c // 4, h, w, c % 4)"),
            nchw,
            _nchw_to_nchwc(4),
        ),
        case(
            "layout_transform-nchw4c-to-nchw",
            lt("lambda n, c, h, w, c4: (n, c * 4 + c4, h, w)"),
            nchwc,
            _nchwc_to_nchw,
        ),
        case(
            "layout_transform-nchw-to-nchw4c-pad-value",
            lt("lambda n, c, h, w: (n, c // 4, h, w, c % 4)", ", pad_value=-2.5"),
            odd,
            _nchw_to_nchwc(4, -2.5),
        ),
        case(
            # Without pad_value TVM fills the padding with zero.
            "layout_transform-nchw-to-nchw3c-pad-default",
            lt("lambda n, c, h, w: (n, c // 3, h, w, c % 3)"),
            odd,
            _nchw_to_nchwc(3),
        ),
        case(
            "layout_transform-nhwc-permute",
            lt("lambda n, c, h, w: (n, h, w, c)"),
            nchw,
            lambda v: v.transpose(0, 2, 3, 1),
        ),
        case(
            "layout_transform-flatten",
            lt("lambda i, j: (i * 6 + j,)"),
            ints,
            lambda v: v.ravel(),
        ),
        case(
            "layout_transform-retile-int-pad",
            lt("lambda i, j: ((i * 6 + j) // 5, (i * 6 + j) % 5)", ", pad_value=7"),
            ints,
            _retile(5, 7),
        ),
        case(
            "layout_transform-split-twice",
            lt("lambda i: (i // 12, i // 4 % 3, i % 4)"),
            G.uniform(24),
            lambda v: v.reshape(2, 3, 4),
        ),
        case(
            "layout_transform-float16-bare-lambda",
            "R.layout_transform(x, index_map=lambda i, j: (j // 4, i, j % 4), pad_value=1)",
            G.uniform(3, 10, dtype="float16"),
            lambda v: _pad_axis(v, 1, 12, 1).reshape(3, 3, 4).transpose(1, 0, 2),
        ),
    ]


def _quantize(axis: int, out_dtype: str, scale=None, zp=None):
    """TVM's quantize: round half to even, add the zero point, clip, cast."""

    def ref(v: np.ndarray, *params: np.ndarray) -> np.ndarray:
        s, z = (scale, zp) if scale is not None else params
        shape = [1] * v.ndim
        if np.size(s) > 1:
            shape[axis] = -1
        q = np.round(v / np.reshape(s, shape).astype(v.dtype)) + np.reshape(z, shape)
        info = np.iinfo(out_dtype)
        return np.clip(q, info.min, info.max).astype(out_dtype)

    return ref


def _dequantize(axis: int, out_dtype: str):
    def ref(v: np.ndarray, s: np.ndarray, z: np.ndarray) -> np.ndarray:
        shape = [1] * v.ndim
        if s.size > 1:
            shape[axis] = -1
        wide = "float32" if v.dtype.kind == "f" else "int32"
        sub = v.astype(wide) - np.reshape(z, shape).astype(wide)
        out = sub.astype("float32") * np.reshape(s, shape).astype("float32")
        if out_dtype == "float16":
            out = np.clip(out, -65504.0, 65504.0)
        return out.astype(out_dtype)

    return ref


def _qdq_cases() -> list[Case]:
    x = G.uniform(2, 3, 4, lo=-20, hi=20)
    q = G.ints(-128, 128, 2, 3, 4, dtype="int8")
    per_c = (G.uniform(3, lo=0.05, hi=0.5), G.ints(-5, 5, 3, dtype="int8"))
    per_w = (G.uniform(4, lo=0.05, hi=0.5), G.ints(-5, 5, 4, dtype="int8"))
    single = (G.uniform(1, lo=0.05, hi=0.5), G.ints(-5, 5, 1, dtype="int8"))
    return [
        case(
            "quantize-scalar-consts-int8",
            'R.quantize(x, R.const(0.1, "float32"), R.const(3, "int8"), axis=-1, out_dtype="int8")',
            x,
            _quantize(-1, "int8", np.float32(0.1), np.int8(3)),
        ),
        case(
            "quantize-per-channel-uint8",
            'R.quantize(x, y, z, axis=1, out_dtype="uint8")',
            (x, *per_c),
            _quantize(1, "uint8"),
        ),
        case(
            "quantize-singleton-int16",
            'R.quantize(x, y, z, axis=0, out_dtype="int16")',
            (x * 100, *single),
            _quantize(0, "int16"),
        ),
        case(
            "dequantize-per-channel-float32",
            'R.dequantize(x, y, z, axis=-1, out_dtype="float32")',
            (q, *per_w),
            _dequantize(2, "float32"),
        ),
        case(
            "dequantize-singleton-float16",
            'R.dequantize(x, y, z, axis=0, out_dtype="float16")',
            (q, *single),
            _dequantize(0, "float16"),
        ),
        *_more_qdq_cases(),
    ]


def _more_qdq_cases() -> list[Case]:
    """Ties, saturation, the other dtypes TVM admits, empty and 2-d parameters."""
    ties = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, 3.5]], "float32")
    big = np.array([[-1000.0, -129.0, 126.6, 1000.0, np.float32(3e38), -3e38]], "float32")
    one, zero = np.ones((1,), "float32"), np.zeros((1,), "int8")
    half = G.uniform(2, 3, 4, lo=0, hi=60, dtype="float16")
    half_params = (G.uniform(3, lo=0.2, hi=0.5, dtype="float16"), G.ints(0, 9, 3, dtype="uint16"))
    wide = G.ints(-5000, 5000, 3, 4, dtype="int32")
    col = (G.uniform(3, 1, lo=0.05, hi=0.5), G.ints(-5, 5, 3, dtype="int8"))
    q = "R.quantize(x, y, z, axis={}, out_dtype={!r})".replace("'", '"')
    dq = "R.dequantize(x, y, z, axis={}, out_dtype={!r})".replace("'", '"')
    return [
        case(
            "quantize-ties-to-even", q.format(-1, "int8"), (ties, one, zero), _quantize(-1, "int8")
        ),
        case("quantize-saturates", q.format(-1, "int8"), (big, one, zero), _quantize(-1, "int8")),
        case(
            "quantize-float16-uint16",
            q.format(1, "uint16"),
            (half, *half_params),
            _quantize(1, "uint16"),
        ),
        case(
            "quantize-empty",
            q.format(0, "int8"),
            (np.zeros((0, 3), "float32"), one, zero),
            _quantize(0, "int8"),
        ),
        case(
            "quantize-scale-3x1-per-channel",
            q.format(1, "int8"),
            (x_for_columns := G.uniform(2, 3, 4, lo=-5, hi=5), *col),
            _quantize(1, "int8"),
        ),
        case(
            "dequantize-int32-float16-scale",
            dq.format(0, "float32"),
            (wide, np.float16([0.01]), np.int32([7])),
            _dequantize(0, "float32"),
        ),
        case(
            "dequantize-uint8-per-channel-to-float16",
            dq.format(1, "float16"),
            (
                G.ints(0, 256, 2, 4, dtype="uint8"),
                G.uniform(4, lo=0.1, hi=2),
                G.ints(0, 255, 4, dtype="uint8"),
            ),
            _dequantize(1, "float16"),
        ),
        case(
            "dequantize-float-data",
            dq.format(-1, "float32"),
            (x_for_columns, np.float32([0.5]), np.int8([2])),
            _dequantize(-1, "float32"),
        ),
        case(
            "dequantize-empty",
            dq.format(0, "float32"),
            (np.zeros((0,), "int8"), one, zero),
            _dequantize(0, "float32"),
        ),
    ]


CASES: list[Case] = _layout_cases() + _qdq_cases()
