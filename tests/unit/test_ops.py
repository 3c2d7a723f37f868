"""The Relax operator registry: attribute schemas as TVM 0.27 prints them, and
struct-info inference (static and symbolic), checked against lines copied from
TVM-printed modules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tvmlite.diagnostics import ParseError
from tvmlite.dsl import ops, relax, tir
from tvmlite.dsl.ops import shape_arith as sa

# ---------------------------------------------------------------- tiny helpers


def _dim(d: int | str, syms: dict[str, tir.Var]) -> tir.PrimExpr:
    if isinstance(d, int):
        return tir.IntImm("int64", d)
    return syms.setdefault(d, tir.Var(d, "int64"))


def tensor(shape: tuple | None, dtype: str, syms: dict[str, tir.Var]) -> relax.StructInfo:
    if shape is None:
        return relax.TensorStructInfo(None, dtype, -1)
    dims = tuple(_dim(d, syms) for d in shape)
    return relax.TensorStructInfo(dims, dtype, len(dims))


class S:
    """A shape argument (`R.shape([...])`)."""

    def __init__(self, *dims: int | str):
        self.dims = dims


class C:
    """A scalar constant argument (`R.const(v, dtype)`)."""

    def __init__(self, value: float, dtype: str):
        self.value, self.dtype = value, dtype


def _arg(value: Any, env: dict[str, relax.Var], syms: dict[str, tir.Var]) -> Any:
    if isinstance(value, str) and value in env:
        return env[value]
    if isinstance(value, S):
        return relax.ShapeExpr(tuple(_dim(d, syms) for d in value.dims))
    if isinstance(value, C):
        return relax.Constant(np.array(value.value, dtype=value.dtype))
    if isinstance(value, tuple) and all(isinstance(v, str) and v in env for v in value):
        return tuple(env[v] for v in value)
    return value


def build(name: str, inputs: dict[str, tuple], args: tuple, kwargs: dict | None = None):
    syms: dict[str, tir.Var] = {}
    env = {k: relax.Var(k, tensor(shape, dtype, syms)) for k, (shape, dtype) in inputs.items()}
    call_args = [_arg(a, env, syms) for a in args]
    call_kwargs = {k: _arg(v, env, syms) for k, v in (kwargs or {}).items()}
    return ops.make_call(name, call_args, call_kwargs)


def fmt_expr(e: tir.PrimExpr) -> str:
    if isinstance(e, tir.IntImm):
        return str(e.value) if e.dtype != "bool" else str(bool(e.value))
    if isinstance(e, tir.FloatImm):
        text = f"{e.value:.17g}"
        return f"T.{e.dtype}({text if '.' in text or 'e' in text else text + '.0'})"
    if isinstance(e, tir.Var):
        return e.name
    if isinstance(e, tir.BinaryOp):
        ops_ = {"mul": "*", "add": "+", "sub": "-", "floordiv": "//"}
        prec = {"add": 1, "sub": 1, "mul": 2, "floordiv": 2}
        if e.kind in ops_:
            a, b = fmt_expr(e.a), fmt_expr(e.b)
            if isinstance(e.a, tir.BinaryOp) and prec.get(e.a.kind, 9) < prec[e.kind]:
                a = f"({a})"
            if isinstance(e.b, tir.BinaryOp) and prec.get(e.b.kind, 9) <= prec[e.kind]:
                b = f"({b})"
            return f"{a} {ops_[e.kind]} {b}"
        return f"T.{e.kind}({fmt_expr(e.a)}, {fmt_expr(e.b)})"
    raise AssertionError(e)


def fmt_sinfo(s: relax.StructInfo) -> str:
    if isinstance(s, relax.TensorStructInfo):
        if s.shape is None:
            return f"R.Tensor(dtype={s.dtype!r}, ndim={s.ndim})"
        dims = ", ".join(fmt_expr(d) for d in s.shape) + ("," if len(s.shape) == 1 else "")
        return f"R.Tensor(({dims}), {s.dtype!r})"
    if isinstance(s, relax.TupleStructInfo):
        return "R.Tuple(" + ", ".join(fmt_sinfo(f) for f in s.fields) + ")"
    if isinstance(s, relax.ShapeStructInfo):
        if s.values is None:
            return f"R.Shape(ndim={s.ndim})"
        return "R.Shape([" + ", ".join(fmt_expr(v) for v in s.values) + "])"
    return type(s).__name__


def fmt_attr(v: Any) -> str:
    """TVM's printing of attribute values: lists, None, 17-digit floats, quotes."""
    if isinstance(v, tuple):
        return "[" + ", ".join(fmt_attr(x) for x in v) + "]"
    if isinstance(v, float):
        text = f"{v:.17g}"
        return text if "." in text or "e" in text else text + ".0"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, tir.PrimExpr):
        return fmt_expr(v)
    return str(v)


def fmt_attrs(call: relax.Call) -> str:
    return ", ".join(f"{k}={fmt_attr(v)}" for k, v in call.attrs)


# ---------------------------------------------------------------- corpus lines
# (TVM-printed keyword part, op, inputs, positional args, keyword args, printed result)

