"""R.unique, natively: TVM runs it through the packed builtin `relax.run.unique`
(NumPy's `np.unique`, reordered by first occurrence when `sorted=False`).

Without `axis` the elements of the flattened input are the items; with `axis`
the slices along it are, compared lexicographically (NumPy's rule). Two kernels
around `LegalizeCtx.emit_shape`:

- `unique_order` sorts the items stably (the merge sort of `sort.py`, NaN
  largest) and counts the runs of equal items in that order: the count becomes
  the symbolic dim `num_unique`.
- `unique` walks the sorted order again: each run's first item (the stable sort
  keeps the smallest index first) gives its value and its `index`; the run of
  each item is its `inverse`; `counts` counts them. With `sorted=False` the runs
  are renumbered in the order their first items appear in the input.

As in NumPy, NaN elements form one run without `axis` (`equal_nan`), while
slices holding NaN are never equal. `inverse` is 1-d (`x.size`, or the length of
`axis`), as TVM's struct info says; a 0-d input is one item, every output `(1,)`.
The fill loops stop at `num_unique`, so no store leaves the outputs whatever the
count kernel said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tvmlite.dsl import relax, tir
from tvmlite.dsl.ops.context import tensor_sinfo
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.extern import (
    at0,
    index_var,
    local_scalar,
    loop,
    seq,
    set0,
    static_dims,
)
from tvmlite.lowering.legalize.registry import (
    LegalizeCtx,
    LegalizeUnsupported,
    register_legalize,
)
from tvmlite.lowering.legalize.sort import (
    Lines,
    Order,
    Output,
    ahead,
    index_scratch,
    merge_sort,
)

INDEX = E.INDEX
Test = tuple[list[tir.Stmt], tir.PrimExpr]  # statements to run, then a condition


def _get(buf: tir.Buffer, i: tir.PrimExpr) -> tir.BufferLoad:
    return tir.BufferLoad(buf, (i,), buf.dtype)


def _put(buf: tir.Buffer, value: tir.PrimExpr, i: tir.PrimExpr) -> tir.BufferStore:
    return tir.BufferStore(buf, value, (i,))


def _bump(buf: tir.Buffer, i: tir.PrimExpr) -> tir.BufferStore:
    return _put(buf, E.add(_get(buf, i), E.const(1, buf.dtype)), i)


def _int32(value: int) -> tir.PrimExpr:
    return E.const(value, "int32")


@dataclass(frozen=True)
class Items:
    """What unique compares in `data`: `count` items of `size` elements each
    (the elements of the flattened input, or the slices along `lines.axis`).
    `flag` is the local scalar slice comparisons use (listed in `scratch`)."""

    data: tir.Buffer
    lines: Lines
    flag: tir.Buffer = field(default_factory=lambda: local_scalar("flag", "int32"))

    @property
    def count(self) -> int:
        return self.lines.length

    @property
    def size(self) -> int:
        return 1 if self.lines.axis is None else self.lines.count

    @property
    def scratch(self) -> tuple[tir.Buffer, ...]:
        return () if self.lines.axis is None else (self.flag,)

    def at(self, item: tir.PrimExpr, j: tir.PrimExpr) -> tuple[tir.PrimExpr, ...]:
        """The indices in `data` of element `j` of item `item`."""
        return self.lines.index(j, item)

    def out_at(self, item: tir.PrimExpr, j: tir.PrimExpr) -> tuple[tir.PrimExpr, ...]:
        """The same in the unique values (1-d without an axis)."""
        return (item,) if self.lines.axis is None else self.at(item, j)

    def load(self, item: tir.PrimExpr, j: tir.PrimExpr) -> tir.PrimExpr:
        return tir.BufferLoad(self.data, self.at(item, j), self.data.dtype)

    def _walk(self, decide: Callable[[tir.PrimExpr], tir.Stmt]) -> list[tir.Stmt]:
        """`flag = 0`, then `decide(j)` for each element while the flag stays 0."""
        j = index_var("j")
        still = E.binary("eq", at0(self.flag), _int32(0))
        return [set0(self.flag, _int32(0)), loop(j, self.size, tir.IfThenElse(still, decide(j)))]

    def before(self, p: tir.PrimExpr, q: tir.PrimExpr) -> Test:
        """Whether item `p` sorts strictly before item `q`: by value (NaN largest),
        slices lexicographically."""
        if self.lines.axis is None:
            return [], ahead(self.load(p, E.idx(0)), self.load(q, E.idx(0)), False)

        def decide(j: tir.PrimExpr) -> tir.Stmt:
            a, b = self.load(p, j), self.load(q, j)
            later = tir.IfThenElse(ahead(b, a, False), set0(self.flag, _int32(1)))
            return tir.IfThenElse(ahead(a, b, False), set0(self.flag, _int32(-1)), later)

        return self._walk(decide), E.binary("lt", at0(self.flag), _int32(0))

    def differs(self, p: tir.PrimExpr, q: tir.PrimExpr) -> Test:
        """Whether item `q`, right after item `p` in sorted order, starts a new run:
        NaN values make one run, slices differ where any element is `!=`."""
        if self.lines.axis is None:
            return self.before(p, q)

        def decide(j: tir.PrimExpr) -> tir.Stmt:
            ne = E.binary("ne", self.load(p, j), self.load(q, j))
            return tir.IfThenElse(ne, set0(self.flag, _int32(1)))

        return self._walk(decide), E.binary("ne", at0(self.flag), _int32(0))

    def sort(self) -> tuple[list[tir.Stmt], tir.Buffer]:
        """Statements sorting the items stably, and the buffer of the order."""
        return merge_sort(self.count, Order(self.before, self.scratch))

    def runs(
        self,
        order: tir.Buffer,
        start: Callable[[tir.PrimExpr], tir.Stmt],
        then: Callable[[tir.PrimExpr], tir.Stmt] | None = None,
    ) -> tir.Stmt:
        """A loop over the items in sorted `order`: `start(item)` where one begins
        a run, then `then(item)` for every item."""
        t = index_var("t")
        item = _get(order, t)
        stmts, new = self.differs(_get(order, E.sub(t, E.idx(1))), item)
        later = seq(*stmts, tir.IfThenElse(new, start(item)))
        body = tir.IfThenElse(E.binary("eq", t, E.idx(0)), start(item), later)
        return loop(t, self.count, body if then is None else seq(body, then(item)))


def _count_runs(items: Items, ordered: tir.Buffer, count: tir.Buffer) -> tir.Stmt:
    """The body of `unique_order`: sort, write the order, count the runs."""
    stmts, order = items.sort()
    t = index_var("t")
    copy = loop(t, items.count, _put(ordered, _get(order, t), t))
    counting = items.runs(order, lambda _: _bump(count, E.idx(0)))
    return seq(*stmts, copy, set0(count, E.idx(0)), counting)


@dataclass(frozen=True)
class Outputs:
    """The output buffers of `unique`: values always, the others when asked for."""

    values: tir.Buffer
    index: tir.Buffer | None
    inverse: tir.Buffer | None
    counts: tir.Buffer | None


class Fill:
    """The body of `unique`: number the runs in sorted order (`run_of` each item,
    `first` item of each run), renumber them by first appearance unless
    `sorted_`, then write the outputs. `size` is the allocated `num_unique`."""

    def __init__(self, items: Items, order: tir.Buffer, out: Outputs, sorted_: bool) -> None:
        self.items, self.order, self.out, self.sorted_ = items, order, out, sorted_
        n = items.count
        self.run_of, self.first, self.rank = (
            index_scratch(name, n) for name in ("run_of", "first", "rank")
        )
        self.runs, self.seen = local_scalar("runs", INDEX), local_scalar("seen", INDEX)

    @property
    def size(self) -> tir.PrimExpr:
        return self.out.values.shape[self.items.lines.axis or 0]

    def position(self, run: tir.PrimExpr) -> tir.PrimExpr:
        """Where run `run` (numbered in sorted order) goes in the outputs."""
        return run if self.sorted_ else _get(self.rank, run)

    def number_runs(self) -> list[tir.Stmt]:
        runs = self.runs

        def start(item: tir.PrimExpr) -> tir.Stmt:
            return seq(_put(self.first, item, at0(runs)), _bump(runs, E.idx(0)))

        def then(item: tir.PrimExpr) -> tir.Stmt:
            return _put(self.run_of, E.sub(at0(runs), E.idx(1)), item)

        return [set0(runs, E.idx(0)), self.items.runs(self.order, start, then)]

    def rank_by_appearance(self) -> list[tir.Stmt]:
        """Item i is the first of its run when that run's first item is i."""
        i = index_var("i")
        run = _get(self.run_of, i)
        number = seq(_put(self.rank, at0(self.seen), run), _bump(self.seen, E.idx(0)))
        first_seen = tir.IfThenElse(E.binary("eq", _get(self.first, run), i), number)
        return [set0(self.seen, E.idx(0)), loop(i, self.items.count, first_seen)]

    def per_run(self) -> tir.Stmt:
        """Values, index and zeroed counts, one run at a time."""
        run, j = index_var("r"), index_var("j")
        at, src = self.position(run), _get(self.first, run)
        items, out = self.items, self.out
        value = tir.BufferStore(out.values, items.load(src, j), items.out_at(at, j))
        writes = [loop(j, items.size, value)]
        if out.index is not None:
            writes.append(_put(out.index, src, at))
        if out.counts is not None:
            writes.append(_put(out.counts, E.idx(0), at))
        body = tir.IfThenElse(E.binary("lt", at, self.size), seq(*writes))
        return tir.For(run, E.idx(0), E.minimum(self.size, at0(self.runs)), tir.SERIAL, body)

    def per_item(self) -> tir.Stmt:
        """Inverse and counts, one input item at a time."""
        i = index_var("i")
        at = self.position(_get(self.run_of, i))
        writes: list[tir.Stmt] = []
        if self.out.inverse is not None:
            writes.append(_put(self.out.inverse, at, i))
        if self.out.counts is not None:
            bump = _bump(self.out.counts, at)
            writes.append(tir.IfThenElse(E.binary("lt", at, self.size), bump))
        return loop(i, self.items.count, seq(*writes))

    def body(self) -> tir.Stmt:
        scratch = [self.run_of, self.first, self.runs, *self.items.scratch]
        stmts = self.number_runs()
        if not self.sorted_:
            scratch += [self.rank, self.seen]
            stmts += self.rank_by_appearance()
        stmts.append(self.per_run())
        if self.out.inverse is not None or self.out.counts is not None:
            stmts.append(self.per_item())
        return seq(*(tir.AllocBuffer(b, "alloc_local") for b in scratch), *stmts)


