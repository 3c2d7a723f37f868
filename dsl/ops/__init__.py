"""The Relax operator registry: attribute schemas and struct-info inference.

    lookup("relax.nn.conv2d")           -> OpDef | None
    make_call(name, args, kwargs, span) -> relax.Call (attributes in TVM's order)
    infer_struct_info(call, span)       -> relax.StructInfo
    dtype_conflict(call)                -> error text for operands of dtypes the op refuses | None
    all_ops()                           -> every OpDef
    op_names()                          -> every registered name, aliases included

Importing the theme modules below registers their operators.
"""

from __future__ import annotations

from tvmlite.dsl import relax
from tvmlite.dsl.ops import (  # noqa: F401  (imported to register their operators)
    binary,
    builtin,
    calls,
    create,
    dist,
    grad,
    image,
    index,
    inspect,
    join,
    linalg,
    manipulate,
    nn_act,
    nn_conv,
    nn_norm,
    reduce,
    sort,
    unary,
    vision,
)
from tvmlite.dsl.ops.call import infer_struct_info, make_call
from tvmlite.dsl.ops.context import sinfo_of
from tvmlite.dsl.ops.registry import (
    ArgDef,
    AttrDef,
    OpDef,
    OpPatternKind,
    all_ops,
    lookup,
    op_names,
)


def dtype_conflict(call: relax.Call) -> str | None:
    """The error for a call whose operands have dtypes TVM's check refuses (a
    binary op on two dtypes, int32 slice bounds), None when there is none: TVM's
    parser keeps such a call when its result is annotated."""
    return binary.dtype_conflict(call) or index.bound_dtype_conflict(call)


__all__ = [
    "ArgDef",
    "AttrDef",
    "OpDef",
    "OpPatternKind",
    "all_ops",
    "dtype_conflict",
    "infer_struct_info",
    "lookup",
    "make_call",
    "op_names",
    "sinfo_of",
]
