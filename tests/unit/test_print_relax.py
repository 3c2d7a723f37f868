"""The module and Relax printers against text printed by TVM 0.27 (and its classic
spelling). IR is built by hand; expected texts are copied from the corpus."""

from __future__ import annotations

import numpy as np
import pytest

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax as R
from tvmlite.dsl import tir as T
from tvmlite.dsl.module import IRModule
from tvmlite.printer import script

CLASSIC, TVM027 = "classic", "tvm-0.27"


def i64(v: int) -> T.IntImm:
    return T.IntImm("int64", v)


def tensor(shape: tuple, dtype: str = "float32") -> R.TensorStructInfo:
    return R.TensorStructInfo(tuple(i64(d) if isinstance(d, int) else d for d in shape), dtype)


def op(name: str, *args: R.Expr, attrs: tuple = (), sinfo_args: tuple = ()) -> R.Call:
    return R.Call(R.Op(name), args, attrs, sinfo_args)


def func(params, bindings, ret, sinfo=None, attrs=(("global_symbol", "main"),), dataflow=True):
    """A function whose body is one binding block returning `ret`."""
    block = R.BindingBlock(tuple(bindings), is_dataflow=dataflow)
    return R.Function(tuple(params), R.SeqExpr((block,), ret), sinfo, attrs=attrs)


def module(**functions) -> IRModule:
    return IRModule(dict(functions))


def text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


HEAD = ("# from tvm.script import ir as I", "# from tvm.script import relax as R", "")
HEAD_T_CLASSIC = (
    "# from tvm.script import ir as I",
    "# from tvm.script import tir as T",
    "# from tvm.script import relax as R",
    "",
)
HEAD_T_027 = (
    "# from tvm.script import ir as I",
    "# from tvm.script import tirx as T",
    "# from tvm.tirx.layout import Axis",
    "# from tvm.script import relax as R",
    "",
)


# ---------------------------------------------------------------- symbolic shapes


def dyn_take() -> IRModule:
    n, k = T.Var("n", "int64"), T.Var("k", "int64")
    x = R.Var("x", tensor((n, 4)))
    y = R.Var("y", tensor((k,), "int64"))
    out = tensor((k, 4))
    gv = R.Var("gv", out)
    take = op("relax.take", x, y, attrs=(("axis", 0), ("mode", "fast")))
    return module(main=func([x, y], [R.VarBinding(gv, take)], gv, out))


def test_symbolic_dims_classic_declares_in_body_return_annotation_first():
    assert script(dyn_take(), CLASSIC) == text(
        *HEAD,
        "@I.ir_module",
        "class Module:",
        "    @R.function",
        '    def main(x: R.Tensor(("n", 4), dtype="float32"), y: R.Tensor(("k",), dtype="int64")) -> R.Tensor(("k", 4), dtype="float32"):',
        "        k = T.int64()",
        "        n = T.int64()",
        "        with R.dataflow():",
        '            gv: R.Tensor((k, 4), dtype="float32") = R.take(x, y, axis=0, mode="fast")',
        "            R.output(gv)",
        "        return gv",
    )


def test_symbolic_dims_027_sorted_typevars():
    assert script(dyn_take(), TVM027) == text(
        "# from typing import TypeVar",
        *HEAD,
        'k = TypeVar("k")',
        'n = TypeVar("n")',
        "@I.ir_module",
        "class Module:",
        "    @R.function",
        '    def main(x: R.Tensor((n, 4), dtype="float32"), y: R.Tensor((k,), dtype="int64")) -> R.Tensor((k, 4), dtype="float32"):',
        "        with R.dataflow():",
        '            gv: R.Tensor((k, 4), dtype="float32") = R.take(x, y, axis=0, mode="fast")',
        "            R.output(gv)",
        "        return gv",
    )


def test_module_dialect_is_the_default():
    mod = dyn_take().replace(dialect=TVM027)
    assert script(mod) == script(mod, TVM027)
    assert "TypeVar" not in script(dyn_take())


