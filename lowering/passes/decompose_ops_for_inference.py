"""DecomposeOpsForInference: `R.nn.batch_norm(..., training=False)` as the
per-channel affine map it computes at inference (TVM's
`relax.transform.DecomposeOpsForInference`, which does the same for the same
reason):

    scale = gamma * rsqrt(moving_var + epsilon)       # per channel, (C,)
    shift = beta - moving_mean * scale                # per channel, (C,)
    out   = data * scale[c] + shift[c]                # broadcast along `axis`

and the tuple `(out, moving_mean, moving_var)` it returns, whose items are read
directly where the function read `bn[i]`.

Legalized whole, batch_norm is one kernel of its own (TOPI's: subtract, divide
by a square root, multiply, add, for every element), which FuseOps cannot put
after the convolution that feeds it (both are out_ewise_fusible): every
convolution of a ResNet or MobileNet then writes its output, and batch_norm
reads it back and writes another. Decomposed, `data * scale + shift` is a
broadcast epilogue that FuseOps fuses into the convolution, with the relu or
clip after it, and the convolution's schedule folds it into the write-back of
its register tiles.

That fold needs the epilogue to read nothing else the kernel computes (a
consumer is inlined only where all it reads is ready). So when the statistics
come from outside the dataflow block (parameters, as exported models have them)
the per-channel bindings go into a dataflow block of their own before it,
whose results `scale` and `shift` reach the convolution's group as inputs;
FuseOps fuses each chain there into a kernel over C elements. Otherwise they
stay in place, before the batch_norm they replace.

The result differs from the fused formula `(x - mean) / sqrt(var + eps) * gamma
+ beta` by rounding only (a few ulp). Training-mode batch_norm (batch
statistics) and batch_norm of an unknown rank are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tvmlite.dsl import relax
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.ops import make_call, sinfo_of
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.lowering.analysis.relax_util import remap, used_vars
from tvmlite.lowering.transform import Pass, is_external


@dataclass(frozen=True)
class DecomposeOpsForInference(Pass):
    name: str = "DecomposeOpsForInference"

    def run(self, mod: IRModule) -> IRModule:
        functions = {}
        changed = False
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function) and not is_external(func):
                new = _Decompose().visit_expr(func)
                changed = changed or new is not func
                func = new
            functions[gname] = func
        return mod.replace(functions=functions) if changed else mod


class _Decompose(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.items: dict[relax.Var, tuple[relax.Expr, ...]] = {}  # decomposed tuples
        self.defined: set[relax.Var] = set()  # vars of the block being visited
        self.ahead: list[relax.Binding] = []  # per-channel bindings for the block before it
        self.before: dict[int, relax.BindingBlock] = {}  # id(new block) -> its block before

    def visit_binding_block(self, block: relax.BindingBlock) -> relax.BindingBlock:
        outer = (self.defined, self.ahead)
        self.defined, self.ahead = set(), []
        try:
            new = super().visit_binding_block(block)
            if self.ahead:
                self.before[id(new)] = relax.BindingBlock(tuple(self.ahead), is_dataflow=True)
        finally:
            self.defined, self.ahead = outer
        return new

    def visit_SeqExpr(self, e: relax.SeqExpr) -> relax.Expr:
        new = super().visit_SeqExpr(e)
        assert isinstance(new, relax.SeqExpr)
        blocks = []
        for block in new.blocks:
            if id(block) in self.before:
                blocks.append(self.before.pop(id(block)))
            blocks.append(block)
        return new if len(blocks) == len(new.blocks) else replace(new, blocks=tuple(blocks))

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        item = b.value
        if isinstance(item, relax.TupleGetItem) and isinstance(b.var, relax.DataflowVar):
            tup = self.visit_expr(item.tuple_value)
            if isinstance(tup, relax.Var) and tup in self.items:
                self.var_remap[b.var] = self.items[tup][item.index]  # uses read the field
                return None
        new = super().visit_VarBinding(b)
        if not isinstance(new, relax.VarBinding):
            return new
        self.defined.add(new.var)
        fields = self._batch_norm(new.value)
        if fields is None:
            return new
        self.items[new.var] = fields
        return replace(new, value=relax.Tuple(fields))

    def visit_TupleGetItem(self, e: relax.TupleGetItem) -> relax.Expr:
        tup = self.visit_expr(e.tuple_value)
        if isinstance(tup, relax.Var) and tup in self.items:
            return self.items[tup][e.index]
        return e if tup is e.tuple_value else relax.TupleGetItem(tup, e.index, e.span)

    def _batch_norm(self, value: relax.Expr) -> tuple[relax.Expr, ...] | None:
        if not (isinstance(value, relax.Call) and isinstance(value.op, relax.Op)):
            return None
        if value.op.name != "relax.nn.batch_norm":
            return None
        attrs = dict(value.attrs)
        data, gamma, beta, mean, var = value.args
        sinfo = sinfo_of(data)
        if attrs.get("training") or not isinstance(sinfo, relax.TensorStructInfo):
            return None
        if sinfo.ndim < 1:
            return None
        axis = int(attrs.get("axis", 1)) % sinfo.ndim
        stats = (gamma, beta, mean, var)
        ahead = (
            self._scopes
            and self._scopes[-1][1]
            and not any(v in self.defined for s in stats for v in used_vars(s))
        )
        channel = _PerChannel(value.span, separate=bool(ahead))
        eps = relax.Constant(np.array(float(attrs.get("epsilon", 1e-5)), dtype=sinfo.dtype))
        scale = channel.op("relax.rsqrt", channel.op("relax.add", var, eps))
        if attrs.get("scale", True):
            scale = channel.op("relax.multiply", gamma, scale)
        shift = channel.op("relax.multiply", mean, scale)
        if attrs.get("center", True):
            shift = channel.op("relax.subtract", beta, shift)
        else:
            shift = channel.op("relax.negative", shift)
        trailing = list(range(1, sinfo.ndim - axis))  # (C,) -> (C, 1, ...) along `axis`
        if trailing:
            scale = channel.op("relax.expand_dims", scale, axis=trailing)
            shift = channel.op("relax.expand_dims", shift, axis=trailing)
        scale, shift = channel.results(scale, shift)
        for binding in channel.bindings:
            (self.ahead.append if ahead else self.emit_binding)(binding)
        scaled = self.emit(make_call("relax.multiply", [data, scale], {}, value.span), "lv")
        out = self.emit(make_call("relax.add", [scaled, shift], {}, value.span), "lv")
        return (out, mean, var)


class _PerChannel:
    """The per-channel bindings of one batch_norm. In a block of their own
    (`separate`), the two results are that block's outputs (plain vars), the
    rest dataflow vars."""

    def __init__(self, span: object, separate: bool) -> None:
        self.span = span
        self.separate = separate
        self.bindings: list[relax.VarBinding] = []

    def op(self, name: str, *args: relax.Expr, **kw: object) -> relax.Var:
        call = make_call(name, list(args), dict(kw), self.span)  # type: ignore[arg-type]
        var = relax.DataflowVar("lv", sinfo_of(call))
        self.bindings.append(relax.VarBinding(var, call))
        return var

    def results(self, *values: relax.Var) -> tuple[relax.Var, ...]:
        if not self.separate:
            return values
        outputs = {v: relax.Var(v.name, v.struct_info) for v in values}
        uses = {id(v): new for v, new in outputs.items()}
        self.bindings = [
            relax.VarBinding(outputs.get(b.var, b.var), remap(b.value, uses), b.span)
            for b in self.bindings
        ]
        return tuple(outputs[v] for v in values)
