"""TOPI's `pad` and `dilate` stages, shared by nn.pad, convolutions and pools.

Both are written exactly as TOPI writes them (a condition per padded axis,
`T.if_then_else` over the load), because every convolution and pool kernel
that TVM prints starts with one of these stages and structural comparison
sees their every node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tvmlite.dsl import tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E


def _is_zero(v: E.Expr) -> bool:
    return E.value_of(E.idx(v)) == 0


def pad_compute(
    kb: te.KernelBuilder,
    x: te.Tensor,
    before: Sequence[E.Expr],
    after: Sequence[E.Expr],
    value: tir.PrimExpr,
    name: str,
) -> te.Tensor:
    """`topi.nn.pad`: a copy when nothing is padded, else a guarded load."""
    shape = [E.add(E.add(s, b), a) for s, b, a in zip(x.shape, before, after, strict=True)]

    def body(*i: tir.Var) -> tir.PrimExpr:
        return padded_load(x, i, before, after, lambda: value)

    return kb.compute(shape, body, name, prefix="i")


def padded_load(
    x: te.Tensor,
    i: Sequence[tir.Var],
    before: Sequence[E.Expr],
    after: Sequence[E.Expr],
    fill: Callable[[], tir.PrimExpr],
) -> tir.PrimExpr:
    """The element at `i` of `x` padded by `before`/`after` per axis: a plain load
    when nothing is padded, else `T.if_then_else` over one condition per padded axis
    with `fill()` (made only then) outside the data."""
    conds: list[tir.PrimExpr] = []
    index: list[tir.PrimExpr] = []
    for v, b, a, n in zip(i, before, after, x.shape, strict=True):
        if _is_zero(b) and _is_zero(a):
            index.append(v)
            continue
        index.append(E.sub(v, b))
        conds += [E.binary("le", E.idx(b), v), E.binary("lt", v, E.add(n, b))]
    if not conds:
        return x.load(index)
    cond = conds[0]
    for c in conds[1:]:
        cond = E.logical_and(cond, c)
    return E.if_then_else(cond, x.load(index), fill())


def dilate_compute(
    kb: te.KernelBuilder, x: te.Tensor, strides: Sequence[int], name: str
) -> te.Tensor:
    """`topi.nn.dilate`: zeros between the elements along strided axes."""
    shape = [E.add(E.mul(E.sub(s, 1), k), 1) for s, k in zip(x.shape, strides, strict=True)]

    def body(*i: tir.Var) -> tir.PrimExpr:
        conds: list[tir.PrimExpr] = []
        index: list[tir.PrimExpr] = []
        for v, k in zip(i, strides, strict=True):
            if k == 1:
                index.append(v)
                continue
            index.append(E.floordiv(v, k))
            conds.append(E.binary("eq", E.floormod(v, k), E.idx(0)))
        if not conds:
            return x.load(index)
        cond = conds[0]
        for c in conds[1:]:
            cond = E.logical_and(cond, c)
        return E.if_then_else(cond, x.load(index), E.const(0, x.dtype))

    return kb.compute(shape, body, name, prefix="i")


def spatial_axes(layout: str) -> list[int]:
    """Positions of the spatial letters (D, H, W) of a layout such as NCHW."""
    return [i for i, c in enumerate(layout) if c in "DHW"]
