"""PartitionForCompiler: cut operator chains an external compiler handles out of
dataflow blocks into module-level Relax functions tagged `Compiler=<name>`.

This pass owns the graph side of offloading (TVM's FuseOpsByPattern plus
MergeCompositeFunctions, reduced to chains). A pattern is a list of operator
names where each op consumes the previous one's result, e.g. `["relax.matmul",
"relax.add"]` (a matmul with a bias epilogue). Each match becomes a public
function with `Compiler` and `global_symbol` attributes and the block calls it.
Lifting, rather than keeping the group inline, is what lets every other pass
leave it alone by attribute (LegalizeOps, FuseOps and FuseTIR skip `Compiler`
functions), so the high-level operators survive until the target kind's
`relax_to_tir` hook lowers them; `lower_compiler_calls` is the helper such a
hook uses to replace the calls and drop the functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.lowering.analysis.relax_util import (
    FunctionTable,
    defined_tir_vars,
    remap,
    tir_vars,
    used_vars,
)
from tvmlite.lowering.transform import Pass, is_external

CheckFn = Callable[[tuple[relax.VarBinding, ...]], bool]


@dataclass(frozen=True)
class PartitionForCompiler(Pass):
    """`patterns`: chains of operator names, longest tried first; `check(bindings)`
    may refuse a match (unsupported dtype, shape or attribute)."""

    compiler: str
    patterns: tuple[tuple[str, ...], ...]
    check: CheckFn | None = None
    name: str = "PartitionForCompiler"

    def __init__(
        self,
        compiler: str,
        patterns: Sequence[Sequence[str] | str],
        check: CheckFn | None = None,
    ) -> None:
        chains = [(p,) if isinstance(p, str) else tuple(p) for p in patterns]
        if not compiler or not chains or not all(chains):
            raise TVMLiteError("PartitionForCompiler needs a compiler name and op-name chains")
        object.__setattr__(self, "compiler", compiler)
        object.__setattr__(self, "patterns", tuple(sorted(chains, key=len, reverse=True)))
        object.__setattr__(self, "check", check)
        object.__setattr__(self, "name", "PartitionForCompiler")

    def run(self, mod: IRModule) -> IRModule:
        table = FunctionTable(set(mod.functions))
        functions: dict[str, Any] = {}
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function) and not is_external(func):
                func = _Partitioner(self, table).rewrite(func)
            functions[gname] = func
        if not table.added:
            return mod
        added = {name: _public(f, self.compiler, name) for name, f in table.added.items()}
        return mod.with_functions({**added, **functions})


def _public(func: relax.Function, compiler: str, name: str) -> relax.Function:
    attrs = sorted((*func.attrs, ("Compiler", compiler), ("global_symbol", name)))
    return relax.Function(func.params, func.body, func.ret_struct_info, True, tuple(attrs))


def _op_name(value: relax.Expr) -> str | None:
    if isinstance(value, relax.Call) and isinstance(value.op, relax.Op):
        return value.op.name
    return None


class _Partitioner(ExprMutator):
    """Find chains in one function's dataflow blocks and replace them with calls."""

    def __init__(self, owner: PartitionForCompiler, table: FunctionTable) -> None:
        super().__init__()
        self.owner = owner
        self.table = table
        self.uses: dict[int, int] = {}

    def rewrite(self, func: relax.Function) -> relax.Function:
        for var in used_vars(func.body):
            self.uses[id(var)] = self.uses.get(id(var), 0) + 1
        return self.visit_expr(func)

    def visit_binding_block(self, block: relax.BindingBlock) -> relax.BindingBlock:
        """Chains are found inside dataflow blocks; the rest stays as it is."""
        return self._block(block) if block.is_dataflow else block

    def _block(self, block: relax.BindingBlock) -> relax.BindingBlock:
        bindings = list(block.bindings)
        consumers: dict[int, list[int]] = {}
        for i, b in enumerate(bindings):
            for var in used_vars(b.value):
                consumers.setdefault(id(var), []).append(i)
        taken: set[int] = set()
        replace: dict[int, relax.Binding] = {}
        for i, b in enumerate(bindings):
            if i in taken or not isinstance(b, relax.VarBinding):
                continue
            for pattern in self.owner.patterns:
                chain = self._match(bindings, i, pattern, consumers, taken)
                if chain is None:
                    continue
                call = self._lift([bindings[k] for k in chain])
                if call is None:
                    continue
                taken.update(chain)
                replace[chain[-1]] = relax.VarBinding(bindings[chain[-1]].var, call)
                break
        if not replace:
            return block
        out = [replace.get(i, b) for i, b in enumerate(bindings) if i not in taken or i in replace]
        return relax.BindingBlock(tuple(out), True, block.span)

    def _match(
        self,
        bindings: list[relax.Binding],
        start: int,
        pattern: tuple[str, ...],
        consumers: dict[int, list[int]],
        taken: set[int],
    ) -> list[int] | None:
        if _op_name(bindings[start].value) != pattern[0]:
            return None
        chain = [start]
        for op in pattern[1:]:
            var = bindings[chain[-1]].var
            users = consumers.get(id(var), [])
            # An inner result must be read once, by the next op, and not escape.
            if not isinstance(var, relax.DataflowVar) or self.uses.get(id(var)) != 1:
                return None
            if len(users) != 1 or users[0] in taken:
                return None
            nxt = bindings[users[0]]
            if not isinstance(nxt, relax.VarBinding) or _op_name(nxt.value) != op:
                return None
            if not any(a is var for a in nxt.value.args):  # type: ignore[union-attr]
                return None
            chain.append(users[0])
        matched = tuple(bindings[k] for k in chain)
        if self.owner.check is not None and not self.owner.check(matched):  # type: ignore[arg-type]
            return None
        return chain

    def _lift(self, chain: list[relax.Binding]) -> relax.Call | None:
        """The call of a new function computing `chain` (None if it cannot stand alone)."""
        inner = {id(b.var) for b in chain}
        arguments: list[relax.Expr] = []
        vmap: dict[int, relax.Expr] = {}

        def use(arg: relax.Expr) -> None:
            if isinstance(arg, relax.Tuple):
                for f in arg.fields:
                    use(f)
            elif isinstance(arg, relax.Var | relax.Constant) and id(arg) not in inner:
                if id(arg) not in vmap:
                    name = arg.name if isinstance(arg, relax.Var) else f"param_{len(arguments)}"
                    vmap[id(arg)] = relax.Var(name, _sinfo(arg))
                    arguments.append(arg)

        new_bindings: list[relax.Binding] = []
        for k, b in enumerate(chain):
            for arg in b.value.args:  # type: ignore[attr-defined]
                use(arg)
            cls = relax.Var if k == len(chain) - 1 else relax.DataflowVar
            var = cls(b.var.name, b.var.struct_info)
            new_bindings.append(relax.VarBinding(var, remap(b.value, vmap)))
            vmap[id(b.var)] = var
        params = tuple(vmap[id(a)] for a in arguments)
        out = new_bindings[-1].var
        defined = defined_tir_vars([p.struct_info for p in params])
        if any(v not in defined for v in tir_vars((tuple(new_bindings), out.struct_info))):
            return None  # a shape var no parameter defines: leave the chain in place
        block = relax.BindingBlock(tuple(new_bindings), is_dataflow=True)
        func = relax.Function(params, relax.SeqExpr((block,), out), out.struct_info, True, ())
        ops = "_".join(_op_name(b.value).removeprefix("relax.") for b in chain)  # type: ignore[union-attr]
        gname = self.table.add(f"{self.owner.compiler}_{ops}".replace(".", "_"), func)
        return relax.Call(relax.GlobalVar(gname), tuple(arguments))


