"""The Relax visitor and mutator: every node class has a method, every field is
visited, definitions are told apart from uses, an identity mutation returns the
same objects, and the emitter puts new bindings where a pass expects them."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given

import tvmlite
from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.analysis import free_vars, substitute
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_functor import (
    BINDING_NODES,
    EXPR_NODES,
    STRUCT_INFO_NODES,
    ExprVisitor,
)
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.walk import walk
from tvmlite.lowering.analysis.relax_util import remap
from tvmlite.testing import strategies as tst

GOLDEN = Path(__file__).parents[1] / "golden" / "corpus"
TENSOR = relax.TensorStructInfo((tir.IntImm("int64", 4),), "float32", 1)


def _classes(base: type) -> set[type]:
    return {
        cls
        for _, cls in inspect.getmembers(relax, inspect.isclass)
        if issubclass(cls, base) and cls is not base and cls.__module__ == relax.__name__
    }


def test_every_node_class_is_dispatched() -> None:
    assert _classes(relax.Expr) == set(EXPR_NODES)
    assert _classes(relax.StructInfo) == set(STRUCT_INFO_NODES)
    assert set(typing.get_args(relax.Binding)) == set(BINDING_NODES)
    for functor in (ExprVisitor, ExprMutator):
        for cls in (*EXPR_NODES, *STRUCT_INFO_NODES, *BINDING_NODES):
            assert hasattr(functor, f"visit_{cls.__name__}"), (functor, cls)


# ---------------------------------------------------------------- sample nodes


class _Sampler:
    """Any Relax node with a fresh marker in every place that can hold one: a
    Relax var where an expression goes, a TIR var where a TIR expression goes."""

    def __init__(self) -> None:
        self.markers: list[relax.Var | tir.Var] = []

    def var(self) -> relax.Var:
        v = relax.Var(f"r{len(self.markers)}", relax.ObjectStructInfo())
        self.markers.append(v)
        return v

    def dim(self) -> tir.Var:
        v = tir.Var(f"t{len(self.markers)}", "int64")
        self.markers.append(v)
        return v

    def seq(self) -> relax.SeqExpr:
        return self.node(relax.SeqExpr)

    def value(self, hint: Any) -> Any:
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin in (typing.Union, types.UnionType):
            options = [a for a in args if a is not type(None)]
            if relax.Var in options:  # a tensor's shape: a var or dims
                return self.var()
            return self.value(options[0])
        if origin is tuple:
            if args and args[-1] is Ellipsis:
                if args[0] == tuple[str, Any]:  # call attributes
                    return (("a", self.dim()), ("b", (1, self.dim())))
                return (self.value(args[0]), self.value(args[0]))
            return tuple(self.value(a) for a in args)
        if hint is relax.Binding:
            return relax.VarBinding(self.var(), self.var())
        if hint is str:
            return "x"
        if hint in (int, bool):
            return 1
        if hint is np.ndarray:
            return np.zeros(2, "float32")
        if hint in (tir.PrimExpr, tir.Var):
            return self.dim()
        if hint in (relax.Expr, relax.Var):
            return self.var()
        if hint is relax.SeqExpr:
            return self.seq()
        if hint is relax.StructInfo:
            return relax.TensorStructInfo((self.dim(),), "float32", 1)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self.node(hint)
        raise AssertionError(f"no sample for {hint}")

    def node(self, cls: type) -> Any:
        namespace = {**vars(relax), "Any": Any}
        kwargs = {
            f.name: self.value(eval(f.type, namespace))  # our own source, not user input
            for f in dataclasses.fields(cls)
            if f.compare  # not the span, nor the comments: no IR there
        }
        return cls(**kwargs)


class _Seen(ExprVisitor):
    def __init__(self) -> None:
        self.uses: set[Any] = set()
        self.defs: set[relax.Var] = set()

    def visit_Var(self, e: relax.Var) -> None:
        self.uses.add(e)

    def visit_var_def(self, var: relax.Var) -> None:
        self.defs.add(var)
        super().visit_var_def(var)

    def visit_prim_expr(self, e: tir.PrimExpr) -> None:
        self.uses.update(free_vars(e))


class _Rename(ExprMutator):
    """Renames every definition; TIR markers are substituted where they appear."""

    def __init__(self, tir_map: dict[tir.Var, tir.PrimExpr]) -> None:
        super().__init__()
        self.tir_map = tir_map

    def visit_var_def(self, var: relax.Var) -> relax.Var:
        return type(var)(var.name + "_new", self.visit_struct_info(var.struct_info))

    def visit_prim_expr(self, e: tir.PrimExpr) -> tir.PrimExpr:
        return substitute(e, self.tir_map)


ALL = [*EXPR_NODES, *STRUCT_INFO_NODES, *BINDING_NODES]


def _visit(functor: Any, node: Any) -> Any:
    if isinstance(node, relax.Expr):
        return functor.visit_expr(node)
    if isinstance(node, relax.StructInfo):
        return functor.visit_struct_info(node)
    return functor.visit_binding(node)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_visitor_sees_every_field(cls: type) -> None:
    sampler = _Sampler()
    node = sampler.node(cls)
    seen = _Seen()
    _visit(seen, node)
    if cls in (relax.Var, relax.DataflowVar):
        assert seen.uses == {node} and not seen.defs  # a use: its struct info is its def's
        return
    missed = set(sampler.markers) - seen.uses - seen.defs
    assert not missed, f"{cls.__name__}: {sorted(m.name for m in missed)} not visited"


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_mutator_rewrites_every_field(cls: type) -> None:
    if cls in (relax.Var, relax.DataflowVar):
        return  # covered by the remapping test below
    sampler = _Sampler()
    node = sampler.node(cls)
    tir_map = {
        m: tir.Var(m.name + "_new", "int64") for m in sampler.markers if isinstance(m, tir.Var)
    }
    mutator = _Rename(tir_map)
    for m in sampler.markers:
        if isinstance(m, relax.Var):
            mutator.var_remap[m] = relax.Var(m.name + "_new", m.struct_info)
    out = _visit(mutator, node)
    left = set(sampler.markers) & {n for n in walk(out) if isinstance(n, relax.Var | tir.Var)}
    assert not left, f"{cls.__name__}: {sorted(m.name for m in left)} survived"
    assert type(out) is cls


def test_uses_follow_a_renamed_definition() -> None:
    x = relax.Var("x", TENSOR)
    y = relax.Var("y", TENSOR)
    add = relax.Call(relax.Op("relax.add"), (x, x))
    body = relax.SeqExpr((relax.BindingBlock((relax.VarBinding(y, add),)),), y)
    func = relax.Function((x,), body, TENSOR)

    class Fresh(ExprMutator):
        def visit_var_def(self, var: relax.Var) -> relax.Var:
            return relax.Var(var.name, var.struct_info)

    out = Fresh().visit_expr(func)
    (new_x,) = out.params
    (binding,) = out.body.blocks[0].bindings
    assert new_x is not x and binding.value.args == (new_x, new_x)
    assert out.body.body is binding.var and binding.var is not y


# ---------------------------------------------------------------- identity


def _corpus_functions() -> list[tuple[str, relax.Function]]:
    out = []
    for path in sorted(GOLDEN.glob("*.tvms")):
        mod = tvmlite.parse(path.read_text(), str(path))
        functions = mod.functions.items() if isinstance(mod, IRModule) else [("main", mod)]
        out.extend((f"{path.stem}:{k}", f) for k, f in functions if isinstance(f, relax.Function))
    return out


def test_identity_mutation_returns_the_same_objects() -> None:
    functions = _corpus_functions()
    assert len(functions) > 30
    for name, func in functions:
        assert ExprMutator().visit_expr(func) is func, name


@given(tst.relax_functions())
def test_identity_mutation_of_generated_functions(func: relax.Function) -> None:
    assert ExprMutator().visit_expr(func) is func


def test_a_functor_without_a_method_names_the_node() -> None:
    class NoTuples(ExprVisitor):
        visit_Tuple = None  # type: ignore[assignment]

    with pytest.raises(TVMLiteError, match="NoTuples cannot handle a Tuple"):
        NoTuples().visit_expr(relax.Tuple(()))


# ---------------------------------------------------------------- emitting


MODULE = """
@R.function
def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
    with R.dataflow():
        a = R.add(x, y)
        b = R.add(a, y)
        R.output(b)
    c = R.add(b, x)
    return c
