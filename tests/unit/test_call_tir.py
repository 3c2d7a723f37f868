"""The one view of `R.call_tir` (dsl/call_tir.py): what it reads from a parsed
call, what it refuses, and that `call_tir(...)` builds what the parser builds."""

from __future__ import annotations

import pytest

from tvmlite import parse, structural_equal
from tvmlite.diagnostics import VerifyError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.call_tir import KERNEL_CALLS, CallTIR, call_tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.verify.relax import verify_module

TEXT = """
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def split(a: T.handle, b: T.handle, c: T.handle, n: T.int64):
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        C = T.match_buffer(c, (n,))
        for i in range(n):
            with T.block("copy"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi]
                C[vi] = A[vi]

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        n = T.int64()
        cls = Module
        y = R.call_tir(cls.split, (x,), out_sinfo=[R.Tensor((n,), "float32"), R.Tensor((n,), "float32")], tir_vars=R.shape([n]))
        z = y[0]
        return z
"""


def _first_call(mod: IRModule) -> relax.Call:
    main = mod["main"]
    assert isinstance(main, relax.Function) and isinstance(main.body, relax.SeqExpr)
    value = main.body.blocks[0].bindings[0].value
    assert isinstance(value, relax.Call)
    return value


def test_view_of_a_parsed_call() -> None:
    mod = parse(TEXT)
    call = _first_call(mod)
    view = CallTIR.of(call)
    assert view is not None
    assert view.call is call
    assert view.callee.name == "split"
    assert len(view.args) == 1 and isinstance(view.args[0], relax.Var)
    assert [s.dtype for s in view.outputs] == ["float32", "float32"]  # type: ignore[attr-defined]
    assert isinstance(view.tir_vars, relax.ShapeExpr)
    assert view.kernel(mod.functions) is mod["split"]
    assert view.kernel({}) is None


def test_builder_makes_what_the_parser_makes() -> None:
    call = _first_call(parse(TEXT))
    view = CallTIR.of(call)
    assert view is not None
    rebuilt = call_tir(view.callee, view.args, view.out_sinfo, view.tir_vars)
    assert structural_equal(rebuilt, call)
    again = CallTIR.of(rebuilt)
    assert again is not None and again.args == view.args and again.tir_vars is view.tir_vars


@pytest.mark.parametrize(
    "call",
    [
        relax.Call(relax.Op("relax.exp"), (relax.Var("x", relax.ObjectStructInfo()),)),
        # the callee is not a module function
        relax.Call(
            relax.Op("relax.call_tir"),
            (relax.ExternFunc("f"), relax.Tuple(())),
            (),
            (relax.ObjectStructInfo(),),
        ),
        # arguments not in a tuple
        relax.Call(
            relax.Op("relax.call_tir"),
            (relax.GlobalVar("f"), relax.Var("x", relax.ObjectStructInfo())),
            (),
            (relax.ObjectStructInfo(),),
        ),
        # no output struct info
        relax.Call(relax.Op("relax.call_tir"), (relax.GlobalVar("f"), relax.Tuple(()))),
    ],
)
def test_not_a_kernel_call(call: relax.Call) -> None:
    assert CallTIR.of(call) is None


def test_inplace_only_when_asked() -> None:
    sinfo = relax.TensorStructInfo((tir.IntImm("int64", 4),), "float32", 1)
    call = relax.Call(
        relax.Op("relax.call_tir_inplace"),
        (relax.GlobalVar("f"), relax.Tuple(())),
        (("inplace_indices", (0,)),),
        (sinfo,),
    )
    assert CallTIR.of(call) is None
    view = CallTIR.of(call, KERNEL_CALLS)
    assert view is not None and view.outputs == (sinfo,)


def test_verifier_names_a_malformed_call() -> None:
    x = relax.Var("x", relax.ObjectStructInfo())
    bad = relax.Call(relax.Op("relax.call_tir"), (relax.GlobalVar("f"), x), (), (x.struct_info,))
    y = relax.Var("y", relax.ObjectStructInfo())
    body = relax.SeqExpr((relax.BindingBlock((relax.VarBinding(y, bad),), False),), y)
    main = relax.Function((x,), body, relax.ObjectStructInfo(), True, ())
    with pytest.raises(
        VerifyError, match="R.call_tir needs a prim function of the module, a tuple"
    ):
        verify_module(IRModule({"main": main}))