F32 = "float32"
CORPUS = [
    (
        (
            'strides=[1, 1], padding=[1, 0, 2, 1], dilation=[1, 1], groups=1, data_layout="NCHW", '
            'kernel_layout="OIHW", out_layout="NCHW", out_dtype=None'
        ),
        "relax.nn.conv2d",
        {"x": ((1, 2, 7, 6), F32), "y": ((3, 2, 3, 2), F32)},
        ("x", "y"),
        {"padding": [1, 0, 2, 1]},
        "R.Tensor((1, 3, 8, 6), 'float32')",
    ),
    (
        (
            'strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NHWC", '
            'kernel_layout="HWIO", out_layout="NHWC", out_dtype=None'
        ),
        "relax.nn.conv2d",
        {"x": ((1, 6, 6, 3), F32), "y": ((3, 3, 3, 4), F32)},
        ("x", "y"),
        {"padding": 1, "data_layout": "NHWC", "kernel_layout": "HWIO"},
        "R.Tensor((1, 6, 6, 4), 'float32')",
    ),
    (
        (
            'strides=[2], padding=[2, 2], dilation=[2], groups=1, data_layout="NCW", '
            'kernel_layout="OIW", out_layout="NCW", out_dtype=None'
        ),
        "relax.nn.conv1d",
        {"x": ((1, 2, 16), F32), "y": ((4, 2, 3), F32)},
        ("x", "y"),
        {"strides": 2, "padding": 2, "dilation": 2},
        "R.Tensor((1, 4, 8), 'float32')",
    ),
    (
        (
            "strides=[2], padding=[1, 1], output_padding=[0], dilation=[1], groups=1, "
            'data_layout="NCW", kernel_layout="IOW", out_layout="NCW", out_dtype=None'
        ),
        "relax.nn.conv1d_transpose",
        {"x": ((1, 3, 6), F32), "y": ((3, 2, 3), F32)},
        ("x", "y"),
        {"strides": 2, "padding": 1},
        "R.Tensor((1, 2, 11), 'float32')",
    ),
    (
        (
            "strides=[1, 1, 1], padding=[1, 1, 1, 1, 1, 1], dilation=[1, 1, 1], groups=1, "
            'data_layout="NCDHW", kernel_layout="OIDHW", out_layout="NCDHW", out_dtype=None'
        ),
        "relax.nn.conv3d",
        {"x": ((1, 2, 4, 5, 5), F32), "y": ((3, 2, 3, 3, 3), F32)},
        ("x", "y"),
        {"padding": 1},
        "R.Tensor((1, 3, 4, 5, 5), 'float32')",
    ),
    (
        (
            "pool_size=[2, 2], strides=[2, 2], dilation=[1, 1], padding=[0, 0, 0, 0], "
            'ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout="NCHW"'
        ),
        "relax.nn.max_pool2d",
        {"x": ((1, 3, 8, 8), F32)},
        ("x", 2, 2),
        {},
        "R.Tensor((1, 3, 4, 4), 'float32')",
    ),
    (
        (
            "pool_size=[2, 2], strides=[2, 2], dilation=[1, 1], padding=[0, 0, 0, 0], "
            'ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout="NCHW"'
        ),
        "relax.nn.avg_pool2d",
        {"x": ((1, 3, 8, 8), F32)},
        ("x", [2, 2], [2, 2]),
        {},
        "R.Tensor((1, 3, 4, 4), 'float32')",
    ),
    (  # a tiled layout: the channel block passes through
        (
            "pool_size=[3, 3], strides=[1, 1], dilation=[1, 1], padding=[0, 0, 0, 0], "
            'ceil_mode=False, count_include_pad=False, layout="NCHW16c", out_layout="NCHW16c"'
        ),
        "relax.nn.max_pool2d",
        {"x": ((4, 4, 112, 112, 16), F32)},
        ("x", [3, 3]),
        {"layout": "NCHW16c"},
        "R.Tensor((4, 4, 110, 110, 16), 'float32')",
    ),
    (
        'roi=[T.float32(0.0), T.float32(0.0), T.float32(0.0), T.float32(0.0)], layout="NCHW16c", '
        'method="nearest_neighbor", coordinate_transformation_mode="asymmetric", '
        'rounding_method="round", cubic_alpha=-0.75, cubic_exclude=0, extrapolation_value=0.0, '
        "out_dtype=None",
        "relax.image.resize2d",
        {"x": ((1, 2, 4, 3, 16), F32)},
        ("x", (8, 6)),
        {
            "layout": "NCHW16c",
            "method": "nearest_neighbor",
            "coordinate_transformation_mode": "asymmetric",
        },
        "R.Tensor((1, 2, 8, 6, 16), 'float32')",
    ),
    (
        'output_size=[3, 2], layout="NCHW", out_layout="NCHW"',
        "relax.nn.adaptive_avg_pool2d",
        {"x": ((1, 2, 6, 4), F32)},
        ("x", (3, 2)),
        {},
        "R.Tensor((1, 2, 3, 2), 'float32')",
    ),
    (
        (
            "axis=1, epsilon=1.0000000000000001e-05, center=True, scale=True, "
            "momentum=0.10000000000000001, training=False"
        ),
        "relax.nn.batch_norm",
        {"x": ((2, 3, 4, 4), F32), **{k: ((3,), F32) for k in ("g", "b", "m", "v")}},
        ("x", "g", "b", "m", "v"),
        {"axis": 1, "training": False},
        (
            "R.Tuple(R.Tensor((2, 3, 4, 4), 'float32'), R.Tensor((3,), 'float32'), "
            "R.Tensor((3,), 'float32'))"
        ),
    ),
    (
        "axes=[-1], epsilon=1.0000000000000001e-05, center=True, scale=True",
        "relax.nn.layer_norm",
        {"x": ((2, 5, 16), F32), "y": ((16,), F32), "z": ((16,), F32)},
        ("x", "y", "z", -1),
        {},
        "R.Tensor((2, 5, 16), 'float32')",
    ),
    (
        (
            "num_groups=3, channel_axis=1, axes=[2, 3], epsilon=1.0000000000000001e-05, "
            "center=True, scale=True"
        ),
        "relax.nn.group_norm",
        {"x": ((2, 6, 4, 4), F32), "y": ((6,), F32), "z": ((6,), F32)},
        ("x", "y", "z", 3, 1, [2, 3]),
        {},
        "R.Tensor((2, 6, 4, 4), 'float32')",
    ),
    (
        "axes=[-1], epsilon=1.0000000000000001e-05",
        "relax.nn.rms_norm",
        {"x": ((2, 5, 16), F32), "y": ((16,), F32)},
        ("x", "y"),
        {},
        "R.Tensor((2, 5, 16), 'float32')",
    ),
    (
        "alpha=0.10000000000000001",
        "relax.nn.leakyrelu",
        {"x": ((2, 3, 8), F32)},
        ("x",),
        {"alpha": 0.1},
        "R.Tensor((2, 3, 8), 'float32')",
    ),
    (
        "beta=1.0, threshold=20.0",
        "relax.nn.softplus",
        {"x": ((2, 3, 8), F32)},
        ("x",),
        {},
        "R.Tensor((2, 3, 8), 'float32')",
    ),
    (
        'pad_width=[0, 0, 1, 2, 2, 1], pad_value=0.5, pad_mode="constant"',
        "relax.nn.pad",
        {"x": ((2, 3, 4), F32)},
        ("x", [0, 0, 1, 2, 2, 1]),
        {"pad_value": 0.5},
        "R.Tensor((2, 6, 7), 'float32')",
    ),
    (
        "scale=None, causal_mask=None, window_size=None",
        "relax.nn.attention",
        {"q": ((1, 6, 2, 4), F32), "k": ((1, 5, 2, 4), F32), "v": ((1, 5, 2, 8), F32)},
        ("q", "k", "v"),
        {},
        "R.Tensor((1, 6, 2, 8), 'float32')",
    ),
    (
        "rate=0.5",
        "relax.nn.dropout",
        {"x": ((4, 8), F32)},
        ("x",),
        {},
        "R.Tuple(R.Tensor((4, 8), 'float32'), R.Tensor((4, 8), 'float32'))",
    ),
    (
        "axis=-1",
        "relax.nn.softmax",
        {"x": ((2, 4, 4), F32)},
        ("x",),
        {},
        "R.Tensor((2, 4, 4), 'float32')",
    ),
    (
        "axis=[1], keepdims=False",
        "relax.sum",
        {"x": ((3, 5), F32)},
        ("x", 1),
        {},
        "R.Tensor((3,), 'float32')",
    ),
    (
        "axis=None, keepdims=False",
        "relax.max",
        {"x": ((3, 4), F32)},
        ("x",),
        {},
        "R.Tensor((), 'float32')",
    ),
    (
        "axis=None, keepdims=True",
        "relax.variance",
        {"x": ((2, 3, 4), F32)},
        ("x",),
        {"keepdims": True},
        "R.Tensor((1, 1, 1), 'float32')",
    ),
    (
        "axis=[-1, -2], keepdims=True",
        "relax.mean",
        {"x": ((2, 16, 8, 8), F32)},
        ("x", [-1, -2], True),
        {},
        "R.Tensor((2, 16, 1, 1), 'float32')",
    ),
    (
        "axis=2, keepdims=True",
        "relax.argmin",
        {"x": ((3, 4, 5), F32)},
        ("x", 2, True),
        {},
        "R.Tensor((3, 4, 1), 'int64')",
    ),
    (
        "axis=None, dtype=None, exclusive=False",
        "relax.cumsum",
        {"x": ((3, 4), F32)},
        ("x",),
        {},
        "R.Tensor((12,), 'float32')",
    ),
    (
        "axes=[1, 0]",
        "relax.permute_dims",
        {"x": ((10, 16), F32)},
        ("x", [1, 0]),
        {},
        "R.Tensor((16, 10), 'float32')",
    ),
    (
        "axes=None",
        "relax.permute_dims",
        {"x": ((2, 3, 4), F32)},
        ("x",),
        {},
        "R.Tensor((4, 3, 2), 'float32')",
    ),
    (
        "axis=[0, 3]",
        "relax.expand_dims",
        {"x": ((2, 3), F32)},
        ("x", [0, 3]),
        {},
        "R.Tensor((1, 2, 3, 1), 'float32')",
    ),
    (
        "axis=[1]",
        "relax.squeeze",
        {"x": ((2, 1, 3, 1), F32)},
        ("x", 1),
        {},
        "R.Tensor((2, 3, 1), 'float32')",
    ),
    (
        "axis=1",
        "relax.concat",
        {"x": ((2, 3), F32), "y": ((2, 4), F32), "z": ((2, 2), F32)},
        (("x", "y", "z"),),
        {"axis": 1},
        "R.Tensor((2, 9), 'float32')",
    ),
    (
        "indices_or_sections=[2, 7], axis=1",
        "relax.split",
        {"x": ((4, 10), F32)},
        ("x", [2, 7], 1),
        {},
        (
            "R.Tuple(R.Tensor((4, 2), 'float32'), R.Tensor((4, 5), 'float32'), "
            "R.Tensor((4, 3), 'float32'))"
        ),
    ),
    (
        "repeats=[2, 2]",
        "relax.tile",
        {"x": ((2, 3), F32)},
        ("x", [2, 2]),
        {},
        "R.Tensor((4, 6), 'float32')",
    ),
    (
        "repeats=3, axis=None",
        "relax.repeat",
        {"x": ((2, 3), F32)},
        ("x", 3),
        {},
        "R.Tensor((18,), 'float32')",
    ),
    (
        'axis=0, mode="fast"',
        "relax.take",
        {"x": ((10, 32), F32), "i": ((2, 8), "int32")},
        ("x", "i", 0),
        {},
        "R.Tensor((2, 8, 32), 'float32')",
    ),
    (
        "batch_dims=0",
        "relax.gather_nd",
        {"x": ((3, 4, 2), F32), "i": ((5, 2), "int64")},
        ("x", "i"),
        {},
        "R.Tensor((5, 2), 'float32')",
    ),
    (
        'axis=1, reduction="add"',
        "relax.scatter_elements",
        {"x": ((3, 6), F32), "i": ((3, 2), "int64"), "u": ((3, 2), F32)},
        ("x", "i", "u", 1, "add"),
        {},
        "R.Tensor((3, 6), 'float32')",
    ),
    (
        "depth=5, axis=0",
        "relax.one_hot",
        {"x": ((3,), "int32")},
        ("x", 7, -1, 5, 0),
        {},
        "R.Tensor((5, 3), 'int32')",
    ),
    ('dtype="int64"', "relax.arange", {}, (0, 10, 2), {}, "R.Tensor((5,), 'int64')"),
    (
        'dtype="float32"',
        "relax.full",
        {},
        (S(2, 3), C(1.5, F32)),
        {"dtype": F32},
        "R.Tensor((2, 3), 'float32')",
    ),
    ('dtype="float32"', "relax.ones", {}, (S(2, 5), F32), {}, "R.Tensor((2, 5), 'float32')"),
    (
        'dtype="int32"',
        "relax.ones_like",
        {"x": ((3, 4), F32)},
        ("x", "int32"),
        {},
        "R.Tensor((3, 4), 'int32')",
    ),
    (
        'dtype="int32"',
        "relax.astype",
        {"x": ((2, 8), "int64")},
        ("x", "int32"),
        {},
        "R.Tensor((2, 8), 'int32')",
    ),
    (
        'k=2, axis=0, ret_type="both", largest=False, dtype="int32"',
        "relax.topk",
        {"x": ((4, 3), F32)},
        ("x", 2, 0),
        {"largest": False},
        "R.Tuple(R.Tensor((2, 3), 'float32'), R.Tensor((2, 3), 'int32'))",
    ),
    (
        'axis=1, descending=True, dtype="int64"',
        "relax.argsort",
        {"x": ((3, 8), F32)},
        ("x", 1, True, "int64"),
        {},
        "R.Tensor((3, 8), 'int64')",
    ),
    (
        "out_int32=False, right=False",
        "relax.bucketize",
        {"x": ((8,), F32), "b": ((4,), F32)},
        ("x", "b"),
        {},
        "R.Tensor((8,), 'int64')",
    ),
    (
        'subscripts="ij,jk->ik"',
        "relax.einsum",
        {"x": ((3, 4), F32), "y": ((4, 5), F32)},
        (("x", "y"),),
        {"subscripts": "ij,jk->ik"},
        "R.Tensor((3, 5), 'float32')",
    ),
    (
        'indexing="ij"',
        "relax.meshgrid",
        {"x": ((3,), F32), "y": ((4,), F32)},
        (("x", "y"),),
        {},
        "R.Tuple(R.Tensor((3, 4), 'float32'), R.Tensor((3, 4), 'float32'))",
    ),
    (
        'out_dtype="float32"',
        "relax.matmul",
        {"x": ((4, 16), F32), "y": ((16, 32), F32)},
        ("x", "y"),
        {"out_dtype": F32},
        "R.Tensor((4, 32), 'float32')",
    ),
    (
        "out_dtype=None",
        "relax.matmul",
        {"x": ((4,), F32), "y": ((4,), F32)},
        ("x", "y"),
        {},
        "R.Tensor((), 'float32')",
    ),
    (
        "assume_inbound=False",
        "relax.strided_slice",
        {"x": ((8, 9), F32)},
        ("x", (0, 1), (1, 0), (7, 8), (2, 3)),
        {},
        "R.Tensor((3, 3), 'float32')",
    ),
    (
        "assume_inbound=False",
        "relax.strided_slice",
        {"x": ((6, 5), F32)},
        ("x", (1,), (4,), (0,), (-1,)),
        {},
        "R.Tensor((6, 4), 'float32')",
    ),
    (
        "axis=0",
        "relax.slice_scatter",
        {"x": ((6, 4), F32), "y": ((2, 4), F32)},
        ("x", "y", 1, 5, 2),
        {},
        "R.Tensor((6, 4), 'float32')",
    ),
    (
        "",
        "relax.add",
        {"x": (("n", 16), F32), "y": ((1, 16), F32)},
        ("x", "y"),
        {},
        "R.Tensor((n, 16), 'float32')",
    ),
    ("", "relax.flatten", {"x": (("n", 4), F32)}, ("x",), {}, "R.Tensor((n * 4,), 'float32')"),
    ("", "relax.clip", {"x": ((2, 3), F32)}, ("x", 0, 6), {}, "R.Tensor((2, 3), 'float32')"),
    ("", "relax.triu", {"x": ((2, 4, 4), F32)}, ("x", 1), {}, "R.Tensor((2, 4, 4), 'float32')"),
    (
        "",
        "relax.reshape",
        {"x": ((2, 8, 32), F32)},
        ("x", S(2, 8, 4, 8)),
        {},
        "R.Tensor((2, 8, 4, 8), 'float32')",
    ),
    (
        "",
        "relax.broadcast_to",
        {"x": ((1, 8), F32)},
        ("x", S(2, 4, 8, 8)),
        {},
        "R.Tensor((2, 4, 8, 8), 'float32')",
    ),
    (
        "",
        "relax.collapse_sum_to",
        {"x": ((3, 5), F32)},
        ("x", S(1, 5)),
        {},
        "R.Tensor((1, 5), 'float32')",
    ),
    (
        "",
        "relax.nn.batch_flatten",
        {"x": ((2, 3, 4), F32)},
        ("x",),
        {},
        "R.Tensor((2, 12), 'float32')",
    ),
    (
        "",
        "relax.nn.cross_entropy_with_logits",
        {"x": ((2, 5), F32), "y": ((2, 5), F32)},
        ("x", "y"),
        {},
        "R.Tensor((), 'float32')",
    ),
    (
        "",
        "relax.index_tensor",
        {"x": ((5, 4), F32), "y": ((3,), "int64")},
        ("x", ("y",)),
        {},
        "R.Tensor((3, 4), 'float32')",
    ),
    (
        "",
        "relax.less",
        {"x": ((4, 8), F32), "y": ((4, 8), F32)},
        ("x", "y"),
        {},
        "R.Tensor((4, 8), 'bool')",
    ),
    ("", "relax.isnan", {"x": ((4, 8), F32)}, ("x",), {}, "R.Tensor((4, 8), 'bool')"),
    # TVM 0.27's grid_sample: the grid is (N, 2, H_out, W_out), (N, 3, D, H, W) in 3-d.
    (
        'method="bilinear", layout="NCHW", padding_mode="zeros", align_corners=False',
        "relax.image.grid_sample",
        {"x": ((2, 3, 5, 6), F32), "y": ((2, 2, 4, 7), F32)},
        ("x", "y"),
        {},
        "R.Tensor((2, 3, 4, 7), 'float32')",
    ),
    (
        'method="bilinear", layout="NCDHW", padding_mode="zeros", align_corners=False',
        "relax.image.grid_sample",
        {"x": ((2, 3, 4, 5, 6), F32), "y": ((2, 3, 2, 4, 7), F32)},
        ("x", "y"),
        {"layout": "NCDHW"},
        "R.Tensor((2, 3, 2, 4, 7), 'float32')",
    ),
    (
        'method="bilinear", layout="NHWC", padding_mode="zeros", align_corners=False',
        "relax.image.grid_sample",
        {"x": ((2, 3, 5, 6), F32), "y": ((2, 4, 7, 2), F32)},
        ("x", "y"),
        {"layout": "NHWC"},
        "R.Tensor((2, 7, 2, 6), 'float32')",
    ),
    (
        "align_corners=True",
        "relax.image.affine_grid",
        {"x": ((2, 3, 4), F32)},
        ("x", (3, 4, 5)),
        {},
        "R.Tensor((2, 3, 3, 4, 5), 'float32')",
    ),
]


