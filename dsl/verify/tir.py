"""Rules a parsed (or transformed) PrimFunc must keep, checked on the IR itself so
that passes can run it too: variables used only inside the scope that defines them
(a var no statement defines is free, as TVM's parser allows with its check off:
`n = T.int32()` declares one), buffers used only inside the scope that declares
them (or free), region ranks, loop extents and block domains.

`well_formed=True` adds what TVM's well-formedness check asks (its parser's
default, `tvmlite.parse`'s too): no free var (the signature's buffers define
every var of their shapes, a `T.match_buffer` the bare vars of its own) and no
free buffer, and no loop var read inside a block with axes that the loop is
outside of (a block reads loops through its axis bindings); in a tirx function,
scope ids that agree (`scope_ids.py`).

Like TVM's parser, it accepts `T.init()` in a block without a reduce axis (the
init then runs at every instance) and spatial axes that are only read. Errors
are located at the nearest node that has a span.

The checker is a `StmtExprVisitor`: expressions and the statements without a
rule of their own are walked by it. Scopes: a statement's definitions end with
the statement that contains it, except that the items of a sequence (a `Bind`,
an `AllocBuffer`, a `ScopeIdDef`) define names for the items after them.
"""

from __future__ import annotations

from tvmlite.diagnostics import Span, VerifyError
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import free_vars
from tvmlite.dsl.arith import const_int
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.dsl.verify.scope_ids import check_scope_ids


def verify_prim_func(func: tir.PrimFunc, ctx: object = None, well_formed: bool = False) -> None:
    """Raise VerifyError at the first broken rule; `ctx` gives the file name."""
    filename = getattr(getattr(ctx, "source", None), "filename", None)
    _Verifier(filename, func.span, well_formed).visit_prim_func(func)
    if well_formed and not func.s_tir:  # TVM checks tirx functions' scope ids too
        check_scope_ids(func, filename)


