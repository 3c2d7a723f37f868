"""structural_equal / structural_hash: alpha-equivalence over hand-built IR."""

from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.structural import first_difference, structural_equal, structural_hash


def _copy_loop(name_i: str, name_a: str, extent: int = 16, dtype: str = "float32"):
    i = tir.Var(name_i, "int32")
    data = tir.Var(name_a, "handle")
    a = tir.Buffer(name_a, data, dtype, (tir.IntImm("int32", extent),))
    store = tir.BufferStore(a, tir.FloatImm(dtype, 0.5), (i,))
    loop = tir.For(i, tir.IntImm("int32", 0), tir.IntImm("int32", extent), tir.SERIAL, store)
    return tir.PrimFunc((data,), ((data, a),), loop)


def test_renamed_vars_are_equal_and_hash_alike():
    f, g = _copy_loop("i", "A"), _copy_loop("j", "B")
    assert structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)


def test_different_extent_or_dtype_differs():
    f = _copy_loop("i", "A")
    assert not structural_equal(f, _copy_loop("i", "A", extent=8))
    assert not structural_equal(f, _copy_loop("i", "A", dtype="float16"))
    assert structural_hash(f) != structural_hash(_copy_loop("i", "A", extent=8))


def test_var_correspondence_must_be_one_to_one():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    same = tir.BinaryOp("add", x, x, "int32")
    mixed = tir.BinaryOp("add", x, y, "int32")
    assert not structural_equal(same, mixed)
    assert not structural_equal(mixed, same)
    assert structural_equal(mixed, tir.BinaryOp("add", y, x, "int32"))


def test_float_nan_and_negative_zero():
    nan = tir.FloatImm("float32", float("nan"))
    assert structural_equal(nan, tir.FloatImm("float32", float("nan")))
    assert not structural_equal(tir.FloatImm("float32", 0.0), tir.FloatImm("float32", -0.0))


def test_relax_constants_and_modules():
    sinfo = relax.TensorStructInfo((tir.IntImm("int64", 2),), "float32")
    x, y = relax.Var("x", sinfo), relax.Var("y", sinfo)
    c1 = relax.Constant(np.array([1.0, 2.0], "float32"))
    c2 = relax.Constant(np.array([1.0, 3.0], "float32"))

    def module(var, const):
        call = relax.Call(relax.Op("relax.add"), (var, const))
        out = relax.Var("gv", sinfo)
        body = relax.SeqExpr((relax.BindingBlock((relax.VarBinding(out, call),)),), out)
        return IRModule({"main": relax.Function((var,), body, sinfo)})

    assert structural_equal(module(x, c1), module(y, c1))
    assert not structural_equal(module(x, c1), module(y, c2))
    assert structural_hash(module(x, c1)) == structural_hash(module(y, c1))


def test_deep_nesting_does_not_recurse():
    x = tir.Var("x", "int32")
    e1 = e2 = x
    for _ in range(5000):
        e1 = tir.BinaryOp("add", e1, tir.IntImm("int32", 1), "int32")
        e2 = tir.BinaryOp("add", e2, tir.IntImm("int32", 1), "int32")
    assert structural_equal(e1, e2)
    assert structural_hash(e1) == structural_hash(e2)


def test_first_difference_has_a_path_and_both_sides():
    f = _copy_loop("i", "A")
    found = first_difference(f, _copy_loop("j", "B", extent=8))
    assert (found.path, found.reason) == (".buffer_map[0][1].shape[0].value", "16 against 8")
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    found = first_difference(tir.BinaryOp("add", x, x, "int32"), tir.BinaryOp("add", x, y, "int32"))
    assert found.path == ".b" and "do not correspond" in found.reason
    found = first_difference((1, 2), (1, 2, 3))
    assert (found.path, found.reason) == ("(the whole program)", "2 parts against 3")
    assert first_difference(f, _copy_loop("k", "C")) is None


def test_assert_structural_equal_prints_the_difference_and_both_programs():
    mod = tvmlite.parse_file(Path(__file__).parents[2] / "examples" / "mlp.tvms")
    other = tvmlite.parse(mod.script().replace("T.float32(0.0)", "T.float32(1.0)"))
    tvmlite.assert_structural_equal(mod, tvmlite.parse(mod.script()))
    with pytest.raises(AssertionError) as err:
        tvmlite.assert_structural_equal(mod, other)
    message = str(err.value)
    where = ".functions['bias_relu'].body.block.body.body.body.block.body.value.b.value"
    assert message.startswith(f"not structurally equal at {where}: 0.0 against 1.0\n")
    left, right = message.split("\n--- left\n")[1].split("\n--- right\n")
    assert (left, right) == (mod.script(), other.script())
