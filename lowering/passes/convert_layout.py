"""ConvertLayout: run convolutions in the layouts a user asks for, and keep every
layout-sensitive attribute after them right (TVM's
`relax.transform.ConvertLayout(desired_layouts)`).

`desired_layouts` maps a convolution (`relax.nn.conv1d/2d/3d`) to its wanted
data and kernel layouts, e.g. `{"relax.nn.conv2d": ["NHWC", "OHWI"]}` ("default"
keeps one as it is). Inside dataflow blocks each such convolution gets its
inputs through `R.permute_dims` into those layouts and produces its result in
the data layout; the operators that read the result follow the new layout when
they can (`lowering/analysis/layout.py`: pools get a new `layout`, norms and
reductions new axes, concat a new axis, elementwise and broadcasting operators
take their same-rank operands permuted too), and everything else, including the
block's outputs, gets the tensor permuted back first. So the function computes
what it computed before; only layouts inside the block change. Layouts are axis
permutations (NCHW, NHWC, OHWI, ...): TVM's split layouts (NCHW4c) are refused
with an error, as are operators other than convolutions as anchors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tvmlite.diagnostics import ParseError, TVMLiteError
from tvmlite.dsl import relax
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.ops import make_call, sinfo_of
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.tir_mutator import replace
from tvmlite.lowering.analysis.layout import AxisOrder, follow, is_permutation
from tvmlite.lowering.analysis.relax_util import remap, used_vars
from tvmlite.lowering.transform import FunctionPass, Pass

ANCHORS = ("relax.nn.conv1d", "relax.nn.conv2d", "relax.nn.conv3d")
AnyOrder = AxisOrder | tuple["AxisOrder | None", ...] | None


@dataclass(frozen=True)
class ConvertLayout(Pass):
    """`desired_layouts`: operator name -> [data layout, kernel layout]."""

    desired_layouts: Mapping[str, Sequence[str]] = field(default_factory=dict)
    name: str = "ConvertLayout"

    def __post_init__(self) -> None:
        for op, layouts in self.desired_layouts.items():
            if op not in ANCHORS:
                raise TVMLiteError(
                    f"ConvertLayout: cannot choose the layout of {op}; "
                    f"it converts {', '.join(ANCHORS)}"
                )
            if isinstance(layouts, str) or not 1 <= len(layouts) <= 2:
                raise TVMLiteError(
                    f"ConvertLayout: {op} needs [data layout, kernel layout], got {layouts!r}"
                )
            for layout in layouts:
                if layout != "default" and not is_permutation(layout):
                    raise TVMLiteError(
                        f"ConvertLayout: layout {layout!r} of {op} is not a permutation of "
                        "axis letters (split layouts such as NCHW4c are not supported)"
                    )

    def run(self, mod: IRModule) -> IRModule:
        return FunctionPass(self._function, self.name, kinds=("relax",)).run(mod)

    def _function(self, func: relax.Function, _: IRModule) -> relax.Function:
        return _Rewriter(self.desired_layouts).visit_expr(func)  # type: ignore[return-value]


class _Rewriter(ExprMutator):
    """One function's dataflow blocks (the only blocks TVM converts): each var now
    holding a value (`var_remap`) and that value's layout (`layouts`, by id)."""

    def __init__(self, desired: Mapping[str, Sequence[str]]) -> None:
        super().__init__()
        self.desired = desired
        self.layouts: dict[int, AnyOrder] = {}  # id(var now) -> its layout
        self.permuted: dict[tuple[int, tuple[int, ...]], relax.Var] = {}

    def visit_binding_block(self, block: relax.BindingBlock) -> relax.BindingBlock:
        return super().visit_binding_block(block) if block.is_dataflow else block

    def visit_MatchCast(self, b: relax.MatchCast) -> relax.Binding | None:
        return replace(b, value=self.plain(b.value))

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        value, layout = self.rewrite(b.value)
        return self.bind(b, value, layout)

    # ------------------------------------------------------------ values

    def rewrite(self, value: relax.Expr) -> tuple[relax.Expr, AnyOrder]:
        """`value` over the vars now, and the layout of its result."""
        if isinstance(value, relax.Var):
            now = self.now(value)
            return now, self.layouts.get(id(now))
        if isinstance(value, relax.TupleGetItem) and isinstance(value.tuple_value, relax.Var):
            now = self.now(value.tuple_value)
            layout = self.layouts.get(id(now))
            field_layout = layout[value.index] if isinstance(layout, tuple) else None
            return relax.TupleGetItem(now, value.index, value.span), field_layout
        if isinstance(value, relax.Call) and isinstance(value.op, relax.Op):
            if value.op.name in self.desired:
                return self.anchor(value)
            first = next((lay for a in value.args if (lay := self.layout_of(a)) is not None), None)
            rule = follow(value, first) if first is not None else None
            if rule is not None:
                args = [
                    self.to(a, rule.layout if i in rule.convert else None)
                    for i, a in enumerate(value.args)
                ]
                return rule.call(value, args), rule.result
        return self.plain(value), None

    def anchor(self, call: relax.Call) -> tuple[relax.Expr, AnyOrder]:
        """A convolution in the desired layouts."""
        attrs = dict(call.attrs)
        data, kernel, out = attrs["data_layout"], attrs["kernel_layout"], attrs["out_layout"]
        wanted = [*self.desired[call.op.name], "default"]  # type: ignore[union-attr]
        want_data = data if wanted[0] == "default" else wanted[0]
        want_kernel = kernel if wanted[1] == "default" else wanted[1]
        for have, want in ((data, want_data), (kernel, want_kernel)):
            if sorted(have) != sorted(want):
                raise ParseError(
                    f"ConvertLayout: layout {want} does not name the axes of {have}", call.span
                )
        moved = AxisOrder.between(data, want_data)
        new_out, result = (want_data, moved) if out == data else (out, None)
        args = [
            self.to(call.args[0], moved),
            self.to(call.args[1], AxisOrder.between(kernel, want_kernel)),
        ]
        changes = {"data_layout": want_data, "kernel_layout": want_kernel, "out_layout": new_out}
        new_attrs = tuple((k, changes.get(k, v)) for k, v in call.attrs)
        new = relax.Call(call.op, tuple(args), new_attrs, call.sinfo_args, call.span)
        return new, None if result is None or result.is_identity else result

    def bind(self, b: relax.VarBinding, value: relax.Expr, layout: AnyOrder) -> relax.Binding:
        var = b.var
        if not _moved(layout):
            return replace(b, value=value)
        if isinstance(var, relax.DataflowVar):
            now = relax.DataflowVar(var.name, sinfo_of(value), var.span)
            self.var_remap[var], self.layouts[id(now)] = now, layout
            return relax.VarBinding(now, value, b.span)
        # A block output: the program's layout outside the block.
        inner = self.emit_in(value, layout)
        if isinstance(layout, AxisOrder):
            back = AxisOrder.identity(len(layout.perm))
            return relax.VarBinding(var, _permute(inner, layout, back), b.span)
        return relax.VarBinding(var, self.restored(inner, layout), b.span)

    def restored(self, var: relax.Var, layout: AnyOrder) -> relax.Expr:
        """`var` (in `layout`) as the program wrote it."""
        if not isinstance(layout, tuple):
            return self.to(var, None)
        fields = []
        for i, field_layout in enumerate(layout):
            item = self.emit_in(relax.TupleGetItem(var, i), field_layout)
            fields.append(self.restored(item, field_layout))
        return relax.Tuple(tuple(fields))

    # ------------------------------------------------------------ conversions

    def now(self, var: relax.Var) -> relax.Var:
        now = self.var_remap.get(var, var)
        return now if isinstance(now, relax.Var) else var

    def layout_of(self, arg: relax.Expr) -> AxisOrder | None:
        """The layout of a tensor argument (of a tuple's first moved field)."""
        if isinstance(arg, relax.Tuple):
            return next((lay for f in arg.fields if (lay := self.layout_of(f)) is not None), None)
        layout = self.layouts.get(id(self.now(arg))) if isinstance(arg, relax.Var) else None
        return layout if isinstance(layout, AxisOrder) else None

    def to(self, arg: relax.Expr, layout: AxisOrder | None) -> relax.Expr:
        """`arg` in `layout` (None: as the program wrote it)."""
        if isinstance(arg, relax.Tuple):
            return relax.Tuple(tuple(self.to(f, layout) for f in arg.fields), arg.span)
        value = self.now(arg) if isinstance(arg, relax.Var) else self.plain(arg)
        have = self.layouts.get(id(value))
        if isinstance(have, tuple):  # a tuple with moved fields, wanted as written
            return self.restored(value, have)
        ndim = getattr(sinfo_of(arg), "ndim", -1)
        if ndim < 0:
            return value
        source, target = have or AxisOrder.identity(ndim), layout or AxisOrder.identity(ndim)
        if source == target:
            return value
        key = (id(value), tuple(target.perm))
        if key not in self.permuted:
            permute = _permute(value, source, target)
            self.permuted[key] = self.emit_in(permute, None if target.is_identity else target)
        return self.permuted[key]

    def plain(self, expr: relax.Expr) -> relax.Expr:
        """`expr` reading every moved var as the program wrote it."""
        vmap: dict[int, relax.Expr] = {}
        for var in used_vars(expr):
            now = self.now(var)
            if now is not var or _moved(self.layouts.get(id(now))):
                vmap[id(var)] = self.to(var, None)
        return remap(expr, vmap) if vmap else expr

    def emit_in(self, value: relax.Expr, layout: AnyOrder) -> relax.Var:
        """Bind `value`, whose result is in `layout`, before the binding visited."""
        var = self.emit(value, "lv")
        if _moved(layout):
            self.layouts[id(var)] = layout
        return var


def _permute(value: relax.Expr, source: AxisOrder, target: AxisOrder) -> relax.Call:
    return make_call("relax.permute_dims", [value], {"axes": source.axes_to(target)})


def _moved(layout: AnyOrder) -> bool:
    if isinstance(layout, tuple):
        return any(_moved(f) for f in layout)
    return layout is not None and not layout.is_identity