@pytest.mark.parametrize("printed, name, inputs, args, kwargs, expected", CORPUS)
def test_corpus_line(printed, name, inputs, args, kwargs, expected):
    call = build(name, inputs, args, kwargs)
    assert fmt_attrs(call) == printed
    assert fmt_sinfo(ops.infer_struct_info(call)) == expected


# ---------------------------------------------------------------- symbolic shapes

SYMBOLIC = [
    ("relax.reshape", {"x": (("n", 3, 4), F32)}, ("x", (2, -1)), "R.Tensor((2, n * 6), 'float32')"),
    ("relax.reshape", {"x": (("n", 3, 4), F32)}, ("x", (-1, 4)), "R.Tensor((n * 3, 4), 'float32')"),
    (
        "relax.concat",
        {"x": (("n", 3), F32), "y": (("m", 3), F32)},
        (("x", "y"),),
        "R.Tensor((n + m, 3), 'float32')",
    ),
    (
        "relax.add",
        {"x": (("n", 3), F32), "y": (("m", 3), F32)},
        ("x", "y"),
        "R.Tensor(dtype='float32', ndim=2)",
    ),
    (
        "relax.add",
        {"x": (("n", 3), F32), "y": ((2, 3), F32)},
        ("x", "y"),
        "R.Tensor(dtype='float32', ndim=2)",
    ),
    (
        "relax.matmul",
        {"x": (("b", 2, 3), F32), "y": ((1, 3, "k"), F32)},
        ("x", "y"),
        "R.Tensor((b, 2, k), 'float32')",
    ),
    (
        "relax.split",
        {"x": (("n", 3), F32)},
        ("x", 2),
        "R.Tuple(R.Tensor(((n + 1) // 2, 3), 'float32'), R.Tensor((n - (n + 1) // 2, 3), 'float32'))",
    ),
    (
        "relax.split",
        {"x": (("n", 3), F32)},
        ("x", [2, 5]),
        (
            "R.Tuple(R.Tensor((T.min(2, n), 3), 'float32'), "
            "R.Tensor((T.max(T.min(5, n) - T.min(2, n), 0), 3), 'float32'), "
            "R.Tensor((T.max(n - 5, 0), 3), 'float32'))"
        ),
    ),
    (
        "relax.strided_slice",
        {"x": (("n", 9), F32)},
        ("x", (0,), (1,), (3,), (2,)),
        "R.Tensor(((T.min(3, n) + 1 - T.min(1, n)) // 2, 9), 'float32')",
    ),
    ("relax.arange", {}, (0, "n", 1), "R.Tensor((n,), 'int64')"),
    (
        "relax.permute_dims",
        {"x": ((3, "n", 4), F32)},
        ("x", [1, 0, 2]),
        "R.Tensor((n, 3, 4), 'float32')",
    ),
]


