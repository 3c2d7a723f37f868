"""ElideMatmulBroadcast: the `R.broadcast_to` PyTorch's `matmul` puts before a
batched product, and the broadcasts that change nothing, go.

`x @ W` with `x` of shape (L, N, E) not contiguous (after a permute, as
`nn.MultiheadAttention` has it) decomposes in `torch.export` into
`expand(W, (L, E, F))` and `bmm`: in PyTorch the expand is a view (stride 0),
in Relax `broadcast_to` writes L copies of the weight. For torchvision's ViT
that is 197 copies of a 768 x 2304 weight, 1.4 GB written per call, two thirds
of the model's time. `R.matmul` broadcasts batch dims itself, so
`matmul(a, broadcast_to(b, s))` is `matmul(a, b)` when `broadcast_to` only adds
or stretches batch dims (the last two are `b`'s) and the product's batch shape
comes out the same; likewise for the first operand. A `broadcast_to` whose
shape is its input's is its input. The result is then a plain (or NT, for a
transposed weight: FuseTransposeMatmul runs after) product that the weight
packing folds at build time.

Shapes are compared as written: static dims, or the same symbolic expression.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.ops import shape_arith as sa
from tvmlite.dsl.ops import sinfo_of
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.lowering.transform import Pass, is_external


@dataclass(frozen=True)
class ElideMatmulBroadcast(Pass):
    name: str = "ElideMatmulBroadcast"

    def run(self, mod: IRModule) -> IRModule:
        functions = {
            name: _Rewriter().visit_expr(func)
            if isinstance(func, relax.Function) and not is_external(func)
            else func
            for name, func in mod.functions.items()
        }
        return mod.with_functions(functions)


def _shape(e: relax.Expr) -> tuple[tir.PrimExpr, ...] | None:
    sinfo = sinfo_of(e)
    if isinstance(sinfo, relax.TensorStructInfo) and isinstance(sinfo.shape, tuple):
        return sinfo.shape
    return None


def _same(a: tuple[tir.PrimExpr, ...], b: tuple[tir.PrimExpr, ...]) -> bool:
    return len(a) == len(b) and all(sa.same(x, y) for x, y in zip(a, b, strict=True))


def _is_one(d: tir.PrimExpr) -> bool:
    return isinstance(d, tir.IntImm) and d.value == 1


def _batch(a: tuple[tir.PrimExpr, ...], b: tuple[tir.PrimExpr, ...]) -> list | None:
    """The broadcast of two batch shapes (numpy's rule), None when it is not
    decided by the text."""
    out: list[tir.PrimExpr] = []
    for k in range(1, max(len(a), len(b)) + 1):
        x = a[-k] if k <= len(a) else None
        y = b[-k] if k <= len(b) else None
        if x is None or (y is not None and _is_one(x)):
            out.append(y)  # type: ignore[arg-type]
        elif y is None or _is_one(y) or sa.same(x, y):
            out.append(x)
        else:
            return None
    return out[::-1]


class _Rewriter(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.broadcasts: dict[relax.Var, relax.Expr] = {}  # var -> what it broadcasts

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        new = super().visit_VarBinding(b)
        if not isinstance(new, relax.VarBinding) or not isinstance(new.value, relax.Call):
            return new
        call = new.value
        if not isinstance(call.op, relax.Op):
            return new
        if call.op.name == "relax.broadcast_to":
            source = call.args[0]
            into, shape = _shape(source), _shape(new.var)
            if into is not None and shape is not None and _same(into, shape):
                return replace(new, value=source)
            self.broadcasts[new.var] = source
        elif call.op.name == "relax.matmul" and len(call.args) == 2:
            args = self._unbroadcast(call.args)
            if args is not None:
                return replace(new, value=replace(call, args=args))
        return new

    def _unbroadcast(self, args: tuple[relax.Expr, ...]) -> tuple[relax.Expr, ...] | None:
        """The operands with a batch-only broadcast read from its source, when the
        product keeps its shape; None when nothing changes."""
        out, changed = list(args), False
        for k in (0, 1):
            source = self.broadcasts.get(args[k])  # type: ignore[arg-type]
            if source is None:
                continue
            trial = [*out]
            trial[k] = source
            shapes = [_shape(x) for x in (*out, *trial)]
            if any(s is None or len(s) < 2 for s in shapes):
                continue
            a, b, ta, tb = shapes  # type: ignore[misc]
            if not _same(shapes[2 + k][-2:], shapes[k][-2:]):
                continue  # the broadcast stretches a matrix dim
            before, after = _batch(a[:-2], b[:-2]), _batch(ta[:-2], tb[:-2])
            if before is None or after is None or not _same(tuple(before), tuple(after)):
                continue
            out, changed = trial, True
        return tuple(out) if changed else None