def test_compound_dims_quoted_in_signature_only():
    n = T.Var("n", "int64")
    n4 = T.BinaryOp("mul", n, i64(4), "int64")
    x = R.Var("x", tensor((n, 4)))
    out = tensor((n4,))
    gv = R.Var("gv", out)
    mod = module(main=func([x], [R.VarBinding(gv, op("relax.flatten", x))], gv, out))
    sig = '    def main(x: R.Tensor(({}, 4), dtype="float32")) -> R.Tensor(("n * 4",), dtype="float32"):'
    classic, modern = script(mod, CLASSIC), script(mod, TVM027)
    assert sig.format('"n"') in classic.splitlines()
    assert sig.format("n") in modern.splitlines()
    for out_text in (classic, modern):
        assert '            gv: R.Tensor((n * 4,), dtype="float32") = R.flatten(x)' in out_text


def test_func_attr_nested_dict_after_classic_declarations():
    s = T.Var("s77", "int64")
    x = R.Var("x", tensor((s, 16)))
    attrs = (
        ("global_symbol", "main"),
        ("tir_var_upper_bound", {"s77": 64}),
        ("num_input", 1),
        ("tir_var_lower_bound", {"s77": 1}),
    )
    mod = module(main=func([x], [], x, tensor((s, 16)), attrs=attrs, dataflow=False))
    lines = script(mod, CLASSIC).splitlines()
    i = lines.index("        s77 = T.int64()")
    assert lines[i + 1] == (
        '        R.func_attr({"num_input": 1, "tir_var_lower_bound": {"s77": 1}, '
        '"tir_var_upper_bound": {"s77": 64}})'
    )
    assert lines[i + 2] == "        return x"


# ---------------------------------------------------------------- call_tir, cls, ordering


def legalized_split(dialect: str) -> str:
    """A Relax callee stands in for the prim func (printed by printer/tir.py)."""
    n = T.Var("n", "int64")
    x = R.Var("x", tensor((n, 16)))
    out = R.TupleStructInfo((tensor((n, 8)), tensor((n, 8))))
    gv = R.Var("gv", out)
    call = op("relax.call_tir", R.GlobalVar("split"), R.Tuple((x,)), sinfo_args=(out,))
    p = R.Var("p", tensor((n, 16)))
    helper = func([p], [], p, tensor((n, 16)), attrs=(), dataflow=False)
    main = func([x], [R.VarBinding(gv, call)], gv, out)
    return script(module(main=main, split=helper), dialect)


def test_call_tir_unannotated_with_cls_alias():
    lines = legalized_split(TVM027).splitlines()
    assert (
        lines[
            lines.index(
                '    def main(x: R.Tensor((n, 16), dtype="float32")) -> '
                'R.Tuple(R.Tensor((n, 8), dtype="float32"), '
                'R.Tensor((n, 8), dtype="float32")):'
            )
            + 1
        ]
        == "        cls = Module"
    )
    assert (
        '            gv = R.call_tir(cls.split, (x,), out_ty=[R.Tensor((n, 8), dtype="float32"), '
        'R.Tensor((n, 8), dtype="float32")])'
    ) in lines
    classic = legalized_split(CLASSIC).splitlines()
    main = next(i for i, line in enumerate(classic) if line.startswith("    def main("))
    assert classic[main + 1 : main + 3] == ["        n = T.int64()", "        cls = Module"]
    assert any("out_sinfo=[R.Tensor((n, 8)" in line for line in classic)


def test_private_function_and_order():
    lines = legalized_split(TVM027).splitlines()
    assert lines[lines.index("    @R.function(private=True)") + 1].startswith("    def split(")
    assert lines.index("    @R.function(private=True)") < lines.index("    @R.function")
    # one blank line after every function, none at the end
    assert lines[lines.index("    @R.function") - 1] == ""
    assert lines[-1] == "        return gv"


def test_call_tir_empty_args_and_extern_func_order():
    out = tensor((2, 3))
    gv = R.Var("gv", out)
    call = op("relax.call_tir", R.GlobalVar("full"), R.Tuple(()), sinfo_args=(out,))
    main = func([], [R.VarBinding(gv, call)], gv, out)
    impure = func(
        [],
        [],
        R.Tuple(()),
        R.TupleStructInfo(()),
        dataflow=False,
        attrs=(("global_symbol", "zzz"),),
    )
    impure = R.Function((), impure.body, impure.ret_struct_info, False, impure.attrs)
    mod = module(main=main, full=R.ExternFunc("my_full"), zzz=impure)
    lines = script(mod, CLASSIC).splitlines()
    assert lines[4:9] == [
        "class Module:",
        '    full = R.ExternFunc("my_full")',
        "    @R.function(pure=False)",
        "    def zzz() -> R.Tuple:",
        "        return R.tuple()",
    ]
    assert (
        '            gv = R.call_tir(cls.full, R.tuple(), out_sinfo=R.Tensor((2, 3), dtype="float32"))'
    ) in lines