@pytest.mark.parametrize("name, inputs, args, expected", SYMBOLIC)
def test_symbolic(name, inputs, args, expected):
    syms: dict[str, tir.Var] = {}
    env = {k: relax.Var(k, tensor(s, d, syms)) for k, (s, d) in inputs.items()}

    def conv(a: Any) -> Any:
        if isinstance(a, str):
            return env[a] if a in env else _dim(a, syms)
        if isinstance(a, tuple) and a and all(isinstance(v, str) and v in env for v in a):
            return tuple(env[v] for v in a)
        if isinstance(a, tuple):
            return tuple(conv(v) for v in a)
        return a

    call = ops.make_call(name, [conv(a) for a in args], {})
    assert fmt_sinfo(ops.infer_struct_info(call)) == expected


# ---------------------------------------------------------------- argument handling


def test_call_shape_and_defaults():
    call = build(
        "relax.nn.conv2d", {"x": ((1, 3, 8, 8), F32), "w": ((4, 3, 3, 3), F32)}, ("x", "w")
    )
    assert call.op == relax.Op("relax.nn.conv2d")
    assert [k for k, _ in call.attrs] == [a.name for a in ops.lookup("relax.nn.conv2d").attrs]
    assert dict(call.attrs)["out_layout"] == "NCHW"  # filled from data_layout, as TVM does
    assert len(call.args) == 2


