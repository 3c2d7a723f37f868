"""Broadcasting helpers: how an input of a broadcast op is indexed by the output's
axes (TOPI's rule: align from the right, dims of extent 1 read index 0)."""

from __future__ import annotations

from collections.abc import Sequence

from tvmlite.dsl import tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E

Operand = te.Tensor | tir.PrimExpr


def _is_one(d: tir.PrimExpr) -> bool:
    return isinstance(d, tir.IntImm) and d.value == 1


def bcast_load(
    t: Operand, axes: Sequence[tir.Var], out_shape: Sequence[tir.PrimExpr]
) -> tir.PrimExpr:
    """`t` read at the output position `axes` (an immediate is itself)."""
    if not isinstance(t, te.Tensor):
        return t
    offset = len(axes) - t.ndim
    index = []
    for d, dim in enumerate(t.shape):
        out_dim = out_shape[offset + d]
        index.append(E.idx(0) if _is_one(dim) and not _is_one(out_dim) else axes[offset + d])
    return t[tuple(index)]


def broadcast_shape(shapes: Sequence[Sequence[tir.PrimExpr]]) -> tuple[tir.PrimExpr, ...]:
    """The broadcast of `shapes` (symbolic dims must agree or be 1)."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[tir.PrimExpr] = []
    for i in range(ndim):
        dim: tir.PrimExpr = E.idx(1)
        for s in shapes:
            j = i - (ndim - len(s))
            if j >= 0 and not _is_one(s[j]):
                dim = s[j]
        out.append(dim)
    return tuple(out)