def test_module_attrs_first():
    mod = dyn_take().replace(attrs={"system_lib_prefix": "hi", "a": 1})
    lines = script(mod, TVM027).splitlines()
    assert lines[lines.index("class Module:") + 1] == (
        '    I.module_attrs({"a": 1, "system_lib_prefix": "hi"})'
    )


# ---------------------------------------------------------------- values


def one_binding(value: R.Expr, out: R.StructInfo, params=()) -> IRModule:
    gv = R.Var("gv", out)
    return module(main=func(list(params), [R.VarBinding(gv, value)], gv, out))


def test_prim_value_args_per_dialect():
    x = R.Var("x", tensor((4, 16)))
    lo = R.PrimValue(T.FloatImm("float64", -0.5))
    hi = R.PrimValue(T.FloatImm("float64", 0.5))
    mod = one_binding(op("relax.clip", x, lo, hi), tensor((4, 16)), [x])
    assert script(mod, TVM027).splitlines()[:5] == list(HEAD_T_027)
    assert script(mod, CLASSIC).splitlines()[:4] == list(HEAD_T_CLASSIC)
    assert "R.clip(x, T.float64(-0.5), T.float64(0.5))" in script(mod, TVM027)
    assert "R.clip(x, R.prim_value(T.float64(-0.5)), R.prim_value(T.float64(0.5)))" in script(
        mod, CLASSIC
    )


def test_int_prim_values_bare():
    x = R.Var("x", tensor((3,), "int32"))
    on, off = R.PrimValue(T.IntImm("int32", 7)), R.PrimValue(T.IntImm("int32", -1))
    call = op("relax.one_hot", x, on, off, attrs=(("depth", 5), ("axis", 0)))
    mod = one_binding(call, tensor((5, 3), "int32"), [x])
    for dialect in (CLASSIC, TVM027):
        out = script(mod, dialect)
        assert "R.one_hot(x, 7, -1, depth=5, axis=0)" in out
        assert "import tir" not in out


def test_scalar_constants_and_attr_literals():
    x = R.Var("x", tensor((3, 4)))
    c = R.Constant(np.array(0.35355339, dtype="float32"))
    call = op("relax.full_like", x, c, attrs=(("dtype", None),))
    out = script(one_binding(call, tensor((3, 4)), [x]), TVM027)
    assert 'R.full_like(x, R.const(0.35355338454246521, "float32"), dtype=None)' in out
    attrs = (("axes", (-1,)), ("epsilon", 1e-05), ("center", True), ("scale", False))
    ln = op("relax.nn.layer_norm", x, x, x, attrs=attrs)
    out = script(one_binding(ln, tensor((3, 4)), [x]), CLASSIC)
    assert (
        "R.nn.layer_norm(x, x, x, axes=[-1], epsilon=1.0000000000000001e-05, center=True, "
        "scale=False)" in out
    )
    b = R.Constant(np.array(True))
    out = script(one_binding(op("relax.logical_not", b), tensor((), "bool")), CLASSIC)
    assert 'gv: R.Tensor((), dtype="bool") = R.logical_not(R.const(True, "bool"))' in out


def test_tensor_constant_goes_to_metadata():
    c = R.Constant(np.arange(5, dtype="int64"))
    mod = one_binding(c, tensor((5,), "int64"))
    for dialect, key in ((TVM027, "ir.GenericConst"), (CLASSIC, "relax.expr.Constant")):
        out = script(mod, dialect)
        assert f'            gv: R.Tensor((5,), dtype="int64") = metadata["{key}"][0]' in out
        assert out.endswith(
            "        return gv\n\n"
            "# Metadata omitted. Use show_meta=True in script() method to show it.\n"
        )


