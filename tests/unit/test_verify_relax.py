"""The Relax verifier (on the Relax visitor): scope rules, dataflow rules, call
rules and the return annotation, in nested branches and nested functions too."""

from __future__ import annotations

import pytest

from tvmlite.diagnostics import VerifyError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.verify.relax import verify_function, verify_module

TENSOR = relax.TensorStructInfo((tir.IntImm("int64", 4),), "float32", 1)
FUNC = relax.FuncStructInfo((TENSOR,), TENSOR)
EXP = relax.Op("relax.exp")


def var(name: str, sinfo: relax.StructInfo = TENSOR) -> relax.Var:
    return relax.Var(name, sinfo)


def function(params: tuple[relax.Var, ...], *blocks: relax.BindingBlock, body: relax.Expr):
    return relax.Function(params, relax.SeqExpr(blocks, body), TENSOR, True, ())


def block(*bindings: relax.Binding, dataflow: bool = False) -> relax.BindingBlock:
    return relax.BindingBlock(bindings, dataflow)


def exp(target: relax.Var, arg: relax.Expr) -> relax.VarBinding:
    return relax.VarBinding(target, relax.Call(EXP, (arg,)))


def test_a_well_formed_function_passes() -> None:
    x, y, z = var("x"), relax.DataflowVar("y", TENSOR), var("z")
    f = function((x,), block(exp(y, x), exp(z, y), dataflow=True), body=z)
    verify_function(f)


def test_undefined_var() -> None:
    x, ghost, y = var("x"), var("ghost"), var("y")
    f = function((x,), block(exp(y, ghost)), body=y)
    with pytest.raises(VerifyError, match="ghost is used but nothing binds it"):
        verify_function(f)


def test_dataflow_var_used_after_its_block() -> None:
    x, y = var("x"), relax.DataflowVar("y", TENSOR)
    f = function((x,), block(exp(y, x), dataflow=True), body=y)
    with pytest.raises(VerifyError, match="dataflow variable y is used outside its dataflow block"):
        verify_function(f)


def test_dataflow_var_bound_outside_a_dataflow_block() -> None:
    x, y = var("x"), relax.DataflowVar("y", TENSOR)
    f = function((x,), block(exp(y, x)), body=y)
    with pytest.raises(VerifyError, match="dataflow variable y is bound outside a dataflow"):
        verify_function(f)


def test_branch_scopes_end_with_the_branch() -> None:
    x, cond, inner, out = var("x"), var("c", relax.PrimStructInfo("bool")), var("t"), var("o")
    branch = relax.SeqExpr((block(exp(inner, x)),), inner)
    choose = relax.VarBinding(out, relax.If(cond, branch, relax.SeqExpr((), x)))
    verify_function(function((x, cond), block(choose), body=out))
    leak = function((x, cond), block(choose), body=inner)
    with pytest.raises(VerifyError, match="t is used outside the scope that defines it"):
        verify_function(leak)


def test_nested_function_bodies_are_checked() -> None:
    """A closure's body once went unchecked: an undefined var there passed."""
    x, y, ghost, f = var("x"), var("y"), var("ghost"), var("f", FUNC)
    inner = function((y,), body=ghost)
    outer = function((x,), block(relax.VarBinding(f, inner)), body=x)
    with pytest.raises(VerifyError, match="ghost is used but nothing binds it"):
        verify_function(outer)
    closure = function((y,), body=x)  # reads the outer parameter: in scope
    verify_function(function((x,), block(relax.VarBinding(f, closure)), body=x))


def test_call_rules_against_the_module() -> None:
    x, y = var("x"), var("y")
    callee = function((x,), body=x)
    call_tir = relax.Call(
        relax.Op("relax.call_tir"), (relax.GlobalVar("callee"), relax.Tuple((x,))), (), (TENSOR,)
    )
    main = function((x,), block(relax.VarBinding(y, call_tir)), body=y)
    with pytest.raises(VerifyError, match="R.call_tir calls callee, which is not a prim function"):
        verify_module(IRModule({"callee": callee, "main": main}))
    wrong = relax.Call(relax.GlobalVar("callee"), (x, x))
    main = function((x,), block(relax.VarBinding(y, wrong)), body=y)
    with pytest.raises(VerifyError, match="callee takes 1 arguments but 2 were given"):
        verify_module(IRModule({"callee": callee, "main": main}))


def test_return_annotation() -> None:
    x = var("x")
    f = relax.Function((x,), relax.SeqExpr((), x), relax.PrimStructInfo("int64"), True, ())
    with pytest.raises(VerifyError, match="the function returns R.Tensor"):
        verify_function(f)
