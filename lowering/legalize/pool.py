"""Pools: max_pool/avg_pool/adaptive_avg_pool in 1, 2 and 3 spatial dims, any
layout with D/H/W letters.

Kernels follow TOPI's `pool_impl_nd`: an optional `pad_temp` stage, a
reduction over `rv0, rv1, ...` at `ax * stride + rv * dilation`, and for
averages a `pool_avg` stage dividing by the window size; the blocks carry the
`schedule_rule` annotations TVM's meta schedule keys on.
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import te
from tvmlite.lowering.legalize import texpr as E
from tvmlite.lowering.legalize.padding import pad_compute, spatial_axes
from tvmlite.lowering.legalize.registry import LegalizeCtx, LegalizeUnsupported, register_legalize


def _rule_attr(name: str) -> tuple[tuple[str, str], ...]:
    return (("schedule_rule", f"meta_schedule.{name}"),)


def _size(e: tir.PrimExpr) -> int | tir.PrimExpr:
    """A dim as an int, or the expression of a symbolic one."""
    v = E.value_of(e)
    return v if isinstance(v, int) else e


def _window_load(
    src: te.Tensor, ax: tuple[tir.Var, ...], sp: list[int], rvs: list[te.RAxis], attrs: dict
) -> tir.PrimExpr:
    index: list[tir.PrimExpr] = list(ax)
    for j, axis in enumerate(sp):
        step = E.mul(ax[axis], attrs["strides"][j])
        index[axis] = E.add(step, E.mul(rvs[j].var, attrs["dilation"][j]))
    return src.load(index)


def _padded(
    kb: te.KernelBuilder, x: te.Tensor, sp: list[int], out: tuple, attrs: dict, value: tir.PrimExpr
) -> te.Tensor:
    """`pad_temp` when any side is padded (ceil mode pads what its last window needs)."""
    n = len(sp)
    pads = list(attrs["padding"])
    if len(pads) == n:
        pads = pads + pads
    before: list[E.Expr] = [0] * x.ndim
    after: list[E.Expr] = [0] * x.ndim
    for j, axis in enumerate(sp):
        before[axis], after[axis] = pads[j], pads[j + n]
        if attrs.get("ceil_mode"):
            k, s, d = attrs["pool_size"][j], attrs["strides"][j], attrs["dilation"][j]
            last = E.add(E.mul(E.sub(out[axis], 1), s), (k - 1) * d + 1 - pads[j])
            after[axis] = _size(E.maximum(E.sub(last, x.shape[axis]), E.idx(0)))
    if all(E.value_of(E.idx(p)) == 0 for p in (*before, *after)):
        return x
    return pad_compute(kb, x, before, after, value, "pad_temp")


def max_pool_compute(
    kb: te.KernelBuilder, x: te.Tensor, attrs: dict, out: tuple[tir.PrimExpr, ...]
) -> te.Tensor:
    sp = spatial_axes(attrs["layout"])
    src = _padded(kb, x, sp, out, attrs, E.min_value(x.dtype))

    def body(*ax: tir.Var) -> te.Reduce:
        rvs = [te.reduce_axis(k, f"rv{j}") for j, k in enumerate(attrs["pool_size"])]
        return te.max_(_window_load(src, ax, sp, rvs, attrs), rvs)

    return kb.compute(out, body, "pool_max", annotations=_rule_attr("pool_max"))


def _count(
    ax: tuple[tir.Var, ...], sp: list[int], x: te.Tensor, attrs: dict, with_pad: bool = False
) -> tir.PrimExpr:
    """Elements of the window at `ax` that lie inside the input, or with `with_pad`
    inside the input plus its declared padding (never ceil mode's extra overhang)."""
    n = len(sp)
    pads = list(attrs["padding"])
    if len(pads) == n:
        pads = pads + pads
    total: tir.PrimExpr | None = None
    for j, axis in enumerate(sp):
        k, s, d = (attrs[a][j] for a in ("pool_size", "strides", "dilation"))
        p, after = pads[j], pads[j + n]
        dim, a = x.shape[axis], ax[axis]
        low, high = (-p, E.add(dim, after - 1)) if with_pad else (0, E.sub(dim, 1))
        if p == 0 and d == 1 and not with_pad:  # the form TVM's simplifier leaves
            term = E.add(
                E.mul(E.minimum(a, E.idx(0)), s),
                E.minimum(E.add(E.mul(a, s), k - 1), E.sub(dim, 1)),
            )
            term = E.sub(E.add(term, 1), E.mul(a, s))
        else:
            start = E.sub(E.mul(a, s), p)
            lo = E.maximum(E.floordiv(E.add(E.sub(E.idx(low), start), d - 1), d), E.idx(0))
            hi = E.minimum(E.floordiv(E.sub(high, start), d), E.idx(k - 1))
            term = E.add(E.sub(hi, lo), 1)
        total = term if total is None else E.mul(total, term)
    assert total is not None
    return E.maximum(total, E.idx(1))


def avg_pool_compute(
    kb: te.KernelBuilder, x: te.Tensor, attrs: dict, out: tuple[tir.PrimExpr, ...]
) -> te.Tensor:
    sp = spatial_axes(attrs["layout"])
    src = _padded(kb, x, sp, out, attrs, E.const(0, x.dtype))

    def total(*ax: tir.Var) -> te.Reduce:
        rvs = [te.reduce_axis(k, f"rv{j}") for j, k in enumerate(attrs["pool_size"])]
        return te.sum_(_window_load(src, ax, sp, rvs, attrs), rvs)

    pool_sum = kb.compute(out, total, "pool_sum")
    include = bool(attrs.get("count_include_pad"))
    # Ceil mode's last windows can hang past the declared padding; those positions
    # are not counted, so the divisor varies per window there.
    full_window = include and not attrs.get("ceil_mode")

    def body(*ax: tir.Var) -> tir.PrimExpr:
        if full_window:
            size = 1
            for k in attrs["pool_size"]:
                size *= k
            return E.div(pool_sum[ax], E.const(size, x.dtype))
        return E.div(pool_sum[ax], E.cast(_count(ax, sp, x, attrs, include), x.dtype))

    return kb.compute(out, body, "pool_avg", annotations=_rule_attr("pool_avg"))


# (builder, data, attrs, out_shape) -> the output tensor
PoolCompute = Callable[[te.KernelBuilder, te.Tensor, dict, tuple[tir.PrimExpr, ...]], te.Tensor]
_POOLS: dict[str, PoolCompute] = {"max_pool": max_pool_compute, "avg_pool": avg_pool_compute}


def _pool_rule(name: str, compute: PoolCompute):  # noqa: ANN202 - returns a rule
    """The rule that calls `compute` as the TE kernel `name` (no other out_layout)."""

    def rule(ctx: LegalizeCtx) -> relax.Expr:
        attrs = ctx.attrs
        if attrs.get("out_layout") not in (None, attrs["layout"]):
            raise LegalizeUnsupported("pool with a different out_layout")
        out = ctx.out_shape()

        def build(kb: te.KernelBuilder, x: te.Tensor) -> te.Tensor:
            return compute(kb, x, attrs, out)

        return ctx.call_te(name, build)

    rule.__name__ = f"legalize_{name}"
    return rule


def adaptive_avg_pool_compute(
    kb: te.KernelBuilder, x: te.Tensor, layout: str, out: tuple[tir.PrimExpr, ...]
) -> te.Tensor:
    """TOPI's adaptive pool: window `[o*in//out, ceil((o+1)*in/out))`. Even splits
    give fixed windows as TVM prints them; uneven ones reduce over the widest
    window with out-of-window elements masked to zero. A symbolic size splits
    evenly only into one window per axis (a global pool)."""
    sp = spatial_axes(layout)
    sizes = [(_size(x.shape[a]), _size(out[a])) for a in sp]
    even = all(
        o == 1 or (isinstance(i, int) and isinstance(o, int) and i % o == 0) for i, o in sizes
    )

    def window(ax: tuple[tir.Var, ...], j: int) -> tuple[tir.PrimExpr, tir.PrimExpr]:
        i, o = sizes[j]
        a = ax[sp[j]]
        start = E.floordiv(E.mul(a, i), o)
        end = E.floordiv(E.add(E.mul(a, i), E.sub(E.add(i, o), 1)), o)
        return start, end

    def width(i: int | tir.PrimExpr, o: int | tir.PrimExpr) -> int | tir.PrimExpr:
        """The widest window: the split when even, else ceil(i / o) + 1."""
        if isinstance(i, int) and isinstance(o, int):
            return i // o if even else -(-i // o) + 1
        if even:
            return E.floordiv(i, o)
        return E.add(E.floordiv(E.sub(E.add(i, o), 1), o), 1)

    def total(*ax: tir.Var) -> te.Reduce:
        rvs = [te.reduce_axis(width(i, o), f"rv{j}") for j, (i, o) in enumerate(sizes)]
        index: list[tir.PrimExpr] = list(ax)
        inside: tir.PrimExpr | None = None
        for j, axis in enumerate(sp):
            start, end = window(ax, j)
            index[axis] = E.add(start, rvs[j].var)
            ok = E.binary("lt", index[axis], end)
            inside = ok if inside is None else E.logical_and(inside, ok)
        value = x.load(index) if even else E.if_then_else(inside, x.load(index), 0.0)
        return te.sum_(value, rvs)

    pool_sum = kb.compute(out, total, "adaptive_pool_sum")

    def body(*ax: tir.Var) -> tir.PrimExpr:
        if even and all(isinstance(width(i, o), int) for i, o in sizes):
            size = 1
            for i, o in sizes:
                size *= width(i, o)  # type: ignore[operator]
            return E.div(pool_sum[ax], E.const(size, x.dtype))
        if even:
            count: tir.PrimExpr = E.idx(1)
            for i, o in sizes:
                count = E.mul(count, width(i, o))
            return E.div(pool_sum[ax], E.cast(count, x.dtype))
        uneven: tir.PrimExpr | None = None
        for j in range(len(sp)):
            start, end = window(ax, j)
            span = E.cast(E.sub(end, start), x.dtype)
            uneven = span if uneven is None else E.mul(uneven, span)
        assert uneven is not None
        return E.div(pool_sum[ax], uneven)

    annotations = _rule_attr("adaptive_pool_avg")
    return kb.compute(out, body, "adaptive_pool_avg", annotations=annotations)


def _adaptive_compute(
    kb: te.KernelBuilder, x: te.Tensor, attrs: dict, out: tuple[tir.PrimExpr, ...]
) -> te.Tensor:
    return adaptive_avg_pool_compute(kb, x, attrs["layout"], out)


for _n in (1, 2, 3):
    for _kind, _compute in _POOLS.items():
        register_legalize(f"relax.nn.{_kind}{_n}d")(_pool_rule(f"{_kind}{_n}d", _compute))
    _name = f"adaptive_avg_pool{_n}d"
    register_legalize(f"relax.nn.{_name}")(_pool_rule(_name, _adaptive_compute))
