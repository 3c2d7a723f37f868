"""Sorting: sort, argsort, topk and median, as TIR kernels of our own.

TVM's VM runs these through packed builtins (`tvm.contrib.sort.*`, C++
`std::stable_sort`); `build` compiles everything natively, so each line along
the axis is sorted here by a bottom-up merge sort over positions, in two local
scratch buffers. Merging takes from the right run only when its key is strictly
ahead, so equal keys keep their input order in both directions, as the builtins'
stable sort does. NaN is the largest key (NumPy's rule): last ascending, first
descending and for `largest` topk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import (
    Size,
    at0,
    dims,
    index_var,
    local_scalar,
    loop,
    product,
    seq,
    set0,
    static_dims,
)
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize

INDEX = E.INDEX
NOTHING = tir.Evaluate(tir.IntImm("int32", 0))  # the body of a kernel over an empty tensor


def split_index(flat: tir.PrimExpr, dims: Sequence[Size]) -> list[tir.PrimExpr]:
    """The row-major indices of position `flat` in a tensor of shape `dims`."""
    out = []
    for d, size in enumerate(dims):
        part = E.floordiv(flat, product(dims[d + 1 :]))
        out.append(part if d == 0 else E.floormod(part, size))
    return out


@dataclass(frozen=True)
class Lines:
    """A tensor of shape `dims` seen as lines along `axis` (None: the whole tensor
    flattened, one line). Line l is the l-th index of the other axes, row-major.
    Dims are ints, or expressions when symbolic (`Lines.of(..., symbolic=True)`:
    the kernel's loops and scratch are then sized at run time)."""

    dims: tuple[Size, ...]
    axis: int | None

    @staticmethod
    def of(x: te.Tensor, axis: int | None, what: str, symbolic: bool = False) -> Lines:
        if symbolic:
            sizes: tuple[Size, ...] = tuple(dims(x.shape))
        else:
            sizes = tuple(static_dims(x.shape, what))
        return Lines(sizes, None if axis is None else axis % max(len(sizes), 1))

    @property
    def length(self) -> Size:
        return product(self.dims) if self.axis is None else self.dims[self.axis]

    @property
    def count(self) -> Size:
        """How many lines (none when they are empty)."""
        if self.length == 0:
            return 0
        if self.axis is None:
            return 1
        return product(self.dims[: self.axis] + self.dims[self.axis + 1 :])

    def with_length(self, length: Size) -> Lines:
        """The same lines in a tensor whose axis has `length` elements."""
        assert self.axis is not None
        dims = list(self.dims)
        dims[self.axis] = length
        return Lines(tuple(dims), self.axis)

    def index(self, line: tir.PrimExpr, j: tir.PrimExpr) -> tuple[tir.PrimExpr, ...]:
        """The indices of element `j` of line `line`."""
        if self.axis is None:
            return tuple(split_index(j, self.dims))
        before, after = self.dims[: self.axis], self.dims[self.axis + 1 :]
        inner = product(after)
        outer_idx = split_index(E.floordiv(line, inner), before)
        return (*outer_idx, j, *split_index(E.floormod(line, inner), after))


@dataclass(frozen=True)
class SortedLine:
    """One sorted line while the kernel runs: `order[j]` is the line position of
    the j-th element in sorted order, `key(p)` loads the element at position p."""

    line: tir.Var
    order: tir.Buffer
    key: Callable[[tir.PrimExpr], tir.PrimExpr]

    def position(self, j: tir.PrimExpr) -> tir.PrimExpr:
        return tir.BufferLoad(self.order, (E.idx(j),), INDEX)


def ahead(a: tir.PrimExpr, b: tir.PrimExpr, descending: bool) -> tir.PrimExpr:
    """Whether key `a` sorts strictly before key `b`, NaN being the largest."""
    if descending:
        a, b = b, a
    less = E.binary("lt", a, b)
    if not dt.is_float(a.dtype):
        return less
    a_nan, b_nan = E.call("isnan", "bool", a), E.call("isnan", "bool", b)
    return E.logical_or(less, E.logical_and(b_nan, E.logical_not(a_nan)))


def index_scratch(name: str, n: Size) -> tir.Buffer:
    """A local int64 buffer of `n` positions (at least one)."""
    data = tir.Var(name, "handle", (INDEX, "local"))
    return tir.Buffer(name, data, INDEX, (E.maximum(E.idx(n), E.idx(1)),), scope="local")


@dataclass(frozen=True)
class Order:
    """A strict order on positions for `merge_sort`: `before(p, q)` gives the
    statements to run, then the condition "position p sorts strictly before
    position q"; `scratch` holds the locals those statements use (allocated once,
    by the sort)."""

    before: Callable[[tir.PrimExpr, tir.PrimExpr], tuple[list[tir.Stmt], tir.PrimExpr]]
    scratch: tuple[tir.Buffer, ...] = ()

    @staticmethod
    def by_key(key: Callable[[tir.PrimExpr], tir.PrimExpr], descending: bool) -> Order:
        """Positions ordered by the scalar `key(p)` (NaN largest)."""

        def before(p: tir.PrimExpr, q: tir.PrimExpr) -> tuple[list[tir.Stmt], tir.PrimExpr]:
            return [], ahead(key(p), key(q), descending)

        return Order(before)


def merge_sort(n: Size, order_by: Order) -> tuple[list[tir.Stmt], tir.Buffer]:
    """Statements leaving the stable sorted order of positions `0..n` in the
    returned buffer: runs of `width` merged pairwise into scratch, then copied back."""
    order, merged = index_scratch("order", n), index_scratch("merged", n)
    width, left, right = (local_scalar(v, INDEX) for v in ("width", "left", "right"))
    w = at0(width)
    lo, mid, hi = (tir.Var(v, INDEX) for v in ("lo", "mid", "hi"))
    k, s, c, i = (index_var(v) for v in ("k", "s", "c", "i"))

    def take(run: tir.Buffer) -> tir.Stmt:
        pick = tir.BufferLoad(order, (at0(run),), INDEX)
        dst = E.add(lo, k)
        return seq(tir.BufferStore(merged, pick, (dst,)), set0(run, E.add(at0(run), E.idx(1))))

    def head(run: tir.Buffer) -> tir.PrimExpr:
        return tir.BufferLoad(order, (at0(run),), INDEX)

    # Taking from the right run only when it is strictly ahead keeps the sort stable.
    compare, from_right = order_by.before(head(right), head(left))
    both = seq(*compare, tir.IfThenElse(from_right, take(right), take(left)))
    has_right = tir.IfThenElse(E.binary("lt", at0(right), hi), both, take(left))
    pick = tir.IfThenElse(E.binary("lt", at0(left), mid), has_right, take(right))
    merge = tir.For(k, E.idx(0), E.sub(hi, lo), tir.SERIAL, pick)
    pair = seq(set0(left, lo), set0(right, mid), merge)
    pair = tir.LetStmt(hi, E.minimum(E.add(lo, E.mul(w, 2)), n), pair)
    pair = tir.LetStmt(mid, E.minimum(E.add(lo, w), n), pair)
    pair = tir.LetStmt(lo, E.mul(E.mul(s, 2), w), pair)
    pairs = E.floordiv(E.add(E.sub(E.idx(n), 1), E.mul(w, 2)), E.mul(w, 2))
    copy_back = loop(c, n, tir.BufferStore(order, tir.BufferLoad(merged, (c,), INDEX), (c,)))
    one_pass = seq(
        tir.For(s, E.idx(0), pairs, tir.SERIAL, pair), copy_back, set0(width, E.mul(w, 2))
    )
    scratch = (order, merged, width, left, right, *order_by.scratch)
    stmts: list[tir.Stmt] = [
        *(tir.AllocBuffer(b, "alloc_local") for b in scratch),
        loop(i, n, tir.BufferStore(order, i, (i,))),
        set0(width, E.idx(1)),
        tir.While(E.binary("lt", w, E.idx(n)), one_pass),
    ]
    return stmts, order


def sort_lines(
    data: tir.Buffer,
    lines: Lines,
    descending: bool,
    finish: Callable[[SortedLine], tir.Stmt],
) -> tir.Stmt:
    """A parallel loop over the lines of `data`: sort each, then run `finish`."""
    if lines.count == 0:
        return NOTHING
    line = index_var("line")

    def key(p: tir.PrimExpr) -> tir.PrimExpr:
        return tir.BufferLoad(data, lines.index(line, p), data.dtype)

    stmts, order = merge_sort(lines.length, Order.by_key(key, descending))
    body = seq(*stmts, finish(SortedLine(line, order, key)))
    return loop(line, lines.count, body, tir.PARALLEL)


def write_sorted(
    lines: Lines, k: Size, values: tir.Buffer | None, indices: tir.Buffer | None
) -> Callable[[SortedLine], tir.Stmt]:
    """A `finish` storing the first `k` sorted values and/or positions of each line
    into outputs whose axis has `k` elements."""

    def finish(sl: SortedLine) -> tir.Stmt:
        j = index_var("j")
        dst = lines.with_length(k).index(sl.line, j) if lines.axis is not None else (j,)
        pos = sl.position(j)
        stores: list[tir.Stmt] = []
        if values is not None:
            stores.append(tir.BufferStore(values, sl.key(pos), dst))
        if indices is not None:
            stores.append(tir.BufferStore(indices, E.cast(pos, indices.dtype), dst))
        return loop(j, k, seq(*stores))

    return finish


Output = tuple[str, tuple[tir.PrimExpr, ...], str, bool]


@register_legalize("relax.sort")
def legalize_sort(ctx: LegalizeCtx) -> relax.Expr:
    descending = bool(ctx.attrs.get("descending"))

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        lines = Lines.of(x, ctx.attrs.get("axis", -1), "sort", symbolic=True)

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            finish = write_sorted(lines, lines.length, outs[0], None)
            return sort_lines(ins[0], lines, descending, finish)

        return kb.extern("sort", [("sort_out", x.shape, x.dtype, False)], [x], body)[0]

    return ctx.call_te("sort", build)


@register_legalize("relax.argsort")
def legalize_argsort(ctx: LegalizeCtx) -> relax.Expr:
    descending = bool(ctx.attrs.get("descending"))
    dtype = ctx.out_dtype()

    def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
        lines = Lines.of(x, ctx.attrs.get("axis", -1), "argsort", symbolic=True)

        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            finish = write_sorted(lines, lines.length, None, outs[0])
            return sort_lines(ins[0], lines, descending, finish)

        return kb.extern("argsort", [("argsort_out", x.shape, dtype, False)], [x], body)[0]

    return ctx.call_te("argsort", build)


@register_legalize("relax.topk")
def legalize_topk(ctx: LegalizeCtx) -> relax.Expr:
    """The first k of a complete stable sort; `k < 1` means the whole axis."""
    ret_type = ctx.attrs.get("ret_type", "both")
    largest = bool(ctx.attrs.get("largest", True))
    fields = ctx.out_sinfo.fields if ret_type == "both" else (ctx.out_sinfo,)  # type: ignore[union-attr]
    want_values, want_indices = ret_type in ("both", "values"), ret_type in ("both", "indices")

    def build(kb: te.KernelBuilder, x: te.Tensor) -> list[te.Tensor]:
        lines = Lines.of(x, ctx.attrs.get("axis", -1), "topk", symbolic=True)
        k = ctx.attrs.get("k", 1)
        if k < 1:
            k = lines.length
        elif not isinstance(lines.length, int):
            raise LegalizeUnsupported("topk of k elements from a symbolic axis")
        elif k > lines.length:
            raise LegalizeUnsupported("topk with k larger than its axis")
        outs: list[Output] = [
            (f"topk_v{i}", ctx.out_shape(i if ret_type == "both" else None), f.dtype, False)
            for i, f in enumerate(fields)
        ]

        def body(ins: list[tir.Buffer], bufs: list[tir.Buffer]) -> tir.Stmt:
            values = bufs[0] if want_values else None
            indices = bufs[-1] if want_indices else None
            finish = write_sorted(lines, k, values, indices)
            return sort_lines(ins[0], lines, largest, finish)

        return kb.extern("topk", outs, [x], body)

    return ctx.call_te("topk", build)


@register_legalize("relax.median")
def legalize_median(ctx: LegalizeCtx) -> relax.Expr:
    """TVM's median: element `(n - 1) // 2` of a stable ascending sort (the lower
    median) along one axis, with its int64 position; over all elements, the value
    only."""
    axes = ctx.attrs.get("axis")
    if axes is not None and len(axes) > 1:
        raise LegalizeUnsupported("median over several axes")
    axis = None if not axes else axes[0]
    fields = ctx.out_sinfo.fields if axis is not None else (ctx.out_sinfo,)  # type: ignore[union-attr]

    def build(kb: te.KernelBuilder, x: te.Tensor) -> list[te.Tensor]:
        lines = Lines.of(x, axis, "median", symbolic=True)
        if lines.length == 0:
            raise LegalizeUnsupported("median of an empty axis")
        mid = E.floordiv(E.sub(E.idx(lines.length), 1), 2)
        outs: list[Output] = [
            (f"median_v{i}", ctx.out_shape(i if axis is not None else None), f.dtype, False)
            for i, f in enumerate(fields)
        ]

        def finish_for(bufs: list[tir.Buffer]) -> Callable[[SortedLine], tir.Stmt]:
            def finish(sl: SortedLine) -> tir.Stmt:
                # One result per line, so the line number is its flat position.
                dst = tuple(split_index(sl.line, dims(bufs[0].shape)))
                pos = sl.position(mid)
                stores = [tir.BufferStore(bufs[0], sl.key(pos), dst)]
                if len(bufs) > 1:
                    stores.append(tir.BufferStore(bufs[1], E.cast(pos, bufs[1].dtype), dst))
                return seq(*stores)

            return finish

        def body(ins: list[tir.Buffer], bufs: list[tir.Buffer]) -> tir.Stmt:
            return sort_lines(ins[0], lines, False, finish_for(bufs))

        return kb.extern("median", outs, [x], body)

    return ctx.call_te("median", build)