def test_literal_conversions():
    clip = build("relax.clip", {"x": ((2,), F32)}, ("x", 0, 6))
    assert clip.args[1] == relax.PrimValue(tir.IntImm("int64", 0))
    half = build("relax.clip", {"x": ((2,), F32)}, ("x", tir.FloatImm("float64", -0.5), 0.5))
    assert half.args[2] == relax.PrimValue(tir.FloatImm("float64", 0.5))
    sl = build("relax.strided_slice", {"x": ((8, 9), F32)}, ("x", [0], [1], [2]))
    assert isinstance(sl.args[1], relax.Tuple) and len(sl.args) == 4  # strides omitted
    rs = build("relax.reshape", {"x": ((2, 3), F32)}, ("x", [3, -1]))
    assert rs.args[1] == relax.ShapeExpr((tir.IntImm("int64", 3), tir.IntImm("int64", 2)))
    add = build("relax.add", {"x": ((2,), "int32")}, ("x", 1))
    assert add.args[1] == relax.PrimValue(tir.IntImm("int32", 1))
    cat = ops.make_call(
        "relax.concat", [relax.Tuple((relax.Var("a", tensor((2,), F32, {})),))], {"axis": 0}
    )
    assert fmt_sinfo(ops.infer_struct_info(cat)) == "R.Tensor((2,), 'float32')"


