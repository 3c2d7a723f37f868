"""`torch.cond` as TVM imports it: each branch graph becomes a function of the module
(`cond_true_branch_0`, `cond_false_branch_1`, ...), and the node a Relax `If` whose
arms call them with the operands. A predicate known when exporting picks one branch
(`cond_static_branch_N`)."""

from __future__ import annotations

from typing import Any

from torch import fx

from tvmlite.dsl import relax, tir
from tvmlite.frontend.context import Converting


def import_cond(conv: Converting, node: fx.Node) -> relax.Var:
    pred = conv.env[node.args[0]]
    true_graph = conv.env[node.args[1]]
    false_graph = conv.env[node.args[2]]
    operands = tuple(conv.env[n] for n in node.args[3])
    if isinstance(pred, bool):
        chosen = true_graph if pred else false_graph
        name = _branch(conv, chosen, operands, "cond_static_branch")
        return conv.emit(relax.Call(relax.GlobalVar(name), operands))
    true_name = _branch(conv, true_graph, operands, "cond_true_branch")
    false_name = _branch(conv, false_graph, operands, "cond_false_branch")
    arms = []
    for name in (true_name, false_name):
        call = relax.Call(relax.GlobalVar(name), operands)
        arms.append(conv.bb.scoped(call))
    return conv.emit(relax.If(pred, arms[0], arms[1]), name="cond_result")


def _branch(
    conv: Converting, graph_module: fx.GraphModule, operands: tuple[Any, ...], hint: str
) -> str:
    """The module function for one branch graph (imported once per graph)."""
    from tvmlite.frontend.exported_program import has_assert, translate_graph

    known = conv.branches.get(id(graph_module))
    if known is not None:
        return known
    name = f"{hint}_{len(conv.branches)}"
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    params = []
    for ph, operand in zip(placeholders, operands, strict=False):
        sinfo = conv.sinfo(operand) if isinstance(operand, relax.Expr) else None
        params.append(relax.Var(ph.name, _fresh_dims(sinfo)))
    saved = conv.env
    conv.env = {}
    try:
        for ph, param in zip(placeholders, params, strict=False):
            conv.env[ph] = param
        with conv.bb.function():
            outputs = translate_graph(conv, graph_module, {})
            if len(outputs) == 1:
                result: relax.Expr = conv.emit(outputs[0])
            else:
                result = relax.Tuple(tuple(conv.emit(o) for o in outputs))
            func = conv.bb.finish(name, params, result, {}, not has_assert(graph_module))
    finally:
        conv.env = saved
    conv.bb.add_function(name, func)
    conv.branches[id(graph_module)] = name
    return name


def _fresh_dims(sinfo: relax.StructInfo | None) -> relax.StructInfo:
    """The operand's struct info with its symbolic dims replaced by new vars of the
    same names: the branch is a function of its own."""
    if sinfo is None:
        return relax.ObjectStructInfo()
    if isinstance(sinfo, relax.TensorStructInfo) and isinstance(sinfo.shape, tuple):
        shape = tuple(
            tir.Var(d.name, d.dtype) if isinstance(d, tir.Var) else d for d in sinfo.shape
        )
        return relax.TensorStructInfo(shape, sinfo.dtype, sinfo.ndim, sinfo.vdevice)
    return sinfo
