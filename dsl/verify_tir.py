"""Rules a parsed (or transformed) PrimFunc must keep, checked on the IR itself so
that passes can run it too: variables and buffers used only where defined, region
ranks, loop extents, block domains and the reduction-axis rule of blocks with
`T.init()`. Errors are located at the nearest node that has a span.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from tvmlite.diagnostics import Span, VerifyError
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import uses
from tvmlite.dsl.parse_tir_ops import const_int


@functools.lru_cache(maxsize=128)
def field_names(cls: type) -> tuple[str, ...]:
    """The dataclass field names of a node class, cached per class (the verifier's
    generic walks ask for every node; `dataclasses.fields` is slow)."""
    return tuple(f.name for f in dataclasses.fields(cls))


# Expression classes without sub-expressions (their fields are dtype, value, span).
_IMMEDIATES = (tir.IntImm, tir.FloatImm, tir.StringImm)


def verify_prim_func(func: tir.PrimFunc, ctx: Any = None) -> None:
    """Raise VerifyError at the first broken rule; `ctx` gives the file name."""
    source = getattr(ctx, "source", None)
    _Verifier(getattr(source, "filename", None), func.span).run(func)


class _Verifier:
    def __init__(self, filename: str | None, span: Span | None) -> None:
        self.filename = filename
        self.func_span = span
        self.vars: set[tir.Var] = set()
        self.buffers: set[tir.Buffer] = set()
        self.loops: dict[tir.Var, tir.Range] = {}

    def fail(self, message: str, span: Span | None) -> VerifyError:
        return VerifyError(message, span or self.func_span, self.filename)

    def run(self, func: tir.PrimFunc) -> None:
        self.vars.update(func.params)
        for _, buffer in func.buffer_map:
            for dim in (*buffer.shape, *buffer.strides, buffer.elem_offset):
                if isinstance(dim, tir.Var):
                    self.vars.add(dim)
        for _, buffer in func.buffer_map:
            self.define_buffer(buffer)
        self.stmt(func.body, func.span)

    # ------------------------------------------------------------ definitions

    def define_buffer(self, buffer: tir.Buffer) -> None:
        for dim in (*buffer.shape, *buffer.strides):
            self.expr(dim, buffer.span)
        if buffer.elem_offset is not None and not isinstance(buffer.elem_offset, tir.Var):
            self.expr(buffer.elem_offset, buffer.span)
        elif buffer.elem_offset is not None:
            self.vars.add(buffer.elem_offset)
        self.buffers.add(buffer)
        self.vars.add(buffer.data)

    def scoped(self, check: Callable[[], None]) -> None:
        """Run `check` with definitions that end when it returns."""
        saved_vars, saved_buffers = set(self.vars), set(self.buffers)
        try:
            check()
        finally:
            self.vars, self.buffers = saved_vars, saved_buffers

    def use_buffer(self, buffer: tir.Buffer, span: Span | None) -> None:
        if buffer not in self.buffers and buffer.data not in self.vars:
            raise self.fail(f"buffer '{buffer.name}' is used where it is not defined", span)

    # ------------------------------------------------------------ expressions

    def expr(self, e: tir.PrimExpr, span: Span | None) -> None:
        if isinstance(e, tir.Var):  # a var's own span is its definition, not this use
            if e not in self.vars:
                raise self.fail(f"use of undefined variable '{e.name}'", span)
            return
        if type(e) in _IMMEDIATES:
            return  # no sub-expressions: the walk below would find nothing
        span = getattr(e, "span", None) or span
        if isinstance(e, tir.Let):
            self.expr(e.value, span)
            saved = set(self.vars)
            self.vars.add(e.var)
            self.expr(e.body, span)
            self.vars = saved
            return
        if isinstance(e, tir.BufferLoad):
            self.use_buffer(e.buffer, span)
        for name in field_names(type(e)):
            value = getattr(e, name)
            if isinstance(value, tir.PrimExpr):
                self.expr(value, span)
            elif isinstance(value, tuple):
                for item in value:
                    if isinstance(item, tir.PrimExpr):
                        self.expr(item, span)

    # ------------------------------------------------------------ statements

    def stmt(self, s: tir.Stmt | None, span: Span | None) -> None:
        if s is None:
            return
        span = getattr(s, "span", None) or span
        check = _STMTS.get(type(s))
        if check is not None:
            check(self, s, span)
            return
        for name in field_names(type(s)):
            value = getattr(s, name)
            if isinstance(value, tir.PrimExpr):
                self.expr(value, span)
            elif isinstance(value, tir.Stmt):
                self.scoped_stmt(value, span)

    def scoped_stmt(self, s: tir.Stmt | None, span: Span | None) -> None:
        self.scoped(lambda: self.stmt(s, span))

    def _seq(self, s: tir.SeqStmt, span: Span | None) -> None:
        for item in s.seq:  # Bind and AllocBuffer define names for the rest
            self.stmt(item, span)

    def _store(self, s: tir.BufferStore, span: Span | None) -> None:
        self.use_buffer(s.buffer, span)
        self.expr(s.value, span)
        for index in s.indices:
            self.expr(index, span)

    def _bind(self, s: tir.Bind, span: Span | None) -> None:
        self.expr(s.value, span)
        self.vars.add(s.var)

    def _let(self, s: tir.LetStmt, span: Span | None) -> None:
        self.expr(s.value, span)

        def body() -> None:
            self.vars.add(s.var)
            self.stmt(s.body, span)

        self.scoped(body)

    def _alloc(self, s: tir.AllocBuffer, span: Span | None) -> None:
        self.define_buffer(s.buffer)

    def _for(self, s: tir.For, span: Span | None) -> None:
        self.expr(s.min, span)
        self.expr(s.extent, span)
        extent = const_int(s.extent)
        if extent is not None and extent < 0:
            raise self.fail(f"loop extent of '{s.loop_var.name}' is negative ({extent})", span)
        if s.step is not None:
            self.expr(s.step, span)

        def body() -> None:
            self.vars.add(s.loop_var)
            self.loops[s.loop_var] = tir.Range(s.min, s.extent)
            self.stmt(s.body, span)

        self.scoped(body)

    def _realize(self, s: tir.BlockRealize, span: Span | None) -> None:
        for value in s.iter_values:
            self.expr(value, span)
        self.expr(s.predicate, span)
        block = s.block
        if len(block.iter_vars) != len(s.iter_values):
            raise self.fail(
                f"block '{block.name}' has a different number of axes and bindings", span
            )
        for iv, value in zip(block.iter_vars, s.iter_values, strict=True):
            self.expr(iv.dom.min, iv.span or span)
            self.expr(iv.dom.extent, iv.span or span)
            if const_int(s.predicate) == 1:  # under T.where, out-of-domain values are masked
                self.check_domain(block, iv, value, iv.span or span)
        self.scoped(lambda: self._block(block, block.span or span))

    def check_domain(
        self, block: tir.Block, iv: tir.IterVar, value: tir.PrimExpr, span: Span | None
    ) -> None:
        lo, extent = const_int(iv.dom.min), const_int(iv.dom.extent)
        if lo is None or extent is None:
            return
        if isinstance(value, tir.Var) and value in self.loops:
            r = self.loops[value]
            vlo, vext = const_int(r.min), const_int(r.extent)
            if vlo is None or vext is None or vext <= 0:
                return
            vhi = vlo + vext - 1
        else:
            vlo = vhi = const_int(value)
            if vlo is None or vhi is None:
                return
        if vlo < lo or vhi >= lo + extent:
            raise self.fail(
                f"binding of block axis '{iv.var.name}' in block '{block.name}' ranges over "
                f"[{vlo}, {vhi}], outside its domain [{lo}, {lo + extent})",
                span,
            )

    def _block(self, block: tir.Block, span: Span | None) -> None:
        self.vars.update(iv.var for iv in block.iter_vars)
        for buffer in block.alloc_buffers:
            self.define_buffer(buffer)
        for match in block.match_buffers:
            self.region(match.source, match.span or span)
            self.define_buffer(match.buffer)
        for region in (*block.reads, *block.writes):
            self.region(region, region.span or span)
        self.reduction_rule(block, span)
        if block.init is not None:
            self.scoped_stmt(block.init, span)
        self.stmt(block.body, span)

    def region(self, region: tir.BufferRegion, span: Span | None) -> None:
        self.use_buffer(region.buffer, span)
        ndim, given = len(region.buffer.shape), len(region.region)
        if ndim != given:
            raise self.fail(
                f"region of buffer '{region.buffer.name}' has {given} "
                f"ind{'ex' if given == 1 else 'ices'} but the buffer has {ndim} "
                f"dimension{'' if ndim == 1 else 's'}",
                span,
            )
        for r in region.region:
            self.expr(r.min, span)
            self.expr(r.extent, span)

    def reduction_rule(self, block: tir.Block, span: Span | None) -> None:
        """With T.init(): an axis only read (never in a written index) is a reduction,
        and the block must have one."""
        if block.init is None:
            return
        if not any(iv.kind == tir.REDUCE for iv in block.iter_vars):
            raise self.fail(f"block '{block.name}' has T.init() but no reduce axis", span)
        for iv in block.iter_vars:
            if iv.kind != tir.SPATIAL:
                continue
            var = {iv.var: None}
            read = any(_region_uses(r, var) for r in block.reads)
            written = any(_region_uses(r, var) for r in block.writes)
            if read and not written:
                raise self.fail(
                    f"block axis '{iv.var.name}' of '{block.name}' is only read, never written: "
                    "it must be a reduce axis (T.axis.reduce)",
                    iv.span or span,
                )


def _region_uses(region: tir.BufferRegion, variables: dict[tir.Var, object]) -> bool:
    return any(uses(r.min, variables) or uses(r.extent, variables) for r in region.region)


_STMTS: dict[type, Callable[[_Verifier, Any, Span | None], None]] = {
    tir.SeqStmt: _Verifier._seq,
    tir.BufferStore: _Verifier._store,
    tir.Bind: _Verifier._bind,
    tir.LetStmt: _Verifier._let,
    tir.AllocBuffer: _Verifier._alloc,
    tir.For: _Verifier._for,
    tir.BlockRealize: _Verifier._realize,
}
