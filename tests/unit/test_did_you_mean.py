"""Misspelt names get the closest candidates of their registry or scope in the
message, and far-fetched guesses are not made."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.diagnostics import did_you_mean
from tvmlite.lowering.passes.legalize_ops import LegalizeOps
from tvmlite.transform import PassContext

MODULE = """from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("b"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)

    @R.function
    def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), "float32"))
        z = cls.helper(y)
        return z
"""

CASES = [
    # (what is replaced, by what, the message's first line ends with)
    ("z = cls.helper(y)", "z = R.nn.softmx(y)", "unknown operator R.nn.softmx "
     "(did you mean R.nn.softmax, R.nn.log_softmax or R.nn.softplus?)"),
    ("z = cls.helper(y)", "z = R.call_tri(y)", "(did you mean R.call_tir?)"),
    ("z = cls.helper(y)", "z = R.sum(y, axs=0)", "unknown keyword argument 'axs' "
     "(did you mean 'axis'?)"),
    ("z = cls.helper(y)", 'z = R.astype(y, "flaot16")', "unknown dtype 'flaot16' "
     "(did you mean float16 or bfloat16?)"),
    ('def helper(x: R.Tensor((4,), "float32"))', 'def helper(x: R.Tensor((4,), "flaot32"))',
     "unknown dtype 'flaot32' (did you mean float32?)"),
    ("B[vi] = A[vi] + T.float32(1)", 'B[vi] = A[vi] + T.Cast("flaot32x4", 1)',
     "unknown dtype 'flaot32x4' (did you mean float32x4?)"),
    ("B[vi] = A[vi] + T.float32(1)", "B[vi] = A[vi] + T.flaot32(1)",
     "unknown TIR builtin T.flaot32 (did you mean T.float32?)"),
    ("B[vi] = A[vi] + T.float32(1)", "B[vi] = T.exq(A[vi])", "(did you mean T.EQ or T.exp?)"),
    ("B[vi] = A[vi] + T.float32(1)", "B[vi] = A[vii]", "undefined name 'vii' "
     "(did you mean 'vi'?)"),
    ("return z", "return helper_out", "undefined name helper_out"),
    ("z = cls.helper(y)", "z = cls.helpr(y)", "the module has no function named helpr "
     "(did you mean helper?)"),
    ("z = cls.helper(y)", "z = helpr(y)", "call of unknown function helpr "
     "(did you mean helper?)"),
    ('with T.block("b"):', 'with T.blokc("b"):', "(did you mean T.block or T.sblock?)"),
    ("vi = T.axis.spatial(4, i)", "vi = T.axis.spatail(4, i)",
     "(did you mean T.axis.spatial?)"),
    ("vi = T.axis.spatial(4, i)", "vi = T.axis.spatial(4, bindng=i)",
     "unexpected keyword argument 'bindng' (did you mean 'binding'?)"),
    ("for i in range(4):", "for i in T.serail(4):", "(did you mean T.serial?)"),
    ("for i in range(4):", "for i in T.serial(4, anotations={}):",
     "(did you mean 'annotations'?)"),
    ("out_sinfo=", "out_sinf=", "unexpected keyword argument 'out_sinf' "
     "(did you mean 'out_sinfo'?)"),
    ("@R.function\n    def main", "@R.functon\n    def main",
     "unknown decorator @R.functon (did you mean @R.function?)"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "ends"), CASES, ids=[c[1] for c in CASES])
def test_misspelt_names_in_text(old: str, new: str, ends: str) -> None:
    assert old in MODULE
    with pytest.raises(tvmlite.ParseError) as info:
        tvmlite.parse(MODULE.replace(old, new, 1))
    first = str(info.value).splitlines()[0]
    assert first.endswith(ends) or ends in first, first
    assert first.startswith("<string>:")  # located


def test_far_names_get_no_guess() -> None:
    assert did_you_mean("nonsense", ["seses", "sse", "avx"]) == ""
    assert did_you_mean("x", ["y", "z"]) == ""
    assert did_you_mean("Float32", ["float32", "int32"]) == " (did you mean float32?)"
    assert did_you_mean("mian", ["main"], quote=True) == " (did you mean 'main'?)"
    assert did_you_mean("main", ["main"]) == ""  # the word itself is no suggestion


def test_the_mattr_suggestion_makes_sense() -> None:
    with pytest.raises(tvmlite.TVMLiteError) as info:
        tvmlite.Target("llvm -mattr=+nonsense")
    assert "seses" not in str(info.value)
    assert "unknown feature 'nonsense' (no close match among LLVM's" in str(info.value)
    with pytest.raises(tvmlite.TVMLiteError, match=r"unknown feature 'avx3' \(did you mean .*avx2"):
        tvmlite.Target("llvm -mattr=+avx3")


def test_misspelt_names_in_python_calls() -> None:
    ex = tvmlite.build(tvmlite.parse(MODULE))
    with pytest.raises(tvmlite.TVMLiteError, match=r"'mian' does not exist .*did you mean 'main'"):
        ex["mian"]
    with pytest.raises(AttributeError, match="did you mean 'build'"):
        tvmlite.biuld  # noqa: B018 - the attribute access is the test
    with pytest.raises(tvmlite.TVMLiteError, match="did you mean 'tvmlite.profile'"):
        PassContext(config={"tvmlite.profil": True})
    with pytest.raises(tvmlite.TVMLiteError, match="did you mean 'default'"):
        tvmlite.build(tvmlite.parse(MODULE), pipeline="defualt")
    with pytest.raises(tvmlite.TVMLiteError, match="did you mean 'llvm'"):
        tvmlite.build(tvmlite.parse(MODULE), target="llmv")
    with pytest.raises(tvmlite.TVMLiteError, match="did you mean -mcpu"):
        tvmlite.build(tvmlite.parse(MODULE), target="llvm -mpcu=x")
    with pytest.raises(tvmlite.TVMLiteError, match="did you mean 'relax.nn.conv2d'"):
        LegalizeOps(skip_ops=["relax.nn.conv2"])
    np.testing.assert_allclose(ex["main"](np.zeros(4, "float32")), np.ones(4))
