"""Small TIR expression utilities the kernel builder needs: variable substitution,
buffer-load collection in TVM's visiting orders, and read-region inference."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from tvmlite.dsl import tir
from tvmlite.lowering.legalize import texpr as E


def substitute(expr: tir.PrimExpr, mapping: Mapping[tir.Var, tir.PrimExpr]) -> tir.PrimExpr:
    """`expr` with vars replaced; unchanged subtrees are returned as they are."""
    if not mapping:
        return expr
    return _subst(expr, mapping)


def _subst(node: Any, mapping: Mapping[tir.Var, tir.PrimExpr]) -> Any:
    if isinstance(node, tir.Var):
        return mapping.get(node, node)
    if isinstance(node, tuple):
        items = tuple(_subst(x, mapping) for x in node)
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, tir.PrimExpr):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        if f.name == "span":
            continue
        old = getattr(node, f.name)
        if isinstance(old, (tir.PrimExpr, tuple)):
            new = _subst(old, mapping)
            if new is not old:
                changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node


def collect_loads(exprs: Iterable[tir.PrimExpr], post_order: bool = False) -> list[tir.BufferLoad]:
    """Every BufferLoad under `exprs`, left to right; a load comes before the loads in
    its indices (pre-order, as block read detection sees them) or after them."""
    out: list[tir.BufferLoad] = []
    for e in exprs:
        _loads(e, out, post_order)
    return out


def _loads(node: Any, out: list[tir.BufferLoad], post_order: bool) -> None:
    if isinstance(node, tuple):
        for x in node:
            _loads(x, out, post_order)
        return
    if not isinstance(node, tir.PrimExpr):
        return
    if isinstance(node, tir.BufferLoad) and not post_order:
        out.append(node)
    for f in dataclasses.fields(node):
        if f.name not in ("span", "buffer"):
            _loads(getattr(node, f.name), out, post_order)
    if isinstance(node, tir.BufferLoad) and post_order:
        out.append(node)


def read_region(
    exprs: Iterable[tir.PrimExpr], exclude: set[tir.Buffer]
) -> tuple[tir.BufferRegion, ...]:
    """The read regions of a block computing `exprs`, buffers in first-read order;
    a buffer read at several points gets the hull of its indices."""
    per_buffer: dict[tir.Buffer, list[tuple[tir.PrimExpr, ...]]] = {}
    for load in collect_loads(exprs):
        if load.buffer in exclude:
            continue
        seen = per_buffer.setdefault(load.buffer, [])
        if load.indices not in seen:
            seen.append(load.indices)
    regions = []
    for buf, accesses in per_buffer.items():
        dims = tuple(_hull([a[d] for a in accesses], buf.shape[d]) for d in range(len(buf.shape)))
        regions.append(tir.BufferRegion(buf, dims))
    return tuple(regions)


def _split_offset(e: tir.PrimExpr) -> tuple[tir.PrimExpr | None, int]:
    """`base + c` as (base, c); an immediate as (None, value)."""
    if isinstance(e, tir.IntImm):
        return None, e.value
    if isinstance(e, tir.BinaryOp) and isinstance(e.b, tir.IntImm):
        if e.kind == "add":
            return e.a, e.b.value
        if e.kind == "sub":
            return e.a, -e.b.value
    return e, 0


def _hull(indices: list[tir.PrimExpr], extent: tir.PrimExpr) -> tir.Range:
    if len(indices) == 1:
        return tir.Range(indices[0], E.const(1, indices[0].dtype))
    parts = [_split_offset(i) for i in indices]
    base = parts[0][0]
    if all(p[0] == base for p in parts):
        lo = min(p[1] for p in parts)
        hi = max(p[1] for p in parts)
        start = E.idx(lo) if base is None else E.add(base, lo)
        return tir.Range(start, E.idx(hi - lo + 1))
    return tir.Range(E.idx(0), extent)