class _Verifier(StmtExprVisitor):
    def __init__(self, filename: str | None, span: Span | None, well_formed: bool) -> None:
        self.filename = filename
        self.well_formed = well_formed
        self.span = span  # of the innermost node being checked that has one
        self.blocks: list[tir.Block] = []  # enclosing blocks, innermost last
        self.loop_depth: dict[tir.Var, int] = {}  # loop var -> len(blocks) where it loops
        self.vars: set[tir.Var] = set()
        self.ended: set[tir.Var] = set()  # defined by a scope that has closed
        self.buffers: set[tir.Buffer] = set()
        self.loops: dict[tir.Var, tir.Range] = {}

    def fail(self, message: str, span: Span | None = None) -> VerifyError:
        return VerifyError(message, span or self.span, self.filename)

    def visit_prim_func(self, func: tir.PrimFunc) -> None:
        self.vars.update(func.params)
        for _, buffer in func.buffer_map:  # the signature defines every var of its shapes
            for dim in (*buffer.shape, *buffer.strides, buffer.elem_offset):
                if dim is not None:
                    self.vars.update(free_vars(dim))
        for _, buffer in func.buffer_map:
            self.visit_buffer_def(buffer)
        self.visit_stmt(func.body)

    # ------------------------------------------------------------ scopes and spans

    def visit_stmt(self, s: tir.Stmt) -> None:
        """A statement in a scope of its own (see the module docstring)."""
        saved_vars, saved_buffers = set(self.vars), set(self.buffers)
        try:
            self._visit_here(s)
        finally:
            self.ended |= self.vars - saved_vars
            self.vars, self.buffers = saved_vars, saved_buffers

    def _visit_here(self, s: tir.Stmt) -> None:
        outer = self.span
        self.span = s.span or outer
        try:
            super().visit_stmt(s)
        finally:
            self.span = outer

    def visit_SeqStmt(self, s: tir.SeqStmt) -> None:
        for item in s.seq:  # Bind, AllocBuffer, ScopeIdDef define names for the rest
            if isinstance(item, tir.Bind | tir.AllocBuffer | tir.ScopeIdDef):
                self._visit_here(item)
            else:
                self.visit_stmt(item)

    def visit_expr(self, e: tir.PrimExpr) -> None:
        if type(e) is tir.Var:  # a var's own span is its definition, not this use
            self.visit_Var(e)
            return
        span = getattr(e, "span", None)
        if span is None:
            super().visit_expr(e)
            return
        outer, self.span = self.span, span
        try:
            super().visit_expr(e)
        finally:
            self.span = outer

    # ------------------------------------------------------------ definitions and uses

    def visit_var_def(self, var: tir.Var) -> None:
        self.vars.add(var)

    def visit_Var(self, e: tir.Var) -> None:
        if e in self.vars:
            if self.well_formed and self.loop_depth.get(e, len(self.blocks)) < len(self.blocks):
                block = self.blocks[-1]
                if block.iter_vars:
                    raise self.fail(
                        f"loop variable '{e.name}' is read inside block '{block.name}', which "
                        "the loop is outside of: a block with axes reads a loop through its "
                        "axis bindings (T.axis.remap / T.axis.spatial)"
                    )
            return
        if e in self.ended:
            raise self.fail(f"variable '{e.name}' is used outside its scope")
        if self.well_formed:
            raise self.fail(
                f"variable '{e.name}' is used but nothing defines it (a loop, a let, a "
                "parameter or a buffer's shape)"
            )

    def visit_buffer_def(self, buffer: tir.Buffer) -> None:
        for dim in (*buffer.shape, *buffer.strides):
            self.visit_expr(dim)
        if isinstance(buffer.elem_offset, tir.Var):
            self.vars.add(buffer.elem_offset)
        elif buffer.elem_offset is not None:
            self.visit_expr(buffer.elem_offset)
        self.buffers.add(buffer)
        self.vars.add(buffer.data)

    def visit_buffer(self, buffer: tir.Buffer) -> None:
        """A buffer no statement declares is free, as TVM allows (`B = T.Buffer(...)`
        in a body names one); one whose declaration's scope has closed is an error."""
        if buffer in self.buffers or buffer.data in self.vars:
            return
        if buffer.data in self.ended:
            raise self.fail(f"buffer '{buffer.name}' is used outside its scope")
        if self.well_formed:
            raise self.fail(
                f"buffer '{buffer.name}' is used but nothing declares it (T.alloc_buffer, "
                "T.decl_buffer, a parameter or T.match_buffer)"
            )

    def visit_Let(self, e: tir.Let) -> None:
        saved = set(self.vars)
        try:
            super().visit_Let(e)
        finally:
            self.ended |= self.vars - saved
            self.vars = saved

    # ------------------------------------------------------------ statements

    def visit_For(self, s: tir.For) -> None:
        self.loops[s.loop_var] = tir.Range(s.min, s.extent)
        self.loop_depth[s.loop_var] = len(self.blocks)
        super().visit_For(s)

    def visit_BlockRealize(self, s: tir.BlockRealize) -> None:
        for value in s.iter_values:
            self.visit_expr(value)
        self.visit_expr(s.predicate)
        block = s.block
        if len(block.iter_vars) != len(s.iter_values):
            raise self.fail(f"block '{block.name}' has a different number of axes and bindings")
        for iv, value in zip(block.iter_vars, s.iter_values, strict=True):
            self.span, outer = iv.span or self.span, self.span
            self.visit_range(iv.dom)
            if const_int(s.predicate) == 1:  # under T.where, out-of-domain values are masked
                self.check_domain(block, iv, value, self.span)
            self.span = outer
        self.visit_stmt(block)

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

    def visit_Block(self, block: tir.Block) -> None:
        self.blocks.append(block)
        try:
            self._block(block)
        finally:
            self.blocks.pop()

    def _block(self, block: tir.Block) -> None:
        self.vars.update(iv.var for iv in block.iter_vars)
        for buffer in block.alloc_buffers:
            self.visit_buffer_def(buffer)
        for match in block.match_buffers:
            self.region(match.source, match.span)
            for dim in (*match.buffer.shape, *match.buffer.strides):
                if self.well_formed and isinstance(dim, tir.Var):  # defined by the match
                    self.vars.add(dim)
            self.visit_buffer_def(match.buffer)
        for region in (*block.reads, *block.writes):
            self.region(region, region.span)
        self.visit_annotations(block.annotations)
        if block.init is not None:
            self.visit_stmt(block.init)
        self._visit_here(block.body)

    def region(self, region: tir.BufferRegion, span: Span | None) -> None:
        outer, self.span = self.span, span or self.span
        try:
            self.visit_buffer(region.buffer)
            ndim, given = len(region.buffer.shape), len(region.region)
            if ndim != given:
                raise self.fail(
                    f"region of buffer '{region.buffer.name}' has {given} "
                    f"ind{'ex' if given == 1 else 'ices'} but the buffer has {ndim} "
                    f"dimension{'' if ndim == 1 else 's'}"
                )
            for r in region.region:
                self.visit_range(r)
        finally:
            self.span = outer
