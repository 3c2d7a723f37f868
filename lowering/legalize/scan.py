"""Scans: cumsum and cumprod, as serial scans per line.

TVM's VM runs these through builtins; here each line along the axis (or the
whole tensor flattened, for `axis=None`) is one serial loop carrying the
running value in a local scalar of the output dtype, so each input is cast
before it is combined, as TOPI's scan does. `exclusive` stores the running
value before combining, which starts at the identity (0 or 1).
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import (
    at0,
    index_var,
    local_scalar,
    loop,
    seq,
    set0,
)
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize
from tvmlite.lowering.legalize.sort import NOTHING, Lines

# Scan kind -> (combining function, identity).
SCANS: dict[str, tuple[str, int]] = {"cumsum": ("add", 0), "cumprod": ("mul", 1)}


def scan_lines(
    data: tir.Buffer, out: tir.Buffer, lines: Lines, kind: str, exclusive: bool
) -> tir.Stmt:
    """A parallel loop over the lines, each a serial scan into `out`."""
    if lines.count == 0:
        return NOTHING
    combine, identity = SCANS[kind]
    line, j = index_var("line"), index_var("j")
    acc = local_scalar("acc", out.dtype)
    pos = lines.index(line, j)
    dst = pos if lines.axis is not None else (j,)  # a flattened scan gives a 1-d result
    nxt = E.binary(combine, at0(acc), E.cast(tir.BufferLoad(data, pos, data.dtype), out.dtype))
    if exclusive:
        step = seq(tir.BufferStore(out, at0(acc), dst), set0(acc, nxt))
    else:
        step = seq(set0(acc, nxt), tir.BufferStore(out, at0(acc), dst))
    body = seq(
        tir.AllocBuffer(acc, "alloc_local"),
        set0(acc, E.const(identity, out.dtype)),
        loop(j, lines.length, step),
    )
    return loop(line, lines.count, body, tir.PARALLEL)


def _scan_rule(kind: str) -> Callable[[LegalizeCtx], relax.Expr]:
    def rule(ctx: LegalizeCtx) -> relax.Expr:
        axis = ctx.attrs.get("axis")
        exclusive = bool(ctx.attrs.get("exclusive"))
        dtype = ctx.out_dtype()
        if dt.is_bool(dtype):
            raise LegalizeUnsupported(f"{kind} accumulating in bool")

        def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
            lines = Lines.of(x, axis, kind, symbolic=True)

            def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
                return scan_lines(ins[0], outs[0], lines, kind, exclusive)

            outs = [(f"{kind}_out", ctx.out_shape(), dtype, False)]
            return kb.extern(kind, outs, [x], body)[0]

        return ctx.call_te(kind, build)

    return rule


for _kind in SCANS:
    register_legalize(f"relax.{_kind}")(_scan_rule(_kind))