def test_shape_tuple_and_get_item():
    x = R.Var("x", tensor((2, 3)))
    y = R.Var("y", tensor((3,), "int64"))
    lv = R.DataflowVar("lv", tensor((3,), "int64"))
    gv = R.Var("gv", tensor((6,)))
    tup = R.Var("tup", R.TupleStructInfo((tensor((6,)), tensor((3,), "int64"))))
    bindings = [
        R.VarBinding(lv, R.TupleGetItem(R.Tuple((y,)), 0)),
        R.VarBinding(gv, op("relax.reshape", x, R.ShapeExpr((i64(6),)))),
        R.VarBinding(tup, R.Tuple((gv, lv))),
    ]
    ret = R.TupleStructInfo((gv.struct_info, tup.struct_info))
    mod = module(main=func([x, y], bindings, R.Tuple((gv, tup)), ret))
    body = script(mod, CLASSIC).splitlines()[8:]
    assert body == [
        '            lv: R.Tensor((3,), dtype="int64") = (y,)[0]',
        '            gv: R.Tensor((6,), dtype="float32") = R.reshape(x, R.shape([6]))',
        (
            '            tup: R.Tuple(R.Tensor((6,), dtype="float32"), R.Tensor((3,), dtype="int64"))'
            " = gv, lv"
        ),
        "            R.output(gv, tup)",
        "        return (gv, tup)",
    ]


# ---------------------------------------------------------------- struct info


@pytest.mark.parametrize(
    ("si", "classic", "modern"),
    [
        (R.ObjectStructInfo(), "R.Object", "R.Any"),
        (R.PrimStructInfo("int64"), 'R.Prim("int64")', "T.int64"),
        (R.ShapeStructInfo(ndim=3), "R.Shape(ndim=3)", "R.Shape(ndim=3)"),
        (R.ShapeStructInfo((i64(1), i64(2))), "R.Shape([1, 2])", "R.Shape([1, 2])"),
        (R.TensorStructInfo(None, "float32", 2), 'R.Tensor(dtype="float32", ndim=2)', None),
        (R.TensorStructInfo(), "R.Tensor", "R.Tensor"),
        (R.TupleStructInfo(()), "R.Tuple", "R.Tuple"),
        (R.FuncStructInfo(None, R.ObjectStructInfo(), False), "R.Callable", "R.Callable"),
        (
            R.FuncStructInfo((tensor((2,)),), tensor((2,))),
            'R.Callable((R.Tensor((2,), dtype="float32"),), R.Tensor((2,), dtype="float32"), True)',
            None,
        ),
    ],
)
def test_struct_info(si, classic, modern):
    x = R.Var("x", si)
    mod = module(main=func([x], [], x, si, dataflow=False))
    assert f"    def main(x: {classic}) -> {classic}:" in script(mod, CLASSIC)
    assert f"    def main(x: {modern or classic}) -> {modern or classic}:" in script(mod, TVM027)


# ---------------------------------------------------------------- other bindings


def test_match_cast_declares_new_var_at_top():
    m = T.Var("m", "int64")
    x = R.Var("x", R.TensorStructInfo(None, "float32", 1))
    y = R.Var("y", tensor((m,)))
    mod = module(main=func([x], [R.MatchCast(y, x, tensor((m,)))], y, tensor((m,)), dataflow=False))
    assert script(mod, CLASSIC).splitlines()[6:] == [
        '    def main(x: R.Tensor(dtype="float32", ndim=1)) -> R.Tensor(("m",), dtype="float32"):',
        "        m = T.int64()",
        (
            '        y: R.Tensor((m,), dtype="float32") = R.match_cast(x, R.Tensor((m,), '
            'dtype="float32"))'
        ),
        "        return y",
    ]


def test_if_branches_assign_the_bound_var():
    c = R.Var("c", R.TensorStructInfo((), "bool"))
    x = R.Var("x", tensor((4,)))
    r = R.Var("r", tensor((4,)))
    y = R.Var("y", tensor((4,)))
    then = R.SeqExpr((R.BindingBlock((R.VarBinding(y, op("relax.add", x, x)),)),), y)
    y2 = R.Var("y", tensor((4,)))
    other = R.SeqExpr((R.BindingBlock((R.VarBinding(y2, op("relax.multiply", x, x)),)),), y2)
    binding = R.VarBinding(r, R.If(c, then, other))
    mod = module(main=func([c, x], [binding], r, tensor((4,)), dataflow=False))
    assert script(mod, CLASSIC).splitlines()[7:] == [
        "        if c:",
        '            y: R.Tensor((4,), dtype="float32") = R.add(x, x)',
        '            r: R.Tensor((4,), dtype="float32") = y',
        "        else:",
        '            y: R.Tensor((4,), dtype="float32") = R.multiply(x, x)',
        '            r: R.Tensor((4,), dtype="float32") = y',
        "        return r",
    ]