def test_relu6_builds_clip_and_arange_defaults():
    relu6 = build("relax.nn.relu6", {"x": ((2,), F32)}, ("x",))
    assert relu6.op == relax.Op("relax.clip")
    arange = build("relax.arange", {}, (5,))
    assert [a.value.value for a in arange.args] == [0, 5, 1]
    assert dict(arange.attrs)["dtype"] == "int64"
    frange = build("relax.arange", {}, (0, 5, 0.5))
    assert dict(frange.attrs)["dtype"] == "float32"
    assert fmt_sinfo(ops.infer_struct_info(frange)) == "R.Tensor((10,), 'float32')"


def test_print_and_call_tir():
    x = relax.Var("x", tensor((2,), F32, {}))
    pr = ops.make_call("relax.print", [x], {"format": "x: {}"})
    assert pr.args == (relax.StringImm("x: {}"), x)
    out = tensor((2,), F32, {})
    ct = ops.make_call("relax.call_tir", [relax.GlobalVar("f"), (x,)], {"out_sinfo": out})
    assert ct.sinfo_args == (out,) and isinstance(ct.args[1], relax.Tuple)
    assert ops.infer_struct_info(ct) == out
    ct2 = ops.make_call("relax.call_tir", [relax.GlobalVar("f"), (x,), [out, out]], {})
    assert isinstance(ops.infer_struct_info(ct2), relax.TupleStructInfo)
    packed = ops.make_call("relax.call_packed", ["vm.builtin.f", x], {"sinfo_args": out})
    assert packed.op == relax.ExternFunc("vm.builtin.f") and ops.infer_struct_info(packed) == out