"""


class _SplitAdds(ExprMutator):
    """`z = R.add(p, q)` becomes `t = R.multiply(p, q); z = R.add(t, q)`."""

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        b = super().visit_VarBinding(b)
        call = b.value
        if isinstance(call, relax.Call) and call.op == relax.Op("relax.add"):
            p, q = call.args
            t = self.emit(relax.Call(relax.Op("relax.multiply"), (p, q)), "t")
            return relax.VarBinding(b.var, relax.Call(call.op, (t, q)))
        return b


def test_emitted_bindings_come_before_the_binding_being_visited() -> None:
    func = tvmlite.parse(MODULE)
    out = _SplitAdds().visit_expr(func)
    dataflow, plain = out.body.blocks
    assert [b.var.name for b in dataflow.bindings] == ["t", "a", "t", "b"]
    assert [b.var.name for b in plain.bindings] == ["t", "c"]
    assert all(isinstance(b.var, relax.DataflowVar) for b in dataflow.bindings[:3])
    assert type(plain.bindings[0].var) is relax.Var  # outside dataflow: a plain var
    t0, a = dataflow.bindings[:2]
    assert a.value.args[0] is t0.var and t0.var.struct_info == a.var.struct_info
    tvmlite.parse(out.script())  # well-formed: every var defined before it is used


def test_emitting_in_a_sequence_body_adds_a_block() -> None:
    func = tvmlite.parse(MODULE)

    class WrapResult(ExprMutator):
        def visit_Var(self, e: relax.Var) -> relax.Expr:
            if e.name == "c":  # only used as the function's result
                return self.emit(relax.Call(relax.Op("relax.negative"), (e,)), "neg")
            return super().visit_Var(e)

    out = WrapResult().visit_expr(func)
    last = out.body.blocks[-1]
    assert [b.var.name for b in last.bindings] == ["neg"] and not last.is_dataflow
    assert out.body.body is last.bindings[0].var


def test_emit_outside_a_block_is_an_error() -> None:
    with pytest.raises(TVMLiteError, match="emit outside a binding block"):
        ExprMutator().emit(relax.Tuple(()), "t")


def test_a_dropped_binding_disappears() -> None:
    func = tvmlite.parse(MODULE)

    class DropB(ExprMutator):
        def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
            if b.var.name == "b":
                self.var_remap[b.var] = self.visit_expr(b.value.args[0])
                return None
            return super().visit_VarBinding(b)

    out = DropB().visit_expr(func)
    assert [b.var.name for b in out.body.blocks[0].bindings] == ["a"]
    (c,) = out.body.blocks[1].bindings
    assert c.value.args[0] is out.body.blocks[0].bindings[0].var


# ---------------------------------------------------------------- remap


def test_remap_reaches_into_branches_and_sequences() -> None:
    x = relax.Var("x", TENSOR)
    z = relax.Var("z", TENSOR)
    cond = relax.Var("cond", relax.PrimStructInfo("bool"))
    inner = relax.Var("inner", TENSOR)
    branch = relax.SeqExpr(
        (relax.BindingBlock((relax.VarBinding(inner, relax.Call(relax.Op("relax.exp"), (x,))),)),),
        inner,
    )
    expr = relax.If(cond, branch, relax.SeqExpr((), x))
    out = remap(expr, {id(x): z})
    (binding,) = out.true_branch.blocks[0].bindings
    assert binding.value.args == (z,) and out.false_branch.body is z


def test_remap_reaches_tir_vars_in_shape_and_prim_values() -> None:
    """TIR vars mapped by id are replaced in `R.shape`, `R.prim_value` and struct
    info, inside branches too (remap once saw only the Relax vars of calls)."""
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    cond = relax.Var("cond", relax.PrimStructInfo("bool"))
    shape = relax.ShapeExpr((n, tir.BinaryOp("mul", n, tir.IntImm("int64", 2), "int64")))
    inner = relax.Var("s", relax.ShapeStructInfo((n,), 1))
    branch = relax.SeqExpr(
        (relax.BindingBlock((relax.VarBinding(inner, relax.ShapeExpr((n,))),)),),
        relax.Tuple((shape, relax.PrimValue(n), inner)),
    )
    expr = relax.If(cond, branch, relax.SeqExpr((), relax.Tuple((shape, relax.PrimValue(m)))))
    out = remap(expr, {id(n): m})
    new_shape, value, var = out.true_branch.body.fields
    assert new_shape.values[0] is m and free_vars(new_shape.values[1]) == [m]
    assert value.value is m
    (binding,) = out.true_branch.blocks[0].bindings
    assert binding.value.values == (m,) and binding.var.struct_info.values == (m,)
    assert var is binding.var  # the use follows the redefined var
    assert remap(expr, {}) is expr
