"""Runtime-facing operators: print/assert, null_value, shape <-> tensor,
allocation and memory ops (`R.builtin.*`, `R.memory.*`, `R.vm.*`), device
hints and quantize/dequantize.

`R.print` and `R.assert_op` store their format string before the values, as
TVM does, while the text writes it last as `format=`; `keyword_args` tells the
matcher and the printer so.
"""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.calls import infer_void
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, OpDef, define, register
from tvmlite.dsl.ops.registry import OpPatternKind as K

register(
    OpDef(
        "relax.print",
        (ArgDef("format", "str", ""), ArgDef("values", "any", variadic=True)),
        (),
        K.kOpaque,
        infer_void,
        keyword_args=("format",),
    )
)


def infer_assert(ctx: InferCtx) -> relax.StructInfo:
    cond = ctx.sinfo(0)
    bad = isinstance(cond, relax.TensorStructInfo) and (
        cond.dtype not in ("void", "bool") or ndim_of(cond) > 0
    )
    if bad:
        ctx.fail("condition must be a bool scalar")
    return relax.TupleStructInfo(())


register(
    OpDef(
        "relax.assert_op",
        (
            ArgDef("condition", "any"),
            ArgDef("format", "str", ""),
            ArgDef("format_args", "any", variadic=True),
        ),
        (),
        K.kOpaque,
        infer_assert,
        keyword_args=("format",),
    )
)


@define("relax.null_value", (), (), K.kOpaque)
def infer_null_value(ctx: InferCtx) -> relax.StructInfo:
    return relax.ObjectStructInfo()