def test_registry_contents():
    names = {op.name for op in ops.all_ops()}
    assert len(names) >= 150
    for name in ("relax.nn.conv2d", "relax.image.resize2d", "relax.memory.alloc_tensor"):
        assert name in names
    assert ops.lookup("relax.nope") is None
    for op in ops.all_ops():
        assert isinstance(op.pattern, ops.OpPatternKind) and op.pattern != ops.OpPatternKind.kTuple


# ---------------------------------------------------------------- errors

ERRORS = [
    ("relax.nope", {}, (), {}, "unknown operator R.nope"),
    ("relax.add", {"x": ((2,), F32)}, ("x", "x", "x"), {}, "R.add: takes at most 2"),
    ("relax.add", {"x": ((2,), F32)}, ("x",), {}, "R.add: missing argument 'x2'"),
    (
        "relax.sum",
        {"x": ((2,), F32)},
        ("x",),
        {"axes": 1},
        "R.sum: unknown keyword argument 'axes'",
    ),
    (
        "relax.astype",
        {"x": ((2,), F32)},
        ("x", "float12"),
        {},
        "R.astype: dtype has an unknown dtype",
    ),
    ("relax.sum", {"x": ((2,), F32)}, ("x", "a"), {}, "R.sum: axis must be an integer"),
    (
        "relax.nn.conv2d",
        {"x": ((1, 3, 8, 8), F32), "w": ((4, 3, 3, 3), F32)},
        ("x", "w"),
        {"strides": [1, 2, 3]},
        "strides must have 2 entries",
    ),
    (
        "relax.matmul",
        {"x": ((2, 3), F32), "y": ((4, 5), F32)},
        ("x", "y"),
        {},
        "R.matmul: inner dimensions differ: 3 vs 4",
    ),
    (
        "relax.add",
        {"x": ((4, 3), F32), "y": ((2, 3), F32)},
        ("x", "y"),
        {},
        "R.add: shapes cannot broadcast",
    ),
    ("relax.permute_dims", {"x": ((2, 3), F32)}, ("x", [0, 0]), {}, "repeats an axis"),
    (
        "relax.reshape",
        {"x": ((2, 3), F32)},
        ("x", (4, 2)),
        {},
        "R.reshape: cannot reshape 6 elements",
    ),
    ("relax.sum", {"x": ((2, 3), F32)}, ("x", 2), {}, "out of range"),
    ("relax.exp", {"x": ((2, 3), "int32")}, ("x",), {}, "R.exp: x must have a float dtype"),
    ("relax.full", {}, (S(2), 1.5), {}, "R.full: fill_value must be a tensor"),
    (
        "relax.nn.conv2d",
        {"x": ((1, 3, 8, 8), F32), "w": ((4, 5, 3, 3), F32)},
        ("x", "w"),
        {},
        "channels",
    ),
    (
        "relax.concat",
        {"x": ((2, 3), F32), "y": ((3, 4), F32)},
        (("x", "y"),),
        {"axis": 1},
        "differ on dim 0",
    ),
    ("relax.broadcast_to", {"x": ((2, 3), F32)}, ("x", S(4, 2, 4)), {}, "cannot broadcast dim 1"),
    *(
        (
            f"relax.{op}",
            {"x": ((2, 3, 4), dtype), "s": (s, sd), "z": ((), zd)},
            ("x", "s", "z"),
            kw,
            m,
        )
        for op, dtype, s, sd, zd, kw, m in (
            ("quantize", "int8", (), F32, "int8", {}, "data must have dtype float16 or float32"),
            ("quantize", F32, (), F32, "int8", {"out_dtype": "float32"}, "out_dtype must be int8"),
            ("quantize", F32, (), "int32", "int8", {}, "scale must have dtype float16 or float32"),
            ("quantize", F32, (), F32, F32, {}, "zero_point must have dtype float16 or int8"),
            ("quantize", F32, (4,), F32, "int8", {"axis": 1}, "scale has 4 elements, not 1 or 3"),
            ("quantize", F32, (), F32, "int8", {"axis": 3}, "axis 3 is out of range"),
            ("dequantize", "int64", (), F32, "int8", {}, "data must have dtype float16 or"),
            ("dequantize", "int8", (), F32, "int8", {"out_dtype": "int8"}, "out_dtype must be"),
            ("dequantize", "int8", (2, 2), F32, "int8", {"axis": 1}, "scale has 4 elements"),
        )
    ),
    (
        "relax.vision.all_class_non_max_suppression",
        {"b": ((1, 5, 4), F32), "s": ((1, 3, 5), F32), "m": ((), "int64"), "t": ((), F32)},
        ("b", "s", "m", "t", "t"),
        {"output_format": "coco"},
        "output_format must be 'onnx' or 'tensorflow', got 'coco'",
    ),
    (
        "relax.vision.multibox_transform_loc",
        {"c": ((1, 3, 5), F32), "l": ((1, 20), F32), "a": ((1, 5, 4), F32)},
        ("c", "l", "a"),
        {"variances": (0.1, 0.2)},
        "variances must have 4 entries, got 2",
    ),
    (
        "relax.vision.multibox_transform_loc",
        {"c": ((1, 3, 5), F32), "l": ((1, 16), F32), "a": ((1, 5, 4), F32)},
        ("c", "l", "a"),
        {},
        "loc_pred.shape[1] (4 * anchors)",
    ),
    ("relax.vision.get_valid_counts", {"x": ((2, 3), F32)}, ("x",), {}, "data must have rank 3"),
    (
        "relax.vision.roi_align",
        {"x": ((1, 2, 8, 8), F32), "r": ((3, 5), F32)},
        ("x", "r", (2, 2), 1.0),
        {"layout": "NCDHW"},
        "layout must be 'NCHW' or 'NHWC'",
    ),
]