def test_packed_calls_per_dialect():
    x = R.Var("x", tensor((2,)))
    out = tensor((2,))
    packed = R.Call(R.ExternFunc("my.func"), (x, x), sinfo_args=(out,))
    mod = one_binding(packed, out, [x])
    assert 'R.call_packed("my.func", x, x, sinfo_args=(R.Tensor((2,), dtype="float32"),))' in (
        script(mod, CLASSIC)
    )
    assert 'R.call_packed("my.func", x, x, ty_args=(R.Tensor((2,), dtype="float32"),))' in (
        script(mod, TVM027)
    )
    dps = op("relax.call_dps_packed", R.ExternFunc("f"), R.Tuple((x,)), sinfo_args=(out,))
    assert '    gv = R.call_dps_packed("f", (x,), out_ty=R.Tensor((2,), dtype="float32"))' in (
        script(one_binding(dps, out, [x]), TVM027)
    )


def test_void_binding_prints_bare_statement():
    x = R.Var("x", tensor((2,)))
    v = R.Var("v", R.TupleStructInfo(()))
    call = op("relax.print", R.StringImm("x: {}"), x)
    impure = func([x], [R.VarBinding(v, call)], x, tensor((2,)), dataflow=False)
    impure = R.Function(impure.params, impure.body, impure.ret_struct_info, False, impure.attrs)
    lines = script(module(main=impure), CLASSIC).splitlines()
    assert lines[5:] == [
        "    @R.function(pure=False)",
        '    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):',
        '        R.print(x, format=R.str("x: {}"))',
        "        return x",
    ]


def test_names_are_unique_and_avoid_prefixes():
    a, b, r = R.Var("x", tensor((2,))), R.Var("x", tensor((2,))), R.Var("R", tensor((2,)))
    mod = module(main=func([a, b], [R.VarBinding(r, op("relax.add", a, b))], r, tensor((2,))))
    out = script(mod, CLASSIC)
    assert 'R_1: R.Tensor((2,), dtype="float32") = R.add(x, x_1)' in out
    assert 'def main(x: R.Tensor((2,), dtype="float32"), x_1: ' in out


# ---------------------------------------------------------------- lone functions, dialects


def test_lone_function_prints_as_main_without_module():
    f = dyn_take()["main"]
    assert script(f) == text(
        "# from tvm.script import relax as R",
        "",
        "@R.function",
        'def main(x: R.Tensor(("n", 4), dtype="float32"), y: R.Tensor(("k",), dtype="int64")) -> R.Tensor(("k", 4), dtype="float32"):',
        "    k = T.int64()",
        "    n = T.int64()",
        "    with R.dataflow():",
        '        gv: R.Tensor((k, 4), dtype="float32") = R.take(x, y, axis=0, mode="fast")',
        "        R.output(gv)",
        "    return gv",
    )


def test_unknown_dialect_rejected():
    with pytest.raises(TVMLiteError, match="classic"):
        script(dyn_take(), "tvm-0.14")


def test_symbolic_prim_value_bare_in_both_dialects():
    n = T.Var("n", "int64")
    x = R.Var("x", tensor((n,)))
    zero, one = R.PrimValue(i64(0)), R.PrimValue(i64(1))
    call = op("relax.arange", zero, R.PrimValue(n), one, attrs=(("dtype", "int64"),))
    mod = one_binding(call, tensor((n,), "int64"), [x])
    for dialect in (CLASSIC, TVM027):
        assert 'R.arange(0, n, 1, dtype="int64")' in script(mod, dialect)


def test_call_tir_inplace_keeps_annotation():
    x = R.Var("x", tensor((10,)))
    out = tensor((10,))
    call = op(
        "relax.call_tir_inplace",
        R.GlobalVar("exp_inplace"),
        R.Tuple((x,)),
        attrs=(("inplace_indices", (0,)),),
        sinfo_args=(out,),
    )
    out_text = script(one_binding(call, out, [x]), CLASSIC)
    assert (
        '            gv: R.Tensor((10,), dtype="float32") = R.call_tir_inplace(exp_inplace, (x,), '
        'out_sinfo=R.Tensor((10,), dtype="float32"), inplace_indices=[0])'
    ) in out_text


def test_lone_private_function():
    x = R.Var("x", tensor((2,)))
    f = func([x], [], x, tensor((2,)), attrs=(), dataflow=False)
    assert script(f).splitlines()[2:4] == [
        "@R.function(private=True)",
        'def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):',
    ]
