"""0.27's buffer views as TVM 0.27 prints them: a `decl_buffer` over the storage of
another buffer (its owner: the view it was declared along, else the buffer the data
belongs to) that only reshapes it, retypes it, or takes one thread's part of it.

  B = A.view(16, 16)              same data, dtype and layout, another shape
  B = A.view("int16")             same shape, another dtype, the default layout
  C = B.local(2, 4)               one thread's part of a buffer spread over threads
  x = T.decl_scalar(T.uint64, data=p, elem_offset=0, scope="shared")
                                  one element (named bare) over existing storage
"""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.dsl.tir_layout import (
    DEFAULT_LAYOUT,
    const_elements,
    inherited,
    per_thread_storage,
    row_major,
    settled,
    spelled,
    thread_distributed,
)
from tvmlite.printer.literals import dtype_text, string_text
from tvmlite.printer.tir_expr import ExprPrinter, int_const, same_expr
from tvmlite.printer.tir_layout import layout_text


def view_text(exprs: ExprPrinter, buffer: tir.Buffer, owner: tir.Buffer) -> str | None:
    """`A.view(...)` / `B.local(...)` for `buffer` declared over `owner`'s storage, or
    None when it is no view TVM prints so."""
    if owner is buffer or buffer.allocated_addr or owner.allocated_addr:
        return None
    if buffer.scope != owner.scope:
        return None
    if thread_distributed(owner.layout):
        return _local_text(exprs, buffer, owner)
    if buffer.strides or buffer.align not in (0, 64) or buffer.offset_factor:
        return None
    if buffer.elem_offset is not None and int_const(buffer.elem_offset) != 0:
        return None
    same_shape = same_expr(buffer.shape, owner.shape)
    if same_shape == (buffer.dtype == owner.dtype):
        return None
    source = exprs.buffer_name(owner)
    if same_shape:  # a dtype view has the default layout
        if buffer.layout != DEFAULT_LAYOUT:
            return None
        return f"{source}.view({string_text(buffer.dtype)})"
    if len({d.dtype for d in (*buffer.shape, *owner.shape)}) > 1:
        return None  # TVM views only within one index dtype
    args = [exprs.text(d) for d in buffer.shape]
    kept = settled(inherited(owner.layout, owner.shape), buffer.shape)
    if buffer.layout != kept:  # a shape view keeps its owner's layout
        if buffer.layout is None or kept is None:
            return None
        args.append(f"layout={layout_text(spelled(buffer.layout, buffer.shape), exprs.text)}")
    return f"{source}.view({', '.join(args)})"


def _local_text(exprs: ExprPrinter, buffer: tir.Buffer, owner: tir.Buffer) -> str | None:
    """`B.local()` (the span of a thread's storage), `B.local(2, 4)` (row-major over
    it), `B.local(layout=L)` (its size, laid by L), `B.local(2, 4, layout=L)`."""
    same = (
        buffer.dtype == owner.dtype
        and same_expr(buffer.strides, owner.strides)
        and (buffer.align, buffer.offset_factor) == (owner.align, owner.offset_factor)
        and _same_offset(buffer.elem_offset, owner.elem_offset)
    )
    storage = per_thread_storage(owner.layout, owner.shape)
    if not same or storage is None or buffer.layout is None:
        return None
    source = exprs.buffer_name(owner)
    dims = [exprs.text(d) for d in buffer.shape]
    if buffer.layout == DEFAULT_LAYOUT:
        if _is_extent(buffer.shape, storage.span):
            return f"{source}.local()"
        if const_elements(buffer.shape) == storage.span:
            return f"{source}.local({', '.join(dims)})"
        layout = layout_text(row_major(buffer.shape), exprs.text)
    else:
        layout = layout_text(spelled(buffer.layout, buffer.shape), exprs.text)
        if _is_extent(buffer.shape, storage.size):
            return f"{source}.local(layout={layout})"
    return f"{source}.local({', '.join(dims)}, layout={layout})"


def _same_offset(a: tir.PrimExpr | None, b: tir.PrimExpr | None) -> bool:
    if a is None or b is None:
        return (a if a is not None else b) is None or int_const(a if a is not None else b) == 0
    return same_expr((a,), (b,))


def _is_extent(shape: tuple[tir.PrimExpr, ...], extent: int) -> bool:
    """Whether `shape` is `(extent,)` as an int32 constant (what a shapeless view gets)."""
    dim = shape[0] if len(shape) == 1 else None
    return isinstance(dim, tir.IntImm) and dim.dtype == "int32" and dim.value == extent


def scalar_text(exprs: ExprPrinter, buffer: tir.Buffer, data: str) -> str | None:
    """`T.decl_scalar(T.uint64, data=p, elem_offset=0, scope="shared")` for a one-element
    buffer declared over storage that is already named (`data`), where its bare name is
    its element; None otherwise."""
    plain = not (buffer.strides or buffer.offset_factor or buffer.allocated_addr)
    if not (plain and exprs.bare_scalar(buffer) and buffer.layout == DEFAULT_LAYOUT):
        return None
    offset = exprs.text(buffer.elem_offset) if buffer.elem_offset is not None else "0"
    dtype, scope = f"T.{dtype_text(buffer.dtype)}", string_text(buffer.scope)
    return f"T.decl_scalar({dtype}, data={data}, elem_offset={offset}, scope={scope})"