@define("relax.shape_of", ("expr",), (), K.kOpaque)
def infer_shape_of(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    shape = known_shape(data)
    if shape is None:
        return relax.ShapeStructInfo(None, ndim_of(data))
    return relax.ShapeStructInfo(shape, len(shape))


@define("relax.tensor_to_shape", ("expr",), (), K.kOpaque)
def infer_tensor_to_shape(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    if ndim_of(data) not in (-1, 1):
        ctx.fail(f"input must be 1-d, got rank {ndim_of(data)}")
    if data.dtype not in ("void", "int64"):
        ctx.fail(f"input must have dtype int64, got {data.dtype}")
    shape = known_shape(data)
    length = sa.as_int(shape[0]) if shape else None
    return relax.ShapeStructInfo(None, -1 if length is None else length)


@define("relax.shape_to_tensor", (ArgDef("expr", "shape"),), (), K.kOpaque)
def infer_shape_to_tensor(ctx: InferCtx) -> relax.StructInfo:
    ndim = ctx.shape_ndim(0)
    if ndim < 0:
        return tensor_sinfo(None, "int64", 1)
    return tensor_sinfo((sa.const(ndim),), "int64")


@define("relax.size", ("expr",), (), K.kOpaque)
def infer_size(ctx: InferCtx) -> relax.StructInfo:
    ctx.tensor(0)
    return tensor_sinfo((), "int64")


def _dtype_value(ctx: InferCtx, index: int) -> str:
    value = ctx.arg(index)
    if isinstance(value, relax.DataTypeImm):
        return value.value
    ctx.fail(f'{ctx.arg_name(index)} must be a dtype such as R.dtype("float32")')


def _allocated(ctx: InferCtx, shape_index: int, dtype_index: int) -> relax.StructInfo:
    return tensor_sinfo(
        ctx.shape_arg(shape_index), _dtype_value(ctx, dtype_index), ctx.shape_ndim(shape_index)
    )


@define(
    "relax.builtin.alloc_tensor",
    (
        ArgDef("shape", "shape"),
        ArgDef("dtype", "dtype"),
        ArgDef("runtime_device_index", "prim"),
        ArgDef("storage_scope", "str", "global"),
    ),
    (),
    K.kOpaque,
)
def infer_builtin_alloc_tensor(ctx: InferCtx) -> relax.StructInfo:
    return _allocated(ctx, 0, 1)


def infer_object(ctx: InferCtx) -> relax.StructInfo:
    return relax.ObjectStructInfo()


register(
    OpDef(
        "relax.memory.alloc_storage",
        (
            ArgDef("size", "any"),  # as TVM's convert_to_expr: a tuple stays a tuple
            ArgDef("virtual_device_index", "prim"),
            ArgDef("storage_scope", "str"),
            ArgDef("dtype", "dtype"),
        ),
        (),
        K.kOpaque,
        infer_object,
    )
)
register(
    OpDef(
        "relax.vm.alloc_storage",
        (
            ArgDef("shape", "shape"),
            ArgDef("runtime_device_index", "prim"),
            ArgDef("dtype", "dtype"),
            ArgDef("storage_scope", "str", "global"),
        ),
        (),
        K.kOpaque,
        infer_object,
    )
)


def infer_storage_tensor(ctx: InferCtx) -> relax.StructInfo:
    return _allocated(ctx, 2, 3)


for _ns in ("memory", "vm"):
    register(
        OpDef(
            f"relax.{_ns}.alloc_tensor",
            (
                ArgDef("storage", "any"),
                ArgDef("offset", "prim"),
                ArgDef("shape", "shape"),
                ArgDef("dtype", "dtype"),
                ArgDef("runtime_device_ind", "prim", 0),
            ),
            (),
            K.kOpaque,
            infer_storage_tensor,
        )
    )
for _name, _arg in (
    ("memory.kill_storage", "storage"),
    ("memory.kill_tensor", "tensor"),
    ("vm.kill_object", "obj"),
):
    register(OpDef(f"relax.{_name}", (ArgDef(_arg, "any"),), (), K.kOpaque, infer_void))


@define(
    "relax.memory.view",
    (
        ArgDef("data"),
        ArgDef("shape", "shape", None),
        ArgDef("dtype", "dtype", None),
        ArgDef("relative_byte_offset", "prim", None),
    ),
    (),
    K.kOpaque,
)
def infer_memory_view(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    shape, dtype, ndim = known_shape(data), data.dtype, ndim_of(data)
    for value in ctx.call.args[1:]:
        if isinstance(value, relax.ShapeExpr):
            shape, ndim = value.values, len(value.values)
        elif isinstance(value, relax.DataTypeImm):
            dtype = value.value
    return tensor_sinfo(shape, dtype, ndim)


@define("relax.memory.ensure_zero_offset", ("data",), (), K.kOpaque)
def infer_ensure_zero_offset(ctx: InferCtx) -> relax.StructInfo:
    return like(ctx.tensor(0))


def infer_same(ctx: InferCtx) -> relax.StructInfo:
    return ctx.sinfo(0)


register(
    OpDef(
        "relax.hint_on_device",
        (ArgDef("data"),),
        (
            AttrDef("device_type", kind="int"),
            AttrDef("index", kind="int"),
            AttrDef("memory_scope", "global", "str"),
        ),
        K.kOpaque,
        infer_same,
    )
)
register(
    OpDef(
        "relax.to_vdevice",
        (ArgDef("data"),),
        (AttrDef("dst_vdevice", kind="object"),),
        K.kOpaque,
        infer_same,
    )
)


FLOAT8 = ("float8_e4m3fn", "float8_e5m2")
QUANTIZED = ("int8", "uint8", "int16", "uint16")
# The dtypes TVM's inference admits: (data, out_dtype) by operator, and the
# parameters' (shared by both).
QDQ_DTYPES = {
    "relax.quantize": (("float16", "float32"), (*QUANTIZED, *FLOAT8)),
    "relax.dequantize": (
        ("float16", "float32", *QUANTIZED, "int32", *FLOAT8),
        ("float16", "float32"),
    ),
}
SCALE_DTYPES = ("float16", "float32")
ZERO_POINT_DTYPES = ("float16", *QUANTIZED, "int32", "uint32")


def infer_qdq(ctx: InferCtx) -> relax.StructInfo:
    """TVM's checks: dtypes, the axis, and per-tensor (one element) or per-channel
    (as many as the axis) scale and zero point."""
    data = ctx.tensor(0)
    data_dtypes, out_dtypes = QDQ_DTYPES[ctx.op.name]
    out_dtype = ctx.attr("out_dtype")
    if data.dtype not in data_dtypes:
        ctx.fail(f"data must have dtype {' or '.join(data_dtypes)}, got {data.dtype}")
    if out_dtype not in out_dtypes:
        ctx.fail(f"out_dtype must be {' or '.join(out_dtypes)}, got {out_dtype}")
    ndim = ndim_of(data)
    axis = ctx.axis(ctx.attr("axis"), ndim) if ndim >= 0 else None
    shape = known_shape(data)
    for index, name, dtypes in ((1, "scale", SCALE_DTYPES), (2, "zero_point", ZERO_POINT_DTYPES)):
        param = ctx.tensor(index, name)
        if param.dtype not in dtypes:
            ctx.fail(f"{name} must have dtype {' or '.join(dtypes)}, got {param.dtype}")
        size = sa.as_int(sa.product(known_shape(param) or (sa.const(-1),)))
        channels = sa.as_int(shape[axis]) if shape is not None and axis is not None else None
        if size is not None and size > 1 and channels is not None and size != channels:
            ctx.fail(f"{name} has {size} elements, not 1 or {channels} (axis {axis})")
    return like(data, out_dtype)


for _name, _dtype in (("quantize", "int8"), ("dequantize", "float32")):
    register(
        OpDef(
            f"relax.{_name}",
            (ArgDef("data"), ArgDef("scale"), ArgDef("zero_point")),
            (AttrDef("out_dtype", _dtype, "dtype"), AttrDef("axis", -1, "int")),
            K.kElemWise,
            infer_qdq,
            signature=("data", "scale", "zero_point", "axis", "out_dtype"),
        )
    )
