"""FuseOps: group the `call_tir` bindings of dataflow blocks by fusion pattern and
lift each group into a private Relax function marked `Primitive`.

This pass owns the Relax side of fusion, as TVM's relax FuseOps does: it builds
one dataflow graph per function (edges carry the consumer's `op_pattern`, set by
AnnotateTIROpPattern; a kernel without one is opaque), partitions it with the
post-dominator algorithm of `lowering/analysis/graph_partition.py`, and rewrites
each dataflow block so that a group becomes one call of its lifted function.
Lifting (instead of inlining a closure) is what lets later passes leave fused
groups alone by attribute. FuseTIR then turns every lifted function into a
single kernel. Ordinary binding blocks are never touched: they may be impure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import CallTIR
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.ops import OpPatternKind as K
from tvmlite.dsl.ops import sinfo_of
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.lowering.analysis.graph_partition import (
    MAX_FUSED_OPS,
    Graph,
    GraphPartitioner,
    Group,
)
from tvmlite.lowering.analysis.relax_util import (
    FunctionTable,
    defined_tir_vars,
    remap,
    tir_vars,
    used_vars,
)
from tvmlite.lowering.transform import PRIMITIVE, Pass, PassContext, is_external

MAX_DEPTH_CONFIG = "relax.FuseOps.max_depth"


@dataclass(frozen=True)
class FuseOps(Pass):
    """`fuse_opt_level` -1 uses the PassContext's opt_level (0 fuses nothing);
    `max_depth` caps a group's size (default: PassContext config
    `relax.FuseOps.max_depth`, else 256)."""

    fuse_opt_level: int = -1
    max_depth: int | None = None
    name: str = "FuseOps"

    def run(self, mod: IRModule) -> IRModule:
        ctx = PassContext.current()
        level = ctx.opt_level if self.fuse_opt_level < 0 else self.fuse_opt_level
        if level == 0:
            return mod
        depth = self.max_depth or int(ctx.get(MAX_DEPTH_CONFIG, MAX_FUSED_OPS))
        table = FunctionTable(set(mod.functions))
        functions: dict[str, Any] = {}
        for gname, func in mod.functions.items():
            if isinstance(func, relax.Function) and not is_external(func):
                func = _FunctionFuser(mod, table, depth).rewrite(func)
            functions[gname] = func
        return mod.with_functions({**table.added, **functions})


def binding_pattern(mod: IRModule, value: relax.Expr) -> tuple[K, list[relax.Expr]]:
    """The pattern of a bound value and the leaves its edges come from."""
    if isinstance(value, relax.Call):
        view = CallTIR.of(value)
        kernel = view.kernel(mod.functions) if view is not None else None
        if view is not None and kernel is not None:
            pattern = kernel.attr("op_pattern")
            # A kernel for another target kind (a relax_to_tir hook's) stays its own:
            # fused, it would be compiled by LLVM.
            kind = K(int(pattern)) if pattern is not None else K.kOpaque
            if kernel.attr("target") is not None:
                kind = K.kOpaque
            return kind, list(view.args)
        return K.kOpaque, list(value.args)
    if isinstance(value, relax.TupleGetItem):
        return K.kInjective, [value.tuple_value]
    return K.kOpaque, list(used_vars(value))


def _flatten(leaves: list[relax.Expr]) -> list[relax.Var]:
    out: list[relax.Var] = []
    for leaf in leaves:
        if isinstance(leaf, relax.Tuple):
            out.extend(_flatten(list(leaf.fields)))
        elif isinstance(leaf, relax.Var):
            out.append(leaf)
    return out


def build_graph(mod: IRModule, func: relax.Function) -> Graph:
    """The dataflow graph of `func`'s top-level dataflow blocks (params and vars
    from elsewhere are opaque external nodes)."""
    graph = Graph()
    for param in func.params:
        graph.add(param, K.kOpaque, extern_ref=True)
    for block in func.body.blocks:
        if not block.is_dataflow:
            continue
        for binding in block.bindings:
            if isinstance(binding, relax.MatchCast):
                kind, leaves = K.kOpaque, list(used_vars(binding.value))
            else:
                kind, leaves = binding_pattern(mod, binding.value)
            sources = []
            for var in _flatten(leaves):
                node = graph.lookup(var) or graph.add(var, K.kOpaque, extern_ref=True)
                sources.append(node)
            extern = not isinstance(binding.var, relax.DataflowVar)
            node = graph.add(binding.var, kind, extern_ref=extern)
            for src in sources:
                src.outputs.append((node, kind))
    return graph


@dataclass
class GroupFunction:
    """The bindings of one group and what lifting them needs (TVM's FunctionCreator)."""

    bindings: list[relax.VarBinding] = field(default_factory=list)
    arguments: list[relax.Expr] = field(default_factory=list)
    params: list[relax.Var] = field(default_factory=list)
    outputs: list[relax.Var] = field(default_factory=list)
    name: str = "fused"
    defined: set[int] = field(default_factory=set)
    partial_tuples: dict[int, list[int]] = field(default_factory=dict)
    function: relax.Function | None = None

    def append(self, binding: relax.VarBinding) -> None:
        value = binding.value
        view = CallTIR.of(value)  # grouped bindings are kernel calls and tuple items
        if view is not None:
            self.name += "_" + view.callee.name
            for arg in view.args:
                self._use(arg)
        elif isinstance(value, relax.TupleGetItem):
            self._use(value.tuple_value)
            if id(value.tuple_value) in self.partial_tuples:
                self.partial_tuples[id(value.tuple_value)].append(value.index)
        self.defined.add(id(binding.var))
        if not isinstance(binding.var, relax.DataflowVar):
            self.add_output(binding.var)
        self.bindings.append(binding)

    def add_output(self, var: relax.Var) -> int:
        for i, out in enumerate(self.outputs):
            if out is var:
                return i
        self.outputs.append(var)
        return len(self.outputs) - 1

    def _use(self, arg: relax.Expr) -> None:
        if isinstance(arg, relax.Tuple):  # `(y,)[0]`: the fields are what is read
            for f in arg.fields:
                self._use(f)
            return
        if any(a is arg for a in self.arguments) or id(arg) in self.defined:
            return
        if not isinstance(arg, (relax.Var, relax.Constant)):
            return
        name = arg.name if isinstance(arg, relax.Var) else f"param_{len(self.arguments)}"
        sinfo = sinfo_of(arg)
        self.arguments.append(arg)
        self.params.append(relax.Var(name, sinfo))
        if isinstance(sinfo, relax.TupleStructInfo):
            self.partial_tuples[id(arg)] = []

    def create(self) -> None:
        """Build the lifted function (left None when nothing of the group is used)."""
        if not self.outputs:
            return
        vmap: dict[int, relax.Expr] = {
            id(a): p for a, p in zip(self.arguments, self.params, strict=True)
        }
        self._split_tuple_params(vmap)
        bindings: list[relax.Binding] = []
        for b in self.bindings:
            value = b.value
            if isinstance(value, relax.TupleGetItem) and id(value.tuple_value) in vmap:
                item = vmap.get(id(value.tuple_value), value.tuple_value)
                if isinstance(item, dict):  # a split tuple param: read the item param
                    vmap[id(b.var)] = item[value.index]
                    continue
            cls = relax.DataflowVar if all(o is not b.var for o in self.outputs) else relax.Var
            var = cls(b.var.name, b.var.struct_info)
            vmap[id(b.var)] = var
            bindings.append(relax.VarBinding(var, remap(value, _plain(vmap))))
        outs = [_plain(vmap)[id(o)] for o in self.outputs]
        body_expr: relax.Expr = outs[0] if len(outs) == 1 else relax.Tuple(tuple(outs))
        ret = (
            sinfo_of(outs[0])
            if len(outs) == 1
            else relax.TupleStructInfo(tuple(sinfo_of(o) for o in outs))
        )
        block = relax.BindingBlock(tuple(bindings), is_dataflow=True)
        free = self._free_tir_vars(bindings, ret)
        if free:
            self.params.append(relax.Var("tir_vars", relax.ShapeStructInfo(free, len(free))))
            self.arguments.append(relax.ShapeExpr(free))
        self.function = relax.Function(
            tuple(self.params),
            relax.SeqExpr((block,), body_expr),
            ret,
            True,
            ((PRIMITIVE, True),),
        )

    def _split_tuple_params(self, vmap: dict[int, Any]) -> None:
        """A tuple argument only read by item becomes one param per item read."""
        for tid, items in self.partial_tuples.items():
            if not items:
                continue
            idx = next(i for i, a in enumerate(self.arguments) if id(a) == tid)
            tuple_arg, param = self.arguments[idx], self.params[idx]
            fields = param.struct_info.fields  # type: ignore[attr-defined]
            item_args = [relax.TupleGetItem(tuple_arg, i) for i in items]
            item_params = [relax.Var(f"{param.name}_{i}", fields[i]) for i in items]
            self.arguments[idx : idx + 1] = item_args
            self.params[idx : idx + 1] = item_params
            vmap[tid] = dict(zip(items, item_params, strict=True))

    def _free_tir_vars(self, bindings: list[relax.Binding], ret: relax.StructInfo) -> tuple:
        defined = defined_tir_vars([p.struct_info for p in self.params])
        used = tir_vars((tuple(bindings), ret))
        return tuple(v for v in used if v not in defined)


def _plain(vmap: dict[int, Any]) -> dict[int, relax.Expr]:
    return {k: v for k, v in vmap.items() if not isinstance(v, dict)}


class _FunctionFuser(ExprMutator):
    """Partition one function and rewrite its dataflow blocks."""

    def __init__(self, mod: IRModule, table: FunctionTable, max_depth: int) -> None:
        super().__init__()
        self.mod = mod
        self.table = table
        self.max_depth = max_depth
        self.group_of: dict[int, Group] = {}

    def rewrite(self, func: relax.Function) -> relax.Function:
        graph = build_graph(self.mod, func)
        groups = GraphPartitioner(self.max_depth).partition(graph)
        if all(g.find_root() is g for g in groups):
            return func
        self.group_of = {id(n.ref): groups[n.index].find_root() for n in graph.post_dfs_order}
        return self.visit_expr(func)

    def visit_binding_block(self, block: relax.BindingBlock) -> relax.BindingBlock:
        """The graph covers the function's dataflow blocks; the rest stays as it is."""
        return self._block(block) if block.is_dataflow else block

    def _group(self, var: relax.Var) -> Group | None:
        return self.group_of.get(id(var))

    def _block(self, block: relax.BindingBlock) -> relax.BindingBlock:
        funcs: dict[int, GroupFunction] = {}
        for b in block.bindings:
            group = self._group(b.var)
            if group is not None and group.num_nodes > 1 and isinstance(b, relax.VarBinding):
                funcs.setdefault(id(group), GroupFunction()).append(b)
        if not funcs:
            return block
        deps = self._collect_boundary(block, funcs)
        for info in funcs.values():
            info.create()
        out: list[relax.Binding] = []
        for b in self._topo_sort(block, deps):
            group = self._group(b.var)
            info = funcs.get(id(group)) if group is not None else None
            if info is None:
                out.append(b)
                continue
            if info.function is None or info.bindings[-1] is not b:
                continue
            out.extend(self._emit_call(info, b))
        return relax.BindingBlock(tuple(out), True, block.span)

    def _collect_boundary(
        self, block: relax.BindingBlock, funcs: dict[int, GroupFunction]
    ) -> dict[int, list[Group]]:
        """Mark values read by other groups as outputs; record the dependencies of
        each group (or binding outside every group): on what produces the Relax
        vars it reads, and on what first defines the TIR vars it uses (a
        `match_cast` binding a data-dependent size, which a call's `out_sinfo`
        then reads)."""
        deps: dict[int, list[Any]] = {}
        defined_by: dict[tir.Var, Any] = {}
        for b in block.bindings:
            cur = self._group(b.var)
            item = cur if cur is not None else b
            for var in used_vars(b.value):
                producer = self._group(var)
                if producer is None or producer is cur:
                    continue
                deps.setdefault(id(item), []).append(producer)
                if id(producer) in funcs:
                    funcs[id(producer)].add_output(var)
            for var in tir_vars(b.value):
                definer = defined_by.get(var)
                if definer is not None and definer is not item:
                    deps.setdefault(id(item), []).append(definer)
            sinfo = b.struct_info if isinstance(b, relax.MatchCast) else b.var.struct_info
            for var in defined_tir_vars([sinfo]):
                defined_by.setdefault(var, item)
        return deps

    def _topo_sort(
        self, block: relax.BindingBlock, deps: dict[int, list[Group]]
    ) -> list[relax.Binding]:
        """Bindings ordered so each group comes after the groups it reads."""
        per_group: dict[int, list[relax.Binding]] = {}
        order: list[Group] = []
        for b in block.bindings:
            g = self._group(b.var)
            key = id(g) if g is not None else id(b)
            if key not in per_group:
                order.append(g if g is not None else b)  # type: ignore[arg-type]
            per_group.setdefault(key, []).append(b)
        visited: set[int] = set()
        out: list[relax.Binding] = []

        def visit(g: Any) -> None:
            stack: list[tuple[Any, bool]] = [(g, False)]
            while stack:
                item, done = stack.pop()
                if done:
                    out.extend(per_group.get(id(item), []))
                    continue
                if id(item) in visited:
                    continue
                visited.add(id(item))
                stack.append((item, True))
                stack.extend((d, False) for d in reversed(deps.get(id(item), [])))

        for g in order:
            visit(g)
        return out

    def _emit_call(self, info: GroupFunction, last: relax.VarBinding) -> list[relax.Binding]:
        assert info.function is not None
        name = self.table.add(info.name, info.function)
        call = relax.Call(relax.GlobalVar(name), tuple(info.arguments))
        if len(info.outputs) == 1:
            return [relax.VarBinding(info.outputs[0], call)]
        cls = relax.DataflowVar if isinstance(last.var, relax.DataflowVar) else relax.Var
        tuple_var = cls("lv", info.function.ret_struct_info)
        items = [
            relax.VarBinding(v, relax.TupleGetItem(tuple_var, i))
            for i, v in enumerate(info.outputs)
        ]
        return [relax.VarBinding(tuple_var, call), *items]


def group_members(func: relax.Function) -> list[str]:
    """Names of the kernels a lifted function calls, in order (for messages, tests)."""
    views = (CallTIR.of(b.value) for block in func.body.blocks for b in block.bindings)
    return [view.callee.name for view in views if view is not None]