def _sinfo(expr: relax.Expr) -> relax.StructInfo:
    from tvmlite.dsl.ops import sinfo_of

    return sinfo_of(expr)


# ------------------------------------------------------------ for relax_to_tir hooks

LowerCall = Callable[[relax.Function, tuple[relax.Expr, ...], relax.StructInfo], relax.Expr]


def compiler_of(func: relax.Function) -> str | None:
    """The codegen a graph function is for: its `Compiler` attribute (tvmlite's
    PartitionForCompiler), or `Codegen` (TVM's FuseOpsByPattern, as TVM prints it)."""
    name = func.attr("Compiler") or func.attr("Codegen")
    return str(name) if name else None


def compiler_functions(mod: IRModule, compiler: str) -> dict[str, relax.Function]:
    """The graph functions of `mod` tagged `Compiler=compiler` (or
    `Codegen=compiler`), by name."""
    return {
        name: f
        for name, f in mod.functions.items()
        if isinstance(f, relax.Function) and compiler_of(f) == compiler
    }


def lower_compiler_calls(mod: IRModule, compiler: str, lower: LowerCall) -> IRModule:
    """Replace every call of a `Compiler=compiler` function by `lower(function,
    args, result_sinfo)` (an expression in the caller's values, e.g. a
    `call_dps_packed` or `call_tir`) and drop those functions, as TVM's
    RunCodegen does."""
    targets = compiler_functions(mod, compiler)
    if not targets:
        return mod

    def rewrite(binding: relax.Binding) -> relax.Binding:
        value = binding.value
        if not (isinstance(value, relax.Call) and isinstance(value.op, relax.GlobalVar)):
            return binding
        func = targets.get(value.op.name)
        if func is None:
            return binding
        new = lower(func, value.args, binding.var.struct_info)
        return relax.VarBinding(binding.var, new, binding.span)

    functions = {
        name: map_bindings(f, rewrite) if isinstance(f, relax.Function) else f
        for name, f in mod.functions.items()
        if name not in targets
    }
    return mod.with_functions(functions)


def map_bindings(
    func: relax.Function, fn: Callable[[relax.Binding], relax.Binding]
) -> relax.Function:
    """`func` with every binding (in every block and branch) replaced by `fn(b)`."""
    body = _map_seq(func.body, fn)
    if body is func.body:
        return func
    return relax.Function(
        func.params, body, func.ret_struct_info, func.is_pure, func.attrs, func.span
    )


def _map_seq(seq: relax.SeqExpr, fn: Callable[[relax.Binding], relax.Binding]) -> relax.SeqExpr:
    blocks = []
    for block in seq.blocks:
        out = []
        for b in block.bindings:
            if isinstance(b.value, relax.If):
                t, f = _map_seq(b.value.true_branch, fn), _map_seq(b.value.false_branch, fn)
                if t is not b.value.true_branch or f is not b.value.false_branch:
                    b = relax.VarBinding(b.var, relax.If(b.value.condition, t, f), b.span)
            out.append(fn(b))
        same = all(x is y for x, y in zip(out, block.bindings, strict=True))
        blocks.append(block if same else relax.BindingBlock(tuple(out), block.is_dataflow))
    if all(x is y for x, y in zip(blocks, seq.blocks, strict=True)):
        return seq
    return relax.SeqExpr(tuple(blocks), seq.body, seq.span)
