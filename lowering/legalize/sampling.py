"""Sampling: multinomial_from_uniform, as TVM dispatches it on CPUs.

TVM's CPU path takes the cumulative sum of `prob` along the vocabulary, then
picks for each sample `i` the first index whose cumulative probability exceeds
`uniform_sample[i, 0]` in row `sample_indices[i, 0]` (the last index when none
does). Here the pick is a count, `#{j : cumsum[row, j] <= u}` clamped to the
last index, which is the same index on a non-decreasing cumulative sum and is
defined for every input. The rows are data-dependent indices, so they go
through an index check first (`extern.checked_indices`).
"""

from __future__ import annotations

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import checked_indices
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize


@register_legalize("relax.multinomial_from_uniform")
def legalize_multinomial_from_uniform(ctx: LegalizeCtx) -> relax.Expr:
    prob, usample, rows = ctx.args
    psinfo = ctx.arg_sinfo[0]
    if not isinstance(psinfo, relax.TensorStructInfo) or not isinstance(psinfo.shape, tuple):
        raise LegalizeUnsupported("multinomial_from_uniform of probabilities of unknown shape")
    batch = E.value_of(psinfo.shape[0])
    cumsum = ctx.emit(ctx.make_op("relax.cumsum", prob, axis=1, dtype=psinfo.dtype))
    rows = checked_indices(ctx, "multinomial_from_uniform", rows, [(0, batch)])  # type: ignore[arg-type, list-item]
    dtype = ctx.out_dtype()

    def build(kb: te.KernelBuilder, cdf: te.Tensor, u: te.Tensor, idx: te.Tensor) -> te.Tensor:
        vocab = cdf.shape[1]
        j = te.reduce_axis(vocab, "j")

        def count(i: tir.Var, _: tir.Var) -> te.Reduce:
            below = E.binary("le", cdf[idx[i, 0], j.var], E.cast(u[i, 0], cdf.dtype))
            return te.sum_(E.select(below, E.const(1, dtype), E.const(0, dtype)), j)

        shape = (u.shape[0], E.idx(1))
        counted = kb.compute(shape, count, "T_count")
        last = E.cast(E.sub(vocab, 1), dtype)
        return kb.compute(shape, lambda i, k: E.minimum(counted[i, k], last), "T_sample_index")

    return ctx.call_te("get_sample_index", build, args=[cumsum, usample, rows])
