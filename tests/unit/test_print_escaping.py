"""IR built in code may hold any string where the text needs a name or a dtype:
the printer escapes what it can and refuses the rest, so a name never injects
structure into the printed text."""

from __future__ import annotations

import pytest

import tvmlite
from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.arith import const
from tvmlite.dsl.module import IRModule
from tvmlite.printer import script

# Strings that would end the def line, open a new statement or stop being a name.
NOT_NAMES = ["my-func", "a b", "x):\n    pass\ndef y(", "1abc", "def", 'a"b', "a.b", ""]
NOT_DTYPES = ["foo", 'float32", "x', "float32)\nimport os\nT.int32(", "float7", ""]


def store_func(dtype: str = "float32", attrs: tuple = (("global_symbol", "main"),)):
    handle, data = tir.Var("A_handle", "handle"), tir.Var("A", "handle", (dtype, "global"))
    buffer = tir.Buffer("A", data, dtype, (tir.IntImm("int32", 4),))
    body = tir.BufferStore(buffer, const(0, "float32"), (tir.IntImm("int32", 0),))
    return tir.PrimFunc((handle,), ((handle, buffer),), body, attrs=attrs)


def relax_func(dtype: str = "float32", attrs: tuple = (("global_symbol", "main"),)):
    x = relax.Var("x", relax.TensorStructInfo((tir.IntImm("int64", 4),), dtype, ndim=1))
    return relax.Function((x,), relax.SeqExpr((), x), x.struct_info, attrs=attrs)


@pytest.mark.parametrize("name", NOT_NAMES)
@pytest.mark.parametrize("make", [store_func, relax_func], ids=["prim", "relax"])
def test_a_module_function_name_that_is_no_identifier_is_refused(make, name: str) -> None:
    mod = IRModule({name: make(attrs=())})
    with pytest.raises(TVMLiteError, match="cannot print the function name"):
        script(mod)


@pytest.mark.parametrize("name", NOT_NAMES)
def test_an_extern_function_name_that_is_no_identifier_is_refused(name: str) -> None:
    mod = IRModule({name: relax.ExternFunc("sym")})
    with pytest.raises(TVMLiteError, match="cannot print the function name"):
        script(mod)


@pytest.mark.parametrize("name", NOT_NAMES)
def test_a_call_to_a_global_named_no_identifier_is_refused(name: str) -> None:
    x = relax.Var("x", relax.TensorStructInfo((tir.IntImm("int64", 4),), "float32", ndim=1))
    gv = relax.Var("gv", x.struct_info)
    call = relax.Call(relax.GlobalVar(name), (x,))
    block = relax.BindingBlock((relax.VarBinding(gv, call),))
    func = relax.Function((x,), relax.SeqExpr((block,), gv), x.struct_info)
    with pytest.raises(TVMLiteError, match="cannot print the function name"):
        script(IRModule({"main": func}))


@pytest.mark.parametrize("name", NOT_NAMES)
@pytest.mark.parametrize("make", [store_func, relax_func], ids=["prim", "relax"])
def test_a_lone_function_whose_symbol_is_no_identifier_is_main_with_the_attribute(
    make, name: str
) -> None:
    func = make(attrs=(("global_symbol", name),))
    text = script(func)
    assert "def main(" in text and "global_symbol" in text
    back = tvmlite.parse(text)
    assert back.attr("global_symbol") == name
    assert tvmlite.structural_equal(back, func)


@pytest.mark.parametrize("dtype", NOT_DTYPES)
@pytest.mark.parametrize("dialect", ["classic", "tvm-0.27"])
def test_a_buffer_dtype_that_is_no_dtype_is_refused(dtype: str, dialect: str) -> None:
    with pytest.raises(TVMLiteError, match="is not a dtype"):
        script(store_func(dtype), dialect=dialect)


@pytest.mark.parametrize("dtype", NOT_DTYPES)
def test_a_tensor_dtype_that_is_no_dtype_is_refused(dtype: str) -> None:
    with pytest.raises(TVMLiteError, match="is not a dtype"):
        script(relax_func(dtype))


@pytest.mark.parametrize(
    "expr",
    [
        tir.Cast("foo", tir.IntImm("int32", 1)),
        tir.IntImm("int33", 1),
        tir.FloatImm("float32)\nx = (1", 1.5),
        tir.Var("n", "in t32"),
    ],
    ids=["cast", "int", "float", "var"],
)
def test_an_expression_dtype_that_is_no_dtype_is_refused(expr: tir.PrimExpr) -> None:
    func = store_func()
    store = tir.BufferStore(func.body.buffer, expr, (tir.IntImm("int32", 0),))
    with pytest.raises(TVMLiteError, match="is not a dtype"):
        script(tir.PrimFunc(func.params, func.buffer_map, store, attrs=func.attrs))


def test_an_intrinsic_or_operator_name_that_is_no_identifier_is_refused() -> None:
    func = store_func()
    bad = tir.Call("float32", "exp(1)\nimport os\nT.exp", (const(1, "float32"),))
    store = tir.BufferStore(func.body.buffer, bad, (tir.IntImm("int32", 0),))
    with pytest.raises(TVMLiteError, match="cannot print the intrinsic"):
        script(tir.PrimFunc(func.params, func.buffer_map, store, attrs=func.attrs))
    x = relax.Var("x", relax.TensorStructInfo((tir.IntImm("int64", 4),), "float32", ndim=1))
    gv = relax.Var("gv", x.struct_info)
    call = relax.Call(relax.Op("relax.add(x)\nR.add"), (x, x))
    block = relax.BindingBlock((relax.VarBinding(gv, call),))
    with pytest.raises(TVMLiteError, match="cannot print the operator"):
        script(relax.Function((x,), relax.SeqExpr((block,), gv), x.struct_info))


def test_a_buffer_scope_and_handle_pointee_are_quoted_strings() -> None:
    data = tir.Var("A", "handle", ("float32", 'sha"red'))
    buffer = tir.Buffer("A", data, "float32", (tir.IntImm("int32", 4),), scope='sha"red')
    body = tir.BufferStore(buffer, const(0, "float32"), (tir.IntImm("int32", 0),))
    func = tir.PrimFunc((data,), ((data, buffer),), body, attrs=(("global_symbol", "main"),))
    for dialect in ("classic", "tvm-0.27"):
        text = script(func, dialect=dialect)
        assert 'scope="sha\\"red"' in text
        assert tvmlite.parse(text).buffer_map[0][1].scope == 'sha"red'
