"""0.27's buffer views: `B = A.view(n, m)`, `B = A.view("float16")`, `C = B.local(...)`
and `T.decl_buffer(..., data=B.data)`, each a declaration over the storage of the
buffer it names (`tir.AllocBuffer` of form `decl_buffer`).

TVM 0.27 keeps the chain a view is declared along (`C = B.local()` names B, itself a
view of A): where the named buffer is itself a view, the declaration records it as
its `source`, so that the text prints back naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tvmlite.dsl import tir
from tvmlite.dsl.parse.scope import bind_call
from tvmlite.dsl.parse.tir.expr import source_of
from tvmlite.dsl.parse.tir.layout import buffer_layout
from tvmlite.dsl.tir_layout import (
    DEFAULT_LAYOUT,
    const_elements,
    inherited,
    per_thread_storage,
    settled,
)
from tvmlite.grammar import syntax

if TYPE_CHECKING:
    from tvmlite.dsl.parse.tir.assign import AssignParser


class ViewParser:
    """The view declarations of one function; the expression parser's `views` holds
    the buffers declared over another buffer's storage."""

    def __init__(self, assign: AssignParser) -> None:
        self.assign = assign
        self.fn = assign.fn
        self.ctx = assign.ctx
        self.exprs = assign.exprs

    def declare(
        self, target: syntax.Name, buffer: tir.Buffer, owner: tir.Buffer | None, node: syntax.Node
    ) -> tir.AllocBuffer:
        """The `decl_buffer` statement of `buffer`, a view of `owner` when it has one."""
        self.assign.check_rebind(target)
        self.exprs.define(target.id, buffer)
        if owner is None:
            return tir.AllocBuffer(buffer, "decl_buffer", node.span)
        self.exprs.views.add(buffer)
        source = owner if owner in self.exprs.views else None
        return tir.AllocBuffer(buffer, "decl_buffer", node.span, source=source)

    def data_owner(self, node: syntax.Node | None) -> tir.Buffer | None:
        """B of `data=B.data` (a declaration over B's storage)."""
        if isinstance(node, syntax.Attribute) and node.attr == "data":
            found = self.exprs.scope.lookup(getattr(source_of(node.value), "id", ""))
            return found if isinstance(found, tir.Buffer) else None
        return None

    def decl_scalar(self, target: syntax.Name, call: syntax.Call) -> tir.AllocBuffer:
        """`x = T.decl_scalar(T.uint64, data=ptr, elem_offset=0, scope="shared")`: a
        one-element buffer over `ptr` (its bare name is the element), as TVM 0.27 writes
        any such `decl_buffer`."""
        named = bind_call(
            self.ctx, call, "T.decl_scalar", ("dtype", "data", "scope", "elem_offset")
        )
        for needed in ("dtype", "data", "scope"):
            if needed not in named:
                raise self.ctx.error(f"T.decl_scalar needs {needed}=", call)
        one = tir.IntImm("int32", 1, call.span)
        buffer = self.fn.buffers.make_buffer(target.id, named, call, shape=(one,))
        return self.declare(target, buffer, self.data_owner(named["data"]), call)

    def view(self, target: syntax.Name, call: syntax.Call) -> tir.AllocBuffer:
        """`B = A.view(n, m)` / `B = A.view("float16")`: a declaration over A's data
        with another shape or dtype (`T.decl_buffer(..., data=A.data)`)."""
        assert isinstance(call.func, syntax.Attribute)
        source = self.exprs.buffer(call.func.value)
        layout_node = self.layout_keyword(call, "A.view takes a shape (dims) or a dtype string")
        if not call.args:
            raise self.ctx.error("A.view takes a shape (dims) or a dtype string", call)
        shape, dtype, layout = source.shape, source.dtype, DEFAULT_LAYOUT
        first = call.args[0]
        if (
            len(call.args) == 1
            and isinstance(first, syntax.Constant)
            and isinstance(first.value, str)
            and layout_node is None
        ):
            dtype = self.exprs.dtype_arg(first)
        else:  # a new shape keeps A's layout unless `layout=` gives one, as in TVM
            shape = tuple(self.fn.buffers.dim(d, None) for d in call.args)
            layout = settled(inherited(source.layout, source.shape), shape)
            if layout_node is not None:
                layout = self.layout(layout_node, shape, source)
        buffer = tir.Buffer(
            target.id, source.data, dtype, shape, scope=source.scope, span=call.span, layout=layout
        )
        return self.declare(target, buffer, source, call)

    def local(self, target: syntax.Name, call: syntax.Call) -> tir.AllocBuffer:
        """`C = B.local(2, 4)`, `B.local()`, `B.local(layout=...)`: one thread's own part
        of a buffer spread over threads, as a declaration over B's storage. Without a
        shape it is that storage's span (its size when `layout=` says how it is laid);
        without a layout it is row-major and must cover the span exactly."""
        assert isinstance(call.func, syntax.Attribute)
        source = self.exprs.buffer(call.func.value)
        layout_node = self.layout_keyword(call, "A.local takes a shape (dims) and layout=")
        storage = per_thread_storage(source.layout, source.shape)
        if call.args:
            shape = tuple(self.fn.buffers.dim(d, None) for d in call.args)
        elif storage is None:
            raise self.ctx.error(
                f"{source.name}.local() cannot infer its shape: the layout of "
                f"'{source.name}' is not constant; write the shape",
                call,
            )
        else:
            extent = storage.span if layout_node is None else storage.size
            shape = (tir.IntImm("int32", extent, call.span),)
        if layout_node is None and storage is not None and call.args:
            count = const_elements(shape)  # TVM proves it equal to the span, or refuses
            if count != storage.span:
                what = "is not constant" if count is None else f"has {count} elements"
                raise self.ctx.error(
                    f"{source.name}.local shape {what}, but each thread "
                    f"holds a span of {storage.span} of '{source.name}'",
                    call,
                )
        layout = DEFAULT_LAYOUT if layout_node is None else self.layout(layout_node, shape, source)
        buffer = tir.Buffer(
            target.id, source.data, source.dtype, shape, source.strides, source.elem_offset,
            source.scope, source.align, source.offset_factor, call.span, layout,
        )  # fmt: skip
        return self.declare(target, buffer, source, call)

    def layout_keyword(self, call: syntax.Call, usage: str) -> syntax.Node | None:
        if any(kw.name != "layout" for kw in call.keywords):
            raise self.ctx.error(usage, call)
        return next((kw.value for kw in call.keywords), None)

    def layout(self, node: syntax.Node, shape: tuple[tir.PrimExpr, ...], source: tir.Buffer):
        return buffer_layout(self.exprs, node, shape, source.scope, self.fn.buffers.s_tir)