@pytest.mark.parametrize("name, inputs, args, kwargs, message", ERRORS)
def test_errors(name, inputs, args, kwargs, message):
    with pytest.raises(ParseError) as info:
        call = build(name, inputs, args, kwargs)
        ops.infer_struct_info(call)
    assert message in info.value.message


@pytest.mark.parametrize(
    "name, result, refused", [("relax.add", "void", True), ("relax.less", "bool", False)]
)
def test_operands_of_two_dtypes_are_kept_and_reported(
    name: str, result: str, refused: bool
) -> None:
    """As TVM's parser: an arithmetic result's dtype is unknown, a comparison's bool;
    `dtype_conflict` is the error `lower`/`build` (and an unannotated binding) give for
    arithmetic (a comparison compares the promoted operands, as TVM's kernel does)."""
    call = build(name, {"x": ((4, 3), F32), "y": ((4, 3), "float16")}, ("x", "y"), {})
    sinfo = ops.infer_struct_info(call)
    assert isinstance(sinfo, relax.TensorStructInfo) and sinfo.dtype == result
    short = name.replace("relax.", "R.")
    expected = f"{short}: operands must have the same dtype, got float32 and float16"
    assert ops.dtype_conflict(call) == (expected if refused else None)
    same = build(name, {"x": ((4, 3), F32)}, ("x", "x"), {})
    assert ops.dtype_conflict(same) is None


def test_no_other_exception_escapes():
    """Odd inputs give a ParseError, never a Python exception."""
    x = relax.Var("x", tensor((2, 3), F32, {}))
    weird = [object(), None, {"a": 1}, 1.5, "s", (1, "a"), relax.ShapeExpr(())]
    for op in ops.all_ops():
        for value in weird:
            try:
                call = ops.make_call(op.name, [x, value], {})
                ops.infer_struct_info(call)
            except ParseError:
                pass


# ---------------------------------------------------------------- shape arithmetic


def test_shape_arith_folds():
    n = tir.Var("n", "int64")
    assert sa.mul(sa.mul(n, sa.const(3)), sa.const(4)) == tir.BinaryOp(
        "mul", n, sa.const(12), "int64"
    )
    assert fmt_expr(sa.floordiv(sa.mul(n, sa.const(12)), sa.const(2))) == "n * 6"
    assert fmt_expr(sa.sub(sa.add(n, sa.const(2)), sa.const(3))) == "n - 1"
    assert sa.add(sa.const(2), sa.const(3)) == sa.const(5)
    assert sa.equal(n, n) and not sa.equal(n, tir.Var("n", "int64"))
    assert sa.differ(sa.const(2), sa.const(3)) and not sa.differ(n, sa.const(3))
