"""The TIR visitor and mutator: every node class has a method, every field is
visited, renaming reaches every place a var or buffer appears, an identity
mutation returns the very same objects, and deep expressions do not recurse
past Python's limit."""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest

import tvmlite
from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.tir_functor import EXPR_NODES, STMT_NODES, StmtExprVisitor, TIRFunctor
from tvmlite.dsl.tir_mutator import StmtExprMutator
from tvmlite.dsl.walk import walk

GOLDEN = Path(__file__).parents[1] / "golden" / "corpus"


def _node_classes(base: type) -> list[type]:
    """Every concrete node class of dsl/tir.py deriving from `base`."""
    return [
        cls
        for _, cls in inspect.getmembers(tir, inspect.isclass)
        if issubclass(cls, base) and cls is not base and cls.__module__ == tir.__name__
    ]


@pytest.mark.parametrize("base, table", [(tir.PrimExpr, EXPR_NODES), (tir.Stmt, STMT_NODES)])
def test_every_node_class_is_dispatched(base: type, table: tuple[type, ...]) -> None:
    classes = _node_classes(base)
    assert classes
    assert set(classes) == set(table), "a node class of dsl/tir.py is missing from the functors"
    for functor in (StmtExprVisitor, StmtExprMutator):
        for cls in classes:
            assert hasattr(functor, f"visit_{cls.__name__}"), (functor, cls)


# ---------------------------------------------------------------- sample nodes


class _Sampler:
    """Builds an instance of any TIR node with a fresh marker var in every place
    that can hold one, so a walk that skips a field misses a marker."""

    def __init__(self) -> None:
        self.markers: list[tir.Var] = []

    def var(self, dtype: str = "int32") -> tir.Var:
        v = tir.Var(f"m{len(self.markers)}", dtype)
        self.markers.append(v)
        return v

    def buffer(self) -> tir.Buffer:
        return tir.Buffer(
            "B", self.var("handle"), "float32", (self.var(),), (self.var(),), self.var()
        )

    def value(self, hint: Any) -> Any:
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin in (typing.Union, types.UnionType):
            if tir.PrimExpr in args:  # `str | PrimExpr` (assert message parts): the var
                return self.value(tir.PrimExpr)
            return self.value(next(a for a in args if a is not type(None)))
        if origin is tuple:
            if args and args[-1] is Ellipsis:
                if args[0] == tuple[str, Any]:  # annotations: an expression and a buffer
                    return (("e", self.var()), ("b", (self.buffer(), self.var())))
                return (self.value(args[0]), self.value(args[0]))
            return tuple(self.value(a) for a in args)
        if hint is Any:
            return self.var()
        if hint is str:
            return "add"
        if hint is int:
            return 2
        if hint is float:
            return 0.5
        if hint is bool:
            return True
        if hint is tir.Buffer:
            return self.buffer()
        if hint in (tir.PrimExpr, tir.Var):
            return self.var()
        if hint is tir.Stmt:
            return tir.Evaluate(self.var())
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self.node(hint)
        raise AssertionError(f"no sample for {hint}")

    def node(self, cls: type) -> Any:
        kwargs = {
            f.name: self.value(_annotation(f.type))
            for f in dataclasses.fields(cls)
            if f.compare  # not the span, nor the comments: no IR there
        }
        if cls is tir.Call:
            kwargs["op"] = "exp"
        return cls(**kwargs)


def _annotation(text: str) -> Any:
    """A field's annotation (a string: dsl/tir.py postpones them) as a type."""
    return eval(text, {**vars(tir), "Any": Any})  # our own source, not user input


class _Seen(StmtExprVisitor):
    def __init__(self) -> None:
        self.seen: set[tir.Var] = set()

    def visit_Var(self, e: tir.Var) -> None:
        self.seen.add(e)

    def visit_var_def(self, var: tir.Var) -> None:
        self.seen.add(var)


class _Rename(StmtExprMutator):
    """Renames every definition and (through `var_remap`) every free var."""

    def visit_var_def(self, var: tir.Var) -> tir.Var:
        return tir.Var(var.name + "_new", var.dtype)


def _vars_anywhere(node: Any) -> set[tir.Var]:
    return {n for n in walk(node) if isinstance(n, tir.Var)}


@pytest.mark.parametrize("cls", [*EXPR_NODES, *STMT_NODES], ids=lambda c: c.__name__)
def test_visitor_sees_every_field(cls: type) -> None:
    sampler = _Sampler()
    node = sampler.node(cls)
    visitor = _Seen()
    (visitor.visit_expr if cls in EXPR_NODES else visitor.visit_stmt)(node)
    missed = set(sampler.markers) - visitor.seen
    assert not missed, f"{cls.__name__}: {sorted(v.name for v in missed)} not visited"


@pytest.mark.parametrize("cls", [*EXPR_NODES, *STMT_NODES], ids=lambda c: c.__name__)
def test_mutator_rewrites_every_field(cls: type) -> None:
    sampler = _Sampler()
    node = sampler.node(cls)
    mutator = _Rename()
    mutator.var_remap.update({m: tir.Var(m.name + "_new", m.dtype) for m in sampler.markers})
    out = (mutator.visit_expr if cls in EXPR_NODES else mutator.visit_stmt)(node)
    left = set(sampler.markers) & _vars_anywhere(out)
    assert not left, f"{cls.__name__}: {sorted(v.name for v in left)} survived"
    assert type(out) is cls


