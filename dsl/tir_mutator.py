"""The TIR mutator every TIR transformation builds on.

`StmtExprMutator` walks the same fields as `StmtExprVisitor` (see
`tir_functor.py`) and rebuilds a node only when a child changed, so "nothing
changed" is an `is` check and untouched subtrees are shared between input and
output.

Two tables make renaming consistent without a pass having to chase every place
a name appears:

- `var_remap`: a var found here is replaced at every use. A `visit_var_def`
  that returns a new var records it here, so the uses follow the definition.
- `buffer_remap`: a buffer found here is replaced wherever it appears (loads,
  stores, read/write regions, match_buffer sources and targets, alloc buffers,
  attribute values, `buffer_map`). A buffer met for the first time is rebuilt
  from its mutated data var, shape, strides and elem_offset and recorded, so
  substituting a shape var gives one new buffer shared by all its uses.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.dsl.tir_functor import TIRFunctor


def replace(obj: Any, /, **changes: Any) -> Any:
    """`dataclasses.replace` that returns `obj` itself when no field changed."""
    for key, value in changes.items():
        if getattr(obj, key) is not value:
            return dataclasses.replace(obj, **changes)
    return obj


def changed(new: tuple[Any, ...], old: tuple[Any, ...]) -> bool:
    """Whether any item of `new` is not the item of `old` at its place."""
    return any(a is not b for a, b in zip(new, old, strict=True))


class StmtExprMutator(TIRFunctor):
    """Identity transform over TIR; override `visit_<ClassName>` or the hooks."""

    def __init__(self) -> None:
        self.var_remap: dict[tir.Var, tir.PrimExpr] = {}
        self.buffer_remap: dict[tir.Buffer, tir.Buffer] = {}

    def visit_prim_func(self, func: tir.PrimFunc) -> tir.PrimFunc:
        params = tuple(self._define(p) for p in func.params)
        buffer_map = self._buffer_map(func.buffer_map)
        return replace(
            func,
            params=params if changed(params, func.params) else func.params,
            buffer_map=buffer_map,
            body=self.visit_stmt(func.body),
        )

    def _buffer_map(
        self, pairs: tuple[tuple[tir.Var, tir.Buffer], ...]
    ) -> tuple[tuple[tir.Var, tir.Buffer], ...]:
        # The handle vars are the parameters, defined already: follow their renaming.
        new = tuple((self.var_remap.get(v, v), self.visit_buffer_def(b)) for v, b in pairs)
        if any(a is not c or b is not d for (a, b), (c, d) in zip(new, pairs, strict=True)):
            return new
        return pairs

    # ------------------------------------------------------------ hooks

    def visit_exprs(self, items: tuple[tir.PrimExpr, ...]) -> tuple[tir.PrimExpr, ...]:
        """The mutated items; `items` itself when none changed."""
        new: list[tir.PrimExpr] | None = None
        for i, item in enumerate(items):
            out = self.visit_expr(item)
            if new is None and out is not item:
                new = list(items[:i])
            if new is not None:
                new.append(out)
        return items if new is None else tuple(new)

    def visit_var_def(self, var: tir.Var) -> tir.Var:
        """A variable being defined; return a new var to rename it (its uses follow)."""
        return var

    def _define(self, var: tir.Var) -> tir.Var:
        new = self.visit_var_def(var)
        if new is not var:
            self.var_remap[var] = new
        return new

    def visit_buffer(self, buffer: tir.Buffer) -> tir.Buffer:
        """A buffer at a use: its replacement, made once per buffer."""
        new = self.buffer_remap.get(buffer)
        if new is None:
            data = self.visit_expr(buffer.data)
            if not isinstance(data, tir.Var):
                raise TVMLiteError(
                    f"{type(self).__name__} replaced the data var of buffer '{buffer.name}' "
                    "by an expression; it must stay a var"
                )
            new = self.buffer_remap[buffer] = self._rebuild(buffer, data)
        return new

    def visit_buffer_def(self, buffer: tir.Buffer) -> tir.Buffer:
        """A buffer at its definition (its data var is defined here too)."""
        new = self.buffer_remap.get(buffer)
        if new is None:
            new = self.buffer_remap[buffer] = self._rebuild(buffer, self._define(buffer.data))
        return new

    def _rebuild(self, buffer: tir.Buffer, data: tir.Var) -> tir.Buffer:
        offset = buffer.elem_offset
        return replace(
            buffer,
            data=data,
            shape=self.visit_exprs(buffer.shape),
            strides=self.visit_exprs(buffer.strides),
            elem_offset=None if offset is None else self.visit_expr(offset),
        )

    def visit_range(self, r: tir.Range) -> tir.Range:
        return replace(r, min=self.visit_expr(r.min), extent=self.visit_expr(r.extent))

    def visit_buffer_region(self, region: tir.BufferRegion) -> tir.BufferRegion:
        ranges = tuple(self.visit_range(r) for r in region.region)
        return replace(
            region,
            buffer=self.visit_buffer(region.buffer),
            region=ranges if changed(ranges, region.region) else region.region,
        )

    def visit_match_buffer(self, match: tir.MatchBufferRegion) -> tir.MatchBufferRegion:
        source = self.visit_buffer_region(match.source)
        return replace(match, buffer=self.visit_buffer_def(match.buffer), source=source)

    def visit_iter_var(self, iv: tir.IterVar) -> tir.IterVar:
        dom = self.visit_range(iv.dom)
        return replace(iv, var=self._define(iv.var), dom=dom)

    def visit_attr_value(self, value: Any) -> Any:
        """Expressions and buffers inside annotation values and attribute nodes."""
        if isinstance(value, tir.PrimExpr):
            return self.visit_expr(value)
        if isinstance(value, tir.Buffer):
            return self.visit_buffer(value)
        if isinstance(value, tuple):
            items = tuple(self.visit_attr_value(item) for item in value)
            return items if changed(items, value) else value
        if isinstance(value, tir.IterVar):
            return self.visit_iter_var(value)
        if isinstance(value, tir.AttrDict):
            pairs = self.visit_attr_value(value.items)
            return value if pairs is value.items else tir.AttrDict(pairs)
        if isinstance(value, tir.CommReducer):
            lhs = tuple(self._define(v) for v in value.lhs)
            rhs = tuple(self._define(v) for v in value.rhs)
            result = tuple(self.visit_expr(e) for e in value.result)
            identity = tuple(self.visit_expr(e) for e in value.identity)
            new = tir.CommReducer(lhs, rhs, result, identity)
            parts = (*lhs, *rhs, *result, *identity)
            old = (*value.lhs, *value.rhs, *value.result, *value.identity)
            return new if changed(parts, old) else value
        return value

    def visit_annotations(
        self, annotations: tuple[tuple[str, Any], ...]
    ) -> tuple[tuple[str, Any], ...]:
        new = tuple((key, self.visit_attr_value(value)) for key, value in annotations)
        if any(a[1] is not b[1] for a, b in zip(new, annotations, strict=True)):
            return new
        return annotations

    # ------------------------------------------------------------ expressions

    def visit_Var(self, e: tir.Var) -> tir.PrimExpr:
        return self.var_remap.get(e, e)

    def visit_IntImm(self, e: tir.IntImm) -> tir.PrimExpr:
        return e

    def visit_FloatImm(self, e: tir.FloatImm) -> tir.PrimExpr:
        return e

    def visit_StringImm(self, e: tir.StringImm) -> tir.PrimExpr:
        return e

    def visit_Cast(self, e: tir.Cast) -> tir.PrimExpr:
        return replace(e, value=self.visit_expr(e.value))

    def visit_BinaryOp(self, e: tir.BinaryOp) -> tir.PrimExpr:
        return replace(e, a=self.visit_expr(e.a), b=self.visit_expr(e.b))

    def visit_Not(self, e: tir.Not) -> tir.PrimExpr:
        return replace(e, a=self.visit_expr(e.a))

    def visit_Select(self, e: tir.Select) -> tir.PrimExpr:
        return replace(
            e,
            condition=self.visit_expr(e.condition),
            true_value=self.visit_expr(e.true_value),
            false_value=self.visit_expr(e.false_value),
        )

    def visit_Ramp(self, e: tir.Ramp) -> tir.PrimExpr:
        return replace(e, base=self.visit_expr(e.base), stride=self.visit_expr(e.stride))

    def visit_Broadcast(self, e: tir.Broadcast) -> tir.PrimExpr:
        return replace(e, value=self.visit_expr(e.value))

    def visit_Shuffle(self, e: tir.Shuffle) -> tir.PrimExpr:
        return replace(e, vectors=self.visit_exprs(e.vectors), indices=self.visit_exprs(e.indices))

    def visit_Let(self, e: tir.Let) -> tir.PrimExpr:
        value = self.visit_expr(e.value)
        return replace(e, var=self._define(e.var), value=value, body=self.visit_expr(e.body))

    def visit_Call(self, e: tir.Call) -> tir.PrimExpr:
        kwargs = self.visit_annotations(e.kwargs)
        if all(isinstance(arg, tir.PrimExpr) for arg in e.args):
            return replace(e, args=self.visit_exprs(e.args), kwargs=kwargs)
        args = tuple(self._call_arg(a) for a in e.args)
        return replace(e, args=args if changed(args, e.args) else e.args, kwargs=kwargs)

    def _call_arg(self, arg: Any) -> Any:
        """Tile operators also take regions, Python bools (flags) and lists."""
        if isinstance(arg, tir.BufferRegion):
            return self.visit_buffer_region(arg)
        return self.visit_attr_value(arg)

    def visit_BufferLoad(self, e: tir.BufferLoad) -> tir.PrimExpr:
        buffer = self.visit_buffer(e.buffer)
        return replace(e, buffer=buffer, indices=self.visit_exprs(e.indices))

    # ------------------------------------------------------------ statements

    def visit_BufferStore(self, s: tir.BufferStore) -> tir.Stmt:
        buffer = self.visit_buffer(s.buffer)
        value = self.visit_expr(s.value)
        return replace(s, buffer=buffer, value=value, indices=self.visit_exprs(s.indices))

    def visit_LetStmt(self, s: tir.LetStmt) -> tir.Stmt:
        value = self.visit_expr(s.value)
        return replace(s, var=self._define(s.var), value=value, body=self.visit_stmt(s.body))

    def visit_Bind(self, s: tir.Bind) -> tir.Stmt:
        value = self.visit_expr(s.value)
        return replace(s, var=self._define(s.var), value=value)

    def visit_ScopeIdDef(self, s: tir.ScopeIdDef) -> tir.Stmt:
        extents = None if s.extents is None else self.visit_exprs(s.extents)
        preferred = None if s.preferred is None else self.visit_exprs(s.preferred)
        variables = tuple(self._define(v) for v in s.vars)
        variables = variables if changed(variables, s.vars) else s.vars
        return replace(s, vars=variables, extents=extents, preferred=preferred)

    def visit_AttrStmt(self, s: tir.AttrStmt) -> tir.Stmt:
        node = self.visit_attr_value(s.node)
        value = self.visit_attr_value(s.value)
        body = None if s.body is None else self.visit_stmt(s.body)
        return replace(s, node=node, value=value, body=body)

    def visit_AssertStmt(self, s: tir.AssertStmt) -> tir.Stmt:
        message = tuple(p if isinstance(p, str) else self.visit_expr(p) for p in s.message)
        message = message if changed(message, s.message) else s.message
        return replace(s, condition=self.visit_expr(s.condition), message=message)

    def visit_For(self, s: tir.For) -> tir.Stmt:
        lo, extent = self.visit_expr(s.min), self.visit_expr(s.extent)
        step = None if s.step is None else self.visit_expr(s.step)
        return replace(
            s,
            loop_var=self._define(s.loop_var),
            min=lo,
            extent=extent,
            step=step,
            annotations=self.visit_annotations(s.annotations),
            body=self.visit_stmt(s.body),
        )

    def visit_While(self, s: tir.While) -> tir.Stmt:
        return replace(s, condition=self.visit_expr(s.condition), body=self.visit_stmt(s.body))

    def visit_Break(self, s: tir.Break) -> tir.Stmt:
        return s

    def visit_Continue(self, s: tir.Continue) -> tir.Stmt:
        return s

    def visit_IfThenElse(self, s: tir.IfThenElse) -> tir.Stmt:
        condition = self.visit_expr(s.condition)
        then_case = self.visit_stmt(s.then_case)
        else_case = None if s.else_case is None else self.visit_stmt(s.else_case)
        return replace(s, condition=condition, then_case=then_case, else_case=else_case)

    def visit_SeqStmt(self, s: tir.SeqStmt) -> tir.Stmt:
        seq = tuple(self.visit_stmt(item) for item in s.seq)
        return replace(s, seq=seq) if changed(seq, s.seq) else s

    def visit_Evaluate(self, s: tir.Evaluate) -> tir.Stmt:
        return replace(s, value=self.visit_expr(s.value))

    def visit_Return(self, s: tir.Return) -> tir.Stmt:
        return replace(s, value=self.visit_expr(s.value))

    def visit_AllocBuffer(self, s: tir.AllocBuffer) -> tir.Stmt:
        source = None if s.source is None else self.visit_buffer(s.source)
        data_value = None if s.data_value is None else self.visit_expr(s.data_value)
        buffer = self.visit_buffer_def(s.buffer)
        annotations = self.visit_annotations(s.annotations)
        return replace(
            s, buffer=buffer, annotations=annotations, source=source, data_value=data_value
        )

    def visit_Block(self, s: tir.Block) -> tir.Stmt:
        iter_vars = tuple(self.visit_iter_var(iv) for iv in s.iter_vars)
        allocs = tuple(self.visit_buffer_def(b) for b in s.alloc_buffers)
        matches = tuple(self.visit_match_buffer(m) for m in s.match_buffers)
        reads = tuple(self.visit_buffer_region(r) for r in s.reads)
        writes = tuple(self.visit_buffer_region(r) for r in s.writes)
        annotations = self.visit_annotations(s.annotations)
        init = None if s.init is None else self.visit_stmt(s.init)
        return replace(
            s,
            iter_vars=iter_vars if changed(iter_vars, s.iter_vars) else s.iter_vars,
            alloc_buffers=allocs if changed(allocs, s.alloc_buffers) else s.alloc_buffers,
            match_buffers=matches if changed(matches, s.match_buffers) else s.match_buffers,
            reads=reads if changed(reads, s.reads) else s.reads,
            writes=writes if changed(writes, s.writes) else s.writes,
            annotations=annotations,
            init=init,
            body=self.visit_stmt(s.body),
        )

    def visit_BlockRealize(self, s: tir.BlockRealize) -> tir.Stmt:
        iter_values = self.visit_exprs(s.iter_values)
        predicate = self.visit_expr(s.predicate)
        block = self.visit_stmt(s.block)
        if not isinstance(block, tir.Block):
            raise TVMLiteError(
                f"{type(self).__name__} turned block '{s.block.name}' into a "
                f"{type(block).__name__}; a BlockRealize must hold a block"
            )
        return replace(s, iter_values=iter_values, predicate=predicate, block=block)