SIGNATURE = ("sorted", "return_index", "return_inverse", "return_counts")


def _const(arg: relax.Expr, what: str) -> int:
    value = E.value_of(arg.value) if isinstance(arg, relax.PrimValue) else None
    if not isinstance(value, int):
        raise LegalizeUnsupported(f"unique with {what} known only at run time")
    return value


OUTPUTS = ("values", "index", "inverse", "counts")


@register_legalize("relax.unique")
def legalize_unique(ctx: LegalizeCtx) -> relax.Expr:
    sorted_, *flags = (bool(_const(a, n)) for a, n in zip(ctx.args[1:5], SIGNATURE, strict=True))
    wanted = ["values"] + [name for name, w in zip(OUTPUTS[1:], flags, strict=True) if w]
    shape = getattr(ctx.arg_sinfo[0], "shape", None)
    if not isinstance(shape, tuple):
        raise LegalizeUnsupported("unique of a tensor of unknown shape")
    dims = tuple(static_dims(shape, "unique"))
    axis = _const(ctx.args[5], "axis") % len(dims) if len(ctx.args) > 5 else None
    lines = Lines(dims, axis)
    n, dtype = lines.length, ctx.arg_sinfo[0].dtype  # type: ignore[union-attr]

    def outputs(size: tir.PrimExpr) -> list[Output]:
        """The requested outputs when there are `size` runs."""
        values = tuple(size if d == axis else E.idx(v) for d, v in enumerate(dims))
        every: dict[str, Output] = {
            "values": ("values", values if axis is not None else (size,), dtype, False),
            "index": ("index", (size,), INDEX, False),
            "inverse": ("inverse", (E.idx(n),), INDEX, False),
            "counts": ("counts", (size,), INDEX, False),
        }
        return [every[name] for name in wanted]

    def order_kernel(kb: te.KernelBuilder, x: te.Tensor) -> list[te.Tensor]:
        def body(ins: list[tir.Buffer], outs: list[tir.Buffer]) -> tir.Stmt:
            return _count_runs(Items(ins[0], lines), *outs)

        outs: list[Output] = [
            ("sorted_order", (E.idx(n),), INDEX, False),
            ("num_unique", (E.idx(1),), INDEX, False),
        ]
        return kb.extern("unique_order", outs, [x], body)

    def fill_kernel(kb: te.KernelBuilder, x: te.Tensor, ordered: te.Tensor) -> list[te.Tensor]:
        def body(ins: list[tir.Buffer], bufs: list[tir.Buffer]) -> tir.Stmt:
            got = dict(zip(wanted, bufs, strict=True))
            out = Outputs(got["values"], got.get("index"), got.get("inverse"), got.get("counts"))
            return Fill(Items(ins[0], lines), ins[1], out, sorted_).body()

        return kb.extern("unique", outputs(tir.Var("num_unique", INDEX)), [x, ordered], body)

    vector = tensor_sinfo((E.idx(n),), INDEX)
    both = relax.TupleStructInfo((vector, tensor_sinfo((E.idx(1),), INDEX)))
    counted = ctx.emit(ctx.call_te("unique_order", order_kernel, args=ctx.args[:1], out_sinfo=both))
    order = ctx.emit(relax.TupleGetItem(counted, 0))
    (size,) = ctx.emit_shape(ctx.emit(relax.TupleGetItem(counted, 1)), ["num_unique"])
    sinfos = [tensor_sinfo(shape, dt) for _, shape, dt, _ in outputs(size)]
    out_sinfo = sinfos[0] if len(sinfos) == 1 else relax.TupleStructInfo(tuple(sinfos))
    return ctx.call_te("unique", fill_kernel, args=[ctx.args[0], order], out_sinfo=out_sinfo)
