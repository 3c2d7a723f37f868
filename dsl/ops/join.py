"""Operators that join or split tensors along an axis: concat, stack, split, meshgrid.

Split sizes follow TVM's formulas so symbolic results print like TVM's
(`(n + 1) // 2`, `T.min(2, n)`, `T.max(n - 5, 0)`).
"""

from __future__ import annotations

import itertools

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.context import InferCtx, known_shape, like, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, define
from tvmlite.dsl.ops.registry import OpPatternKind as K


def _common(ctx: InferCtx, tensors: list[relax.TensorStructInfo]) -> tuple[str, int]:
    """Shared dtype and rank of joined tensors (-1 when unknown)."""
    if not tensors:
        ctx.fail("needs at least one tensor")
    dtype, ndim = tensors[0].dtype, -1
    for t in tensors:
        dtype = ctx.same_dtype(dtype, t.dtype, "tensors")
        n = ndim_of(t)
        if n >= 0 and ndim >= 0 and n != ndim:
            ctx.fail(f"tensors must have the same rank, got {ndim} and {n}")
        ndim = n if n >= 0 else ndim
    return dtype, ndim


@define("relax.concat", (ArgDef("tensors", "tuple"),), (AttrDef("axis", 0, "int?"),), K.kInjective)
def infer_concat(ctx: InferCtx) -> relax.StructInfo:
    tensors = ctx.tensors(0)
    dtype, ndim = _common(ctx, tensors)
    shapes = [known_shape(t) for t in tensors]
    axis = ctx.attr("axis")
    if axis is None:  # TVM flattens every input first
        if any(s is None for s in shapes):
            return tensor_sinfo(None, dtype, 1)
        total: tir.PrimExpr = sa.const(0)
        for s in shapes:
            total = sa.add(total, sa.product(s))  # type: ignore[arg-type]
        return tensor_sinfo((total,), dtype)
    if ndim < 0:
        return tensor_sinfo(None, dtype, -1)
    axis = ctx.axis(axis, ndim)
    if any(s is None for s in shapes):
        return tensor_sinfo(None, dtype, ndim)
    first = shapes[0]
    out = list(first)  # type: ignore[arg-type]
    decided = True
    for s in shapes[1:]:
        for i in range(ndim):
            if i == axis:
                out[i] = sa.add(out[i], s[i])  # type: ignore[index]
            elif not sa.equal(out[i], s[i]):  # type: ignore[index]
                ctx.check_dims(out[i], s[i], f"tensors differ on dim {i}")  # type: ignore[index]
                decided = False
    if not decided:
        return tensor_sinfo(None, dtype, ndim)
    return tensor_sinfo(tuple(out), dtype)


@define("relax.stack", (ArgDef("tensors", "tuple"),), (AttrDef("axis", 0, "int?"),), K.kInjective)
def infer_stack(ctx: InferCtx) -> relax.StructInfo:
    tensors = ctx.tensors(0)
    dtype, ndim = _common(ctx, tensors)
    if ndim < 0:
        return tensor_sinfo(None, dtype, -1)
    axis = ctx.axis(ctx.attr("axis") or 0, ndim + 1)
    shapes = [known_shape(t) for t in tensors]
    if any(s is None for s in shapes):
        return tensor_sinfo(None, dtype, ndim + 1)
    for s in shapes[1:]:
        for i in range(ndim):
            ctx.check_dims(shapes[0][i], s[i], f"tensors differ on dim {i}")  # type: ignore[index]
    out = list(shapes[0])  # type: ignore[arg-type]
    out.insert(axis, sa.const(len(tensors)))
    return tensor_sinfo(tuple(out), dtype)


def _split_sizes(dim: tir.PrimExpr, spec: int | tuple[int, ...]) -> list[tir.PrimExpr]:
    if isinstance(spec, int):
        chunk = sa.ceildiv(dim, sa.const(spec))
        return [chunk] * (spec - 1) + [sa.sub(dim, sa.mul(chunk, sa.const(spec - 1)))]
    if not spec:
        return [dim]

    def at(index: int) -> tir.PrimExpr:  # TVM clamps a split point into [0, dim]
        return sa.const(0) if index < 0 else sa.minimum(sa.const(index), dim)

    sizes = [at(spec[0])]
    for prev, cur in itertools.pairwise(spec):
        sizes.append(sa.maximum(sa.sub(at(cur), at(prev)), sa.const(0)))
    last = sa.const(max(spec[-1], 0))
    sizes.append(sa.maximum(sa.sub(dim, last), sa.const(0)))
    return sizes


@define(
    "relax.split",
    ("x",),
    (AttrDef("indices_or_sections", kind="int|ints"), AttrDef("axis", 0, "int")),
    K.kInjective,
)
def infer_split(ctx: InferCtx) -> relax.StructInfo:
    data = ctx.tensor(0)
    spec = ctx.attr("indices_or_sections")
    if isinstance(spec, int):
        if spec <= 0:
            ctx.fail(f"indices_or_sections must be positive, got {spec}")
        if spec == 1:
            return like(data)  # TVM returns the tensor itself, not a 1-tuple
    count = spec if isinstance(spec, int) else len(spec) + 1
    ndim = ndim_of(data)
    if ndim < 0:
        return relax.TupleStructInfo((tensor_sinfo(None, data.dtype, -1),) * count)
    axis = ctx.axis(ctx.attr("axis"), ndim)
    shape = known_shape(data)
    if shape is None:
        return relax.TupleStructInfo((tensor_sinfo(None, data.dtype, ndim),) * count)
    fields = []
    for size in _split_sizes(shape[axis], spec):
        dims = list(shape)
        dims[axis] = size
        fields.append(tensor_sinfo(tuple(dims), data.dtype))
    return relax.TupleStructInfo(tuple(fields))


@define(
    "relax.meshgrid",
    (ArgDef("tensors", "tuple"),),
    (AttrDef("indexing", "ij", "str?"),),
    K.kInjective,
)
def infer_meshgrid(ctx: InferCtx) -> relax.StructInfo:
    tensors = ctx.tensors(0)
    dtype = tensors[0].dtype if tensors else "void"
    for t in tensors:
        dtype = ctx.same_dtype(dtype, t.dtype, "tensors")
    lengths: list[tir.PrimExpr] = []
    for i, t in enumerate(tensors):
        if ndim_of(t) > 1:
            ctx.fail(f"tensors[{i}] must be 0-d or 1-d, got rank {ndim_of(t)}")
        shape = known_shape(t)
        if shape is None:
            out = tensor_sinfo(None, dtype, len(tensors))
            return relax.TupleStructInfo((out,) * len(tensors))
        lengths.append(shape[0] if shape else sa.const(1))
    # Cartesian ("xy") indexing swaps the first two output dims, as NumPy and TVM do.
    if ctx.attr("indexing") == "xy" and len(lengths) >= 2:
        lengths[0], lengths[1] = lengths[1], lengths[0]
    out = tensor_sinfo(tuple(lengths), dtype)
    return relax.TupleStructInfo((out,) * len(tensors))
