"""Linear algebra: matmul (NumPy rules: 1-d operands, batch broadcasting),
outer and einsum."""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops.binary import broadcast_shapes
from tvmlite.dsl.ops.context import InferCtx, known_shape, ndim_of, tensor_sinfo
from tvmlite.dsl.ops.registry import ArgDef, AttrDef, define
from tvmlite.dsl.ops.registry import OpPatternKind as K


@define("relax.matmul", ("x1", "x2"), (AttrDef("out_dtype", None, "dtype?"),), K.kOutEWiseFusable)
def infer_matmul(ctx: InferCtx) -> relax.StructInfo:
    """NumPy's rule as TVM applies it: a 1-d operand gains an axis that the result
    drops, batch dims broadcast; when they cannot be decided only the rank is known
    (and the reduction lengths are not compared)."""
    a, b = ctx.tensor(0), ctx.tensor(1)
    out_dtype = ctx.attr("out_dtype")
    dtype = out_dtype if out_dtype is not None else ctx.arith_dtype(a.dtype, b.dtype)
    na, nb = ndim_of(a), ndim_of(b)
    if na < 0 or nb < 0:
        return tensor_sinfo(None, dtype, -1)
    if na == 0 or nb == 0:
        ctx.fail("operands must have rank at least 1")
    out_ndim = max(na, nb, 2) - (na == 1) - (nb == 1)
    sa_, sb = known_shape(a), known_shape(b)
    if sa_ is None or sb is None:
        return tensor_sinfo(None, dtype, out_ndim)
    lhs = (sa.const(1),) + sa_ if na == 1 else sa_
    rhs = sb + (sa.const(1),) if nb == 1 else sb
    batch = broadcast_shapes(ctx, [lhs[:-2], rhs[:-2]]) if len(lhs) > 2 or len(rhs) > 2 else ()
    if batch is None:
        return tensor_sinfo(None, dtype, out_ndim)
    if sa.differ(lhs[-1], rhs[-2]):
        ctx.fail(f"inner dimensions differ: {sa.show(lhs[-1])} vs {sa.show(rhs[-2])}")
    out = list(batch)
    if na != 1:
        out.append(lhs[-2])
    if nb != 1:
        out.append(rhs[-1])
    return tensor_sinfo(tuple(out), dtype)


@define("relax.outer", ("x1", "x2"), (), K.kOutEWiseFusable)
def infer_outer(ctx: InferCtx) -> relax.StructInfo:
    a, b = ctx.tensor(0), ctx.tensor(1)
    dtype = ctx.same_dtype(a.dtype, b.dtype)
    for name, t in (("x1", a), ("x2", b)):
        if ndim_of(t) not in (-1, 1):
            ctx.fail(f"{name} must be 1-d, got rank {ndim_of(t)}")
    sa_, sb = known_shape(a), known_shape(b)
    if sa_ is None or sb is None:
        return tensor_sinfo(None, dtype, 2)
    return tensor_sinfo((sa_[0], sb[0]), dtype)


def _einsum_terms(ctx: InferCtx, subscripts: str, count: int) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != count:
        ctx.fail(f"subscripts {subscripts!r} name {len(terms)} operands, got {count}")
    if not arrow:
        letters = "".join(terms).replace(".", "")
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        if any("..." in t for t in terms):
            rhs = "..." + rhs
    return terms, rhs


ELLIPSIS_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def expand_ellipsis(terms: list[str], ranks: list[int], out: str) -> tuple[list[str], str]:
    """Subscripts with each `...` written as letters of its own (`A`, `B`, ... from the
    right, so the dims it covers broadcast across operands as NumPy aligns them)."""
    width = max(
        (r - len(t.replace("...", "")) for t, r in zip(terms, ranks, strict=True) if "..." in t),
        default=0,
    )
    letters = ELLIPSIS_LETTERS[:width]
    expanded = []
    for term, rank in zip(terms, ranks, strict=True):
        if "..." in term:
            count = rank - len(term.replace("...", ""))
            term = term.replace("...", letters[width - count :] if count else "")
        expanded.append(term)
    return expanded, out.replace("...", letters)


@define(
    "relax.einsum",
    (ArgDef("operands", "tuple"),),
    (AttrDef("subscripts", kind="str"),),
    K.kOutEWiseFusable,
)
def infer_einsum(ctx: InferCtx) -> relax.StructInfo:
    tensors = ctx.tensors(0)
    dtype = tensors[0].dtype if tensors else "void"
    for t in tensors:
        dtype = ctx.same_dtype(dtype, t.dtype, "operands")
    terms, out_term = _einsum_terms(ctx, ctx.attr("subscripts"), len(tensors))
    if "..." in "".join(terms):
        ranks = [ndim_of(t) for t in tensors]
        if min(ranks, default=0) < 0:
            return tensor_sinfo(None, dtype, -1)
        terms, out_term = expand_ellipsis(terms, ranks, out_term)
    sizes: dict[str, tir.PrimExpr] = {}
    for i, (term, t) in enumerate(zip(terms, tensors, strict=True)):
        shape = known_shape(t)
        if shape is None:
            return tensor_sinfo(None, dtype, len(out_term))
        if len(term) != len(shape):
            ctx.fail(f"operand {i} has rank {len(shape)} but subscript {term!r}")
        for letter, dim in zip(term, shape, strict=True):
            seen = sizes.get(letter)
            if seen is None or sa.as_int(seen) == 1:
                sizes[letter] = dim
            elif sa.as_int(dim) != 1:
                ctx.check_dims(seen, dim, f"subscript {letter!r} has different sizes")
    missing = [c for c in out_term if c not in sizes]
    if missing:
        ctx.fail(f"output subscript {missing[0]!r} does not appear in the inputs")
    return tensor_sinfo(tuple(sizes[c] for c in out_term), dtype)
