"""Layouts as permutations, and what a layout change does to an operator's
layout-sensitive attributes (the rules `ConvertLayout` applies).

An `AxisOrder` says where a tensor's axes sit relative to the layout the program
wrote: axis `i` of the tensor is axis `perm[i]` of the original. An operator
reading such a tensor keeps its meaning only if its attributes move with the
axes: a pool's `layout` string, a norm's `axis`, a reduction's `axis`, a
concat's `axis`. `follow` knows how for each operator family TVM's layout
inference covers (pools, axis-wise and channel norms, reductions, concat,
elementwise and broadcasting operators) and says "cannot" (None) for the rest,
whose inputs then go back to the original layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tvmlite.dsl import relax
from tvmlite.dsl.ops import OpPatternKind, lookup, sinfo_of


@dataclass(frozen=True)
class AxisOrder:
    """Axis `i` of the tensor is axis `perm[i]` of the layout the program wrote."""

    perm: tuple[int, ...]

    @staticmethod
    def identity(ndim: int) -> AxisOrder:
        return AxisOrder(tuple(range(ndim)))

    @staticmethod
    def between(src: str, dst: str) -> AxisOrder:
        """AxisOrder `dst` of a tensor the program wrote in layout `src` (NCHW -> NHWC
        is (0, 2, 3, 1)); both name the same axes."""
        return AxisOrder(tuple(src.index(c) for c in dst))

    @property
    def is_identity(self) -> bool:
        return self.perm == tuple(range(len(self.perm)))

    def axes_to(self, target: AxisOrder) -> list[int]:
        """`R.permute_dims` axes turning a tensor in this layout into `target`."""
        return [self.perm.index(p) for p in target.perm]

    def axis(self, original: int) -> int:
        """Where original axis `original` (negative counts from the end) is now."""
        return self.perm.index(original % len(self.perm))

    def letters(self, layout: str) -> str:
        """The layout string of the tensor when the program wrote `layout`."""
        return "".join(layout[p] for p in self.perm)

    def without(self, originals: Sequence[int]) -> AxisOrder:
        """The layout left when the original axes `originals` are reduced away."""
        dropped = {a % len(self.perm) for a in originals}
        kept = [p for p in self.perm if p not in dropped]
        rank = {p: i for i, p in enumerate(sorted(kept))}
        return AxisOrder(tuple(rank[p] for p in kept))


def is_permutation(layout: str) -> bool:
    """Whether `layout` is plain axis letters (NCHW), not a split one (NCHW4c)."""
    return layout.isalpha() and layout.isupper() and len(set(layout)) == len(layout)


@dataclass(frozen=True)
class Follow:
    """How an operator follows layout `layout` of its input: the arguments to
    convert into `layout` (the others stay in the program's layout), the changed
    attributes, and the layout of the result (a tuple for tuple results, None for
    a field in the program's layout)."""

    layout: AxisOrder
    convert: tuple[int, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    result: AxisOrder | tuple[AxisOrder | None, ...] | None = None

    def call(self, call: relax.Call, args: Sequence[relax.Expr]) -> relax.Call:
        """`call` over `args` (already converted) with the changed attributes."""
        attrs = tuple((k, self.attrs.get(k, v)) for k, v in call.attrs)
        return relax.Call(call.op, tuple(args), attrs, call.sinfo_args, call.span)


POOLS = frozenset(
    f"relax.nn.{kind}_pool{n}d" for kind in ("max", "avg", "adaptive_avg") for n in (1, 2, 3)
)
REDUCTIONS = frozenset(
    f"relax.{r}"
    for r in ("sum", "mean", "max", "min", "prod", "std", "variance", "argmax", "argmin")
)
# One `axis` attribute naming the axis the operator works along (its other tensor
# arguments are per-axis parameters, in no layout); group/instance norm also
# name a channel axis and the reduced axes.
AXIS_OPS = frozenset(
    {
        "relax.nn.softmax",
        "relax.nn.log_softmax",
        "relax.nn.batch_norm",
        "relax.nn.prelu",
        "relax.quantize",
        "relax.dequantize",
        "relax.nn.group_norm",
        "relax.nn.instance_norm",
    }
)
TUPLE_RESULTS = {"relax.nn.batch_norm": 3}  # the result's fields after the first are per-axis


def follow(call: relax.Call, layout: AxisOrder) -> Follow | None:
    """How `call` follows `layout`, the layout of its first laid-out argument."""
    name = call.op.name  # type: ignore[union-attr]
    attrs = dict(call.attrs)
    if name in POOLS:
        return _pool(attrs, layout)
    if name in AXIS_OPS:
        return _axes(name, attrs, layout)
    if name in REDUCTIONS:
        return _reduce(attrs, layout)
    if name == "relax.concat":
        return Follow(layout, (0,), {"axis": layout.axis(attrs["axis"])}, layout)
    if _is_elementwise(call):
        return _elementwise(call, layout)
    return None


def _pool(attrs: dict[str, Any], layout: AxisOrder) -> Follow | None:
    if attrs["out_layout"] != attrs["layout"]:
        return None
    letters = layout.letters(attrs["layout"])
    return Follow(layout, (0,), {"layout": letters, "out_layout": letters}, layout)


def _axes(name: str, attrs: dict[str, Any], layout: AxisOrder) -> Follow:
    changed: dict[str, Any] = {}
    for key in ("axis", "channel_axis"):
        if key in attrs:
            changed[key] = layout.axis(attrs[key])
    if "axes" in attrs:
        changed["axes"] = tuple(layout.axis(a) for a in attrs["axes"])
    fields = TUPLE_RESULTS.get(name)
    result = layout if fields is None else (layout, *([None] * (fields - 1)))
    return Follow(layout, (0,), changed, result)


def _reduce(attrs: dict[str, Any], layout: AxisOrder) -> Follow:
    axis, keep = attrs["axis"], attrs["keepdims"]
    if axis is None:
        return Follow(layout, (0,), {}, layout if keep else None)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    moved = sorted(layout.axis(a) for a in axes)
    new_axis: Any = moved[0] if isinstance(axis, int) else tuple(moved)
    result = layout if keep else layout.without(axes)
    return Follow(layout, (0,), {"axis": new_axis}, result)


def _is_elementwise(call: relax.Call) -> bool:
    """Elementwise or broadcasting over tensors, with no attribute naming axes."""
    op = lookup(call.op.name)  # type: ignore[union-attr]
    if op is None or op.pattern not in (OpPatternKind.kElemWise, OpPatternKind.kBroadcast):
        return False
    kinds_ok = all(a.kind in ("tensor", "prim") for a in op.arg_names)
    return kinds_ok and not any("axis" in a.name or "layout" in a.name for a in op.attrs)


def _elementwise(call: relax.Call, layout: AxisOrder) -> Follow | None:
    """Every tensor of the result's rank follows; 0-d ones broadcast as they are;
    a tensor of another rank broadcasts by trailing axes, which moving would break."""
    convert = []
    for i, arg in enumerate(call.args):
        ndim = getattr(sinfo_of(arg), "ndim", 0)
        if ndim == len(layout.perm):
            convert.append(i)
        elif ndim != 0:
            return None
    return Follow(layout, tuple(convert), {}, layout)