def test_prim_func_params_and_buffer_map_are_visited() -> None:
    sampler = _Sampler()
    handle = sampler.var("handle")
    n = sampler.var()
    buf = tir.Buffer("A", sampler.var("handle"), "float32", (n,))
    func = tir.PrimFunc((handle, n), ((handle, buf),), tir.Evaluate(tir.IntImm("int32", 0)))
    visitor = _Seen()
    visitor.visit_prim_func(func)
    assert set(sampler.markers) <= visitor.seen
    out = _Rename().visit_prim_func(func)
    assert not set(sampler.markers) & _vars_anywhere(out)
    ((new_handle, new_buf),) = out.buffer_map
    assert new_handle is out.params[0] and new_buf.shape == (out.params[1],)


# ---------------------------------------------------------------- renaming


BLOCKS = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
    T.func_attr({"tir.noalias": True})
    with T.block("root"):
        T.reads(A[0:16, 0:16])
        T.writes(C[0:16])
        S = T.alloc_buffer((16,), "float32")
        for i, k in T.grid(16, 16):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(S[vi])
                T.block_attr({"layout_free_placeholders": [A]})
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]
        for i in range(16):
            with T.block("copy"):
                vi = T.axis.spatial(16, i)
                T.reads(S[vi])
                T.writes(C[vi])
                V = T.match_buffer(S[vi], (1,))
                C[vi] = V[0]
"""


def _buffers_anywhere(node: Any) -> set[tir.Buffer]:
    return {n for n in walk(node) if isinstance(n, tir.Buffer)}


@pytest.mark.parametrize("name", ["A", "S"])
def test_replacing_a_buffer_leaves_no_trace_of_it(name: str) -> None:
    func = tvmlite.parse(BLOCKS)
    old = next(b for b in _buffers_anywhere(func) if b.name == name)
    new = dataclasses.replace(old, name=name + "2")
    mutator = StmtExprMutator()
    mutator.buffer_remap[old] = new
    out = mutator.visit_prim_func(func)
    found = _buffers_anywhere(out)
    assert old not in found and new in found
    text = out.script()
    assert f"{name}2[" in text and f"T.reads({name}[" not in text


def test_substituting_a_shape_var_gives_one_new_buffer_everywhere() -> None:
    func = tvmlite.parse(
        """
@T.prim_func
def main(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,))
    for i in range(n):
        with T.block("b"):
            vi = T.axis.spatial(n, i)
            T.reads(A[vi])
            T.writes(A[vi])
            A[vi] = A[vi] + T.float32(1)
"""
    )
    n = func.params[1]
    mutator = StmtExprMutator()
    mutator.var_remap[n] = tir.IntImm("int32", 8)
    out = mutator.visit_prim_func(func)
    buffers = _buffers_anywhere(out)
    assert len(buffers) == 1
    (buffer,) = buffers
    assert buffer.shape == (tir.IntImm("int32", 8),)
    assert n not in _vars_anywhere(out.body)


def test_renamed_definitions_are_followed_by_their_uses() -> None:
    func = tvmlite.parse(BLOCKS)
    out = _Rename().visit_prim_func(func)
    defined = {n for n in walk(out) if isinstance(n, tir.Var) and n.name.endswith("_new")}
    assert defined
    old_vars = _vars_anywhere(func)
    assert not old_vars & _vars_anywhere(out)
    tvmlite.parse(out.script())  # still well-formed: every use sees its definition


def _corpus_functions() -> list[tuple[str, tir.PrimFunc]]:
    out = []
    for path in sorted(GOLDEN.glob("*.tvms")):
        mod = tvmlite.parse(path.read_text(), str(path))
        functions = mod.functions.items() if isinstance(mod, IRModule) else [("main", mod)]
        out.extend((f"{path.stem}:{k}", f) for k, f in functions if isinstance(f, tir.PrimFunc))
    return out


def test_identity_mutation_returns_the_same_objects() -> None:
    functions = _corpus_functions()
    assert len(functions) > 50
    for name, func in functions:
        assert StmtExprMutator().visit_prim_func(func) is func, name


def test_a_functor_without_a_method_names_the_node() -> None:
    class OnlyVars(TIRFunctor):
        def visit_Var(self, e: tir.Var) -> str:
            return e.name

    functor = OnlyVars()
    assert functor.visit_expr(tir.Var("x", "int32")) == "x"
    with pytest.raises(TVMLiteError, match="OnlyVars cannot handle a IntImm"):
        functor.visit_expr(tir.IntImm("int32", 1))


def test_a_block_must_stay_a_block() -> None:
    class Unblock(StmtExprMutator):
        def visit_Block(self, s: tir.Block) -> tir.Stmt:
            return s.body

    func = tvmlite.parse(BLOCKS)
    with pytest.raises(TVMLiteError, match="turned block 'root' into a"):
        Unblock().visit_prim_func(func)


# ---------------------------------------------------------------- depth


def nesting_budget() -> int:
    """Levels of nesting the functors must take from here: two Python frames a
    level, as the old lowering mutator used (standalone, at Python's default
    limit of 1000 frames, about 490 levels: what the parser accepts)."""
    return (sys.getrecursionlimit() - len(inspect.stack()) - 20) // 2


def _deep(depth: int) -> tuple[tir.Var, tir.PrimExpr]:
    x = tir.Var("x", "int32")
    e: tir.PrimExpr = x
    for _ in range(depth):
        e = tir.BinaryOp("add", e, tir.IntImm("int32", 1), "int32")
    return x, e


def test_deep_expressions_do_not_hit_the_recursion_limit() -> None:
    x, e = _deep(nesting_budget())
    seen = _Seen()
    seen.visit_expr(e)
    assert x in seen.seen
    mutator = StmtExprMutator()
    assert mutator.visit_expr(e) is e
    mutator.var_remap[x] = tir.Var("y", "int32")
    assert mutator.visit_expr(e) is not e
