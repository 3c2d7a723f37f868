"""Relax functions: signatures and struct info, bindings, normalization of nested
calls, dataflow blocks, match_cast, if/else, the special call forms, and the
located errors for each kind of mistake."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tvmlite import ParseError, build, parse
from tvmlite.diagnostics import VerifyError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.verify.relax import verify_function


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def func(body: str, params: str = 'x: R.Tensor((4, 16), "float32")', ret: str = "") -> str:
    """A lone function around `body` (statements indented by 4)."""
    arrow = f" -> {ret}" if ret else ""
    return f"@R.function\ndef main({params}){arrow}:\n" + textwrap.indent(src(body), "    ")


def bindings(f: relax.Function) -> list[relax.Binding]:
    return [b for block in f.body.blocks for b in block.bindings]


def error_at(text: str) -> tuple[str, int, int]:
    with pytest.raises(ParseError) as info:
        parse(text, "t.tvms")
    err = info.value
    assert err.span is not None, str(err)
    return err.message, err.span.line, err.span.column


def i64(*values: int) -> tuple[tir.IntImm, ...]:
    return tuple(tir.IntImm("int64", v) for v in values)


# ---------------------------------------------------------------- struct info


@pytest.mark.parametrize(
    ("ann", "expected"),
    [
        ('R.Tensor((2, 3), "float32")', relax.TensorStructInfo(i64(2, 3), "float32", 2)),
        ('R.Tensor([2, 3], dtype="int32")', relax.TensorStructInfo(i64(2, 3), "int32", 2)),
        ('R.Tensor(dtype="float32", ndim=2)', relax.TensorStructInfo(None, "float32", 2)),
        ('R.Tensor("float16", ndim=1)', relax.TensorStructInfo(None, "float16", 1)),
        ("R.Tensor", relax.TensorStructInfo()),
        (
            'R.Tensor((2,), "float32", vdevice="llvm:0")',
            relax.TensorStructInfo(i64(2), "float32", 1, "llvm:0"),
        ),
        ("R.Shape([1, 2])", relax.ShapeStructInfo(i64(1, 2), 2)),
        ("R.Shape(ndim=3)", relax.ShapeStructInfo(None, 3)),
        ("R.Object", relax.ObjectStructInfo()),
        ("R.Any", relax.ObjectStructInfo()),
        ('R.Prim("int64")', relax.PrimStructInfo("int64")),
        ("T.int64", relax.PrimStructInfo("int64")),
        (
            'R.Tuple(R.Tensor((2,), "float32"), R.Object)',
            relax.TupleStructInfo(
                (relax.TensorStructInfo(i64(2), "float32", 1), relax.ObjectStructInfo())
            ),
        ),
        ("R.Tuple", relax.TupleStructInfo(())),
        ("R.Callable", relax.FuncStructInfo(None, relax.ObjectStructInfo(), False)),  # TVM's
        ("R.Callable(purity=True)", relax.FuncStructInfo(None, relax.ObjectStructInfo())),
        (
            "R.Callable((R.Object,), R.Object)",
            relax.FuncStructInfo((relax.ObjectStructInfo(),), relax.ObjectStructInfo(), True),
        ),
        (
            'R.Callable((R.Object,), R.Prim("bool"), False)',
            relax.FuncStructInfo((relax.ObjectStructInfo(),), relax.PrimStructInfo("bool"), False),
        ),
    ],
)
def test_param_annotations(ann: str, expected: relax.StructInfo):
    f = parse(func("return x", params=f"x: {ann}"))
    assert f.params[0].struct_info == expected
    assert f.ret_struct_info == expected


def test_classic_symbolic_strings_and_declarations():
    f = parse(
        func(
            """
            n = T.int64()
            y: R.Tensor((n, "n + 1"), "float32") = R.nn.relu(x)
            return y
            """,
            params='x: R.Tensor(("n", "n + 1"), "float32")',
            ret='R.Tensor(("n", "n + 1"), "float32")',
        )
    )
    n, n1 = f.params[0].struct_info.shape
    assert isinstance(n, tir.Var) and n.name == "n" and n.dtype == "int64"
    assert isinstance(n1, tir.BinaryOp) and n1.kind == "add" and n1.a is n
    y = bindings(f)[0].var
    assert y.struct_info.shape[0] is n
    assert f.ret_struct_info.shape[0] is n


def test_prim_value_annotation_with_value():
    f = parse(func("return x", params='x: R.Tensor(("n",), "float32"), m: R.Prim(value="n")'))
    assert f.params[1].struct_info.value is f.params[0].struct_info.shape[0]


# ---------------------------------------------------------------- bindings


def test_annotated_and_unannotated_bindings():
    f = parse(
        func("""
        y: R.Tensor((4, 16), "float32") = R.add(x, x)
        z = R.nn.relu(y)
        return z
        """)
    )
    y, z = (b.var for b in bindings(f))
    assert type(y) is relax.Var and y.name == "y"
    assert z.struct_info == relax.TensorStructInfo(i64(4, 16), "float32", 2)
    call = bindings(f)[1].value
    assert call.op == relax.Op("relax.nn.relu") and call.args == (y,)
    assert f.body.body is z
    verify_function(f)


def test_less_precise_annotation_is_kept():
    f = parse(func('y: R.Tensor(dtype="float32", ndim=2) = R.add(x, x)\nreturn y'))
    assert bindings(f)[0].var.struct_info == relax.TensorStructInfo(None, "float32", 2)


def test_nested_calls_are_normalized():
    f = parse(
        func("""
        with R.dataflow():
            y = R.add(R.nn.relu(x), R.nn.relu(x))
            R.output(y)
        z = R.add(R.nn.relu(y), y)
        return R.nn.relu(z)
        """)
    )
    df, outer = f.body.blocks
    assert [b.var.name for b in df.bindings] == ["lv", "lv1", "y"]
    assert [type(b.var) for b in df.bindings] == [relax.DataflowVar, relax.DataflowVar, relax.Var]
    assert df.is_dataflow and not outer.is_dataflow
    # numbered by binding position, as TVM 0.27 names them (z took `gv1`)
    assert [b.var.name for b in outer.bindings] == ["gv", "z", "gv2"]
    assert df.bindings[2].value.args == (df.bindings[0].var, df.bindings[1].var)
    assert f.body.body is outer.bindings[2].var


def test_dataflow_outputs_and_shadowing():
    f = parse(
        func("""
        with R.dataflow():
            a = R.add(x, x)
            b = R.nn.relu(a)
            b = R.add(b, a)
            R.output(b)
        return b
        """)
    )
    kinds = [(b.var.name, type(b.var)) for b in f.body.blocks[0].bindings]
    assert kinds == [
        ("a", relax.DataflowVar),
        ("b", relax.DataflowVar),
        ("b", relax.Var),
    ]


def test_match_cast_introduces_symbolic_dims():
    f = parse(
        func(
            """
            m = T.int64()
            y = R.match_cast(x, R.Tensor((m, 16), "float32"))
            return y
            """,
            params='x: R.Tensor(dtype="float32", ndim=2)',
        )
    )
    (mc,) = bindings(f)
    assert isinstance(mc, relax.MatchCast)
    assert mc.value is f.params[0]
    assert mc.struct_info.shape[0].name == "m"
    assert mc.var.struct_info == mc.struct_info


def test_if_else_branches_are_seq_exprs():
    f = parse(
        func(
            """
            if c:
                y = R.add(x, x)
                r: R.Tensor((4, 16), "float32") = R.nn.relu(y)
            else:
                r: R.Tensor((4, 16), "float32") = R.multiply(x, x)
            return r
            """,
            params='x: R.Tensor((4, 16), "float32"), c: R.Tensor((), "bool")',
        )
    )
    (binding,) = bindings(f)
    assert binding.var.name == "r"
    ite = binding.value
    assert isinstance(ite, relax.If) and ite.condition is f.params[1]
    assert [b.var.name for b in ite.true_branch.blocks[0].bindings] == ["y"]
    assert ite.true_branch.body.op == relax.Op("relax.nn.relu")
    assert ite.false_branch.blocks == ()
    assert ite.false_branch.body.op == relax.Op("relax.multiply")


def test_tuples_and_indexing():
    f = parse(
        func(
            """
            t = (x, R.nn.relu(x))
            a = t[1]
            return (a, t[0])
            """,
            ret='R.Tuple(R.Tensor((4, 16), "float32"), R.Tensor((4, 16), "float32"))',
        )
    )
    names = [b.var.name for b in bindings(f)]
    assert names == ["gv", "t", "a", "gv3"]  # numbered by binding position, as TVM does
    assert isinstance(f.body.body, relax.Tuple)
    assert isinstance(bindings(f)[2].value, relax.TupleGetItem)
    assert bindings(f)[2].value.index == 1


def test_func_attr_purity_and_privacy():
    text = func(
        """
        R.func_attr({"num_input": 1, "tir_var_upper_bound": {"n": 64}, "axes": [1, 0]})
        return x
        """
    ).replace("@R.function", "@R.function(pure=False, private=True)")
    f = parse(text)
    assert not f.is_pure
    assert f.attrs == (("num_input", 1), ("tir_var_upper_bound", {"n": 64}), ("axes", (1, 0)))


# ---------------------------------------------------------------- special call forms


def test_constants_and_small_values():
    f = parse(
        func("""
        a = R.const(1.5, "float32")
        b = R.const(3)
        c = R.shape([4, 16])
        d = R.prim_value(T.int64(4))
        e = R.str("hello")
        g = R.dtype("float16")
        h = R.null_value()
        k = T.float64(0.5)
        m = R.tuple()
        return x
        """)
    )
    vals = {b.var.name: b.value for b in bindings(f)}
    assert isinstance(vals["a"], relax.Constant) and vals["a"].data.dtype == np.float32
    assert vals["a"].data.shape == () and float(vals["a"].data) == 1.5
    assert vals["b"].data.dtype == np.int32
    assert vals["c"] == relax.ShapeExpr(i64(4, 16))
    assert vals["d"] == relax.PrimValue(tir.IntImm("int64", 4))
    assert vals["e"] == relax.StringImm("hello")
    assert vals["g"] == relax.DataTypeImm("float16")
    assert vals["h"].op == relax.Op("relax.null_value")
    assert vals["k"] == relax.PrimValue(tir.FloatImm("float64", 0.5))
    assert vals["m"] == relax.Tuple(())


def test_call_tir_forms():
    mod = parse(
        src("""
        @I.ir_module
        class Module:
            @T.prim_func(private=True)
            def k(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
                T.evaluate(0)

            @R.function
            def main(x: R.Tensor(("n",), "float32")):
                n = T.int64()
                cls = Module
                a = R.call_tir(cls.k, x, out_sinfo=R.Tensor((n,), "float32"), tir_vars=R.shape([n]))
                b = R.call_tir(cls.k, (x,), out_sinfo=[R.Tensor((n,), "float32"), R.Tensor((n,), "float32")])
                c = R.call_tir_inplace(cls.k, (x, a), inplace_indices=[1], out_sinfo=R.Tensor((n,), "float32"))
                return (a, b, c)
        """)
    )
    a, b, c = bindings(mod["main"])
    n = mod["main"].params[0].struct_info.shape[0]
    assert a.value.args[1] == relax.Tuple((mod["main"].params[0],))
    assert a.value.args[2] == relax.ShapeExpr((n,))
    assert isinstance(b.var.struct_info, relax.TupleStructInfo)
    assert len(b.var.struct_info.fields) == 2
    assert c.value.op == relax.Op("relax.call_tir_inplace")
    assert c.value.attrs == (("inplace_indices", (1,)),)


def test_packed_calls():
    f = parse(
        func(
            """
            a = R.call_packed("my.func", x, 1, sinfo_args=(R.Tensor((4, 16), "float32"),))
            b = R.call_pure_packed("my.pure", x, sinfo_args=R.Tensor((4, 16), "float32"))
            c = R.call_builtin_with_ctx("vm.builtin.f", (x,), sinfo_args=[R.Object])
            d = R.call_dps_packed("my.dps", (x,), out_sinfo=R.Tensor((4, 16), "float32"))
            R.print(x, format=R.str("x: {}"))
            R.assert_op(R.const(True, "bool"), x, format="bad")
            return a
            """
        ).replace("@R.function", "@R.function(pure=False)")
    )
    a, b, c, d, p, q = bindings(f)
    assert a.value.op == relax.ExternFunc("my.func")
    assert a.value.args[1] == relax.PrimValue(tir.IntImm("int64", 1))
    assert a.var.struct_info.dtype == "float32"
    assert b.value.op == relax.Op("relax.call_pure_packed")
    assert b.value.args[0] == relax.ExternFunc("my.pure")
    assert c.value.args[1] == relax.Tuple((f.params[0],))
    assert c.var.struct_info == relax.ObjectStructInfo()
    assert d.value.op == relax.Op("relax.call_dps_packed")
    assert p.value.op == relax.Op("relax.print")
    assert p.value.args[0] == relax.StringImm("x: {}")
    assert p.var.struct_info == relax.TupleStructInfo(())
    assert q.value.args[1] == relax.StringImm("bad")


def test_0_27_spellings():
    f = parse(
        func("""
        a = R.call_packed("f", x, ty_args=(R.Tensor((4, 16), "float32"),))
        return a
        """).replace("@R.function", "@R.function(pure=False)")
    )
    assert bindings(f)[0].value.sinfo_args[0].dtype == "float32"


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("body", "message", "line", "col"),
    [
        ("y = R.nn.relu7(x)\nreturn y", "unknown operator R.nn.relu7", 3, 5),
        ("y = R.add(x, q)\nreturn y", "undefined name q", 3, 14),
        (
            'y: R.Tensor((4, 16), "float33") = R.add(x, x)\nreturn y',
            "unknown dtype 'float33'",
            3,
            22,
        ),
        (
            'y: R.Tensor((4, 16), "float32", ndim=3) = x\nreturn y',
            "R.Tensor has a shape of rank 2 but ndim=3",
            3,
            38,
        ),
        (
            "with R.dataflow():\n    y = R.add(x, x)\n    R.output(y)\nreturn lv",
            "undefined name lv",
            6,
            8,
        ),
        (
            "with R.dataflow():\n    y = R.add(x, x)\n    z = R.add(y, y)\n    R.output(z)\nreturn y",
            "y is a dataflow variable",
            7,
            8,
        ),
        (
            "with R.dataflow():\n    y = R.add(x, x)\n    R.output(w)\nreturn y",
            "R.output of undefined name w",
            5,
            14,
        ),
        ("y = R.add(x, x)", "a Relax function must end with a return statement", 3, 1),
        ("y = R.emit_with_sinfo(x)\nreturn y", "R.emit_with_sinfo is not supported", 3, 5),
        ('y = R.Tensor[(4,), "float32"]\nreturn y', "not a value here", 3, 5),
        ("for i in range(3):\n    pass\nreturn x", "for loops are not supported", 3, 1),
        (
            'y = R.const(1, "bfloat16")\nreturn y',
            "R.const does not support dtype 'bfloat16'",
            3,
            16,
        ),
        ("y = R.shape(4)\nreturn y", "R.shape takes a list of dimensions", 3, 13),
        ("y = R.const()\nreturn y", "R.const is missing the argument 'value'", 3, 5),
        (
            "y = R.prim_value(1, 2)\nreturn y",
            "R.prim_value takes at most 1 positional arguments",
            3,
            21,
        ),
        ("a, b = x\nreturn x", "tuple unpacking is not supported", 3, 1),
        ("y = x[0]\nreturn y", "only tuples can be indexed", 3, 5),
    ],
)
def test_body_errors(body: str, message: str, line: int, col: int):
    msg, got_line, got_col = error_at(func(body))
    assert message in msg
    assert (got_line, got_col) == (line, col + 4), msg  # the body is indented by 4


def test_return_annotation_mismatch_is_kept_and_refused_by_a_build():
    """TVM parses a body its return annotation does not fit and keeps the
    annotation; building it is the error."""
    text = func("return (x, x)", ret='R.Tensor((4, 16), dtype="float32")')
    f = parse(text, "t.tvms")
    assert f.ret_struct_info == relax.TensorStructInfo(i64(4, 16), "float32", 2)
    assert '-> R.Tensor((4, 16), dtype="float32"):' in f.script()
    with pytest.raises(VerifyError) as info:
        build(f)
    assert info.value.message.startswith("the function returns R.Tuple(")
    assert "return annotation is R.Tensor((4, 16)" in info.value.message
    assert info.value.span.line == 3


def test_binding_annotation_mismatch_is_kept_and_refused_by_a_build():
    """A binding whose annotation its value does not fit: TVM's well-formedness
    check refuses it, as the default parse does; with the check off the annotation
    is kept and a build refuses it."""
    text = func('y: R.Tensor((4,), "int32") = R.add(x, x)\nreturn y', ret="R.Tensor((4,))")
    with pytest.raises(VerifyError, match="y is annotated"):
        parse(text, "t.tvms")
    f = parse(text, "t.tvms", check_well_formed=False)
    assert bindings(f)[0].var.struct_info == relax.TensorStructInfo(i64(4), "int32", 1)
    assert 'y: R.Tensor((4,), dtype="int32") = R.add(x, x)' in f.script()
    with pytest.raises(VerifyError) as info:
        build(f)
    assert info.value.message == (
        'y is annotated R.Tensor((4,), dtype="int32") but its value is '
        'R.Tensor((4, 16), dtype="float32")'
    )
    assert info.value.span.line == 3


def test_a_bare_number_takes_the_annotated_scalar_dtype():
    text = func("i: T.int32 = 2\nh: T.float16 = 1\nb: T.int8 = 1.5\nreturn x")
    with pytest.raises(VerifyError, match="b is annotated R.Prim"):
        parse(text)
    f = parse(text, check_well_formed=False)
    values = [b.value.value for b in bindings(f)]
    assert values[0] == tir.IntImm("int32", 2)
    assert values[1] == tir.FloatImm("float16", 1.0)
    assert values[2] == tir.FloatImm("float64", 1.5)  # no silent truncation: kept, refused later
    with pytest.raises(VerifyError, match="b is annotated R.Prim"):
        build(f)


def test_distributed_tensor_sinfo_and_the_annotation_an_operator_needs():
    dt = 'R.DTensor((4, 8), "float32", "mesh[0]", "S[1]")'
    f = parse(func(f"y: {dt} = R.add(x, x)\nreturn y", params=f"x: {dt}", ret=dt))
    y = bindings(f)[0].var.struct_info
    assert y == relax.DTensorStructInfo(
        i64(4, 8), "float32", 2, device_mesh="mesh[0]", placement="S[1]"
    )
    assert y != relax.TensorStructInfo(i64(4, 8), "float32", 2)  # the placement counts
    msg, line, col = error_at(func("y = R.add(x, x)\nreturn y", params=f"x: {dt}"))
    assert msg.startswith("R.add on distributed tensors needs the binding's R.DTensor annotation")
    assert (line, col) == (3, 9)
    other = dt.replace("S[1]", "R")
    text = func(
        f'y: {other} = R.dist.redistribute(x, device_mesh="mesh[0]", placement="S[1]")\nreturn y',
        params=f"x: {dt}",
    )
    wrong = r'y is annotated R.DTensor\(.*"R"\) but its value is'
    with pytest.raises(VerifyError, match=wrong):
        parse(text)
    g = parse(text, check_well_formed=False)
    with pytest.raises(VerifyError, match=wrong):
        verify_function(g)  # kept by the parser with its check off, as TVM keeps it


def test_sinfo_args_rejected_in_0_27_module():
    text = "# from tvm.script import tirx as T\n" + func(
        'a = R.call_packed("f", x, sinfo_args=(R.Object,))\nreturn a'
    )
    msg, line, col = error_at(text)
    assert "ty_args=" in msg and (line, col) == (4, 31)


def test_call_tir_of_relax_function_and_wrong_arity():
    base = """
    @I.ir_module
    class Module:
        @R.function
        def f(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            return x

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = {call}
            return y
    """
    msg, line, col = error_at(
        src(base.format(call='R.call_tir(Module.f, (x,), out_sinfo=R.Tensor((4,), "float32"))'))
    )
    assert "R.call_tir calls a prim function, but f is a Relax function" == msg
    assert (line, col) == (9, 24)
    msg, line, col = error_at(src(base.format(call="Module.f(x, x)")))
    assert msg == "f takes 1 arguments (2 given)" and (line, col) == (9, 13)
    msg, line, col = error_at(src(base.format(call="Module.g(x)")))
    assert msg == "the module has no function named g" and (line, col) == (9, 13)


def test_symbolic_name_must_be_declared():
    msg, line, col = error_at(func("return x", params='x: R.Tensor((n, 4), "float32")'))
    assert "n" in msg and (line, col) == (2, 23)


def test_missing_else_and_mismatched_branch_names():
    params = 'x: R.Tensor((4, 16), "float32"), c: R.Tensor((), "bool")'
    msg, line, _ = error_at(func("if c:\n    r = x\nreturn x", params=params))
    assert msg == "a Relax if needs an else branch" and line == 3
    msg, line, col = error_at(func("if c:\n    r = x\nelse:\n    s = x\nreturn x", params=params))
    assert "same name (r and s)" in msg and (line, col) == (6, 9)


def test_assert_op_with_its_format_values_positional() -> None:
    """TVM prints every format value positionally before `format=`; the call keeps
    (condition, format, *values), the same IR as `format_args=[x, y]`."""
    text = func(
        """
        R.assert_op(R.const(True, "bool"), x, y, format=R.str("{} {}"))
        return x
        """,
        params='x: R.Tensor((), "int32"), y: R.Tensor((), "int32")',
    ).replace("@R.function", "@R.function(pure=False)")
    f = parse(text)
    call = bindings(f)[0].value
    assert [type(a).__name__ for a in call.args] == ["Constant", "StringImm", "Var", "Var"]
    assert [a.name for a in call.args[2:]] == ["x", "y"]
    assert 'R.assert_op(R.const(True, "bool"), x, y, format=R.str("{} {}"))' in f.script()
    keyword = text.replace('x, y, format=R.str("{} {}")', 'format_args=[x, y], format="{} {}"')
    assert parse(keyword).script() == f.script()


def test_device_shorthands_are_devices() -> None:
    """`R.cuda(1)` is TVM's shorthand of `R.device(device_type=2, index=1)` (DLPack's
    device types), which is what TVM prints of it."""
    text = (
        "# from tvm.script import relax as R\n\n@R.function\n"
        'def main(x: R.Tensor((4,), dtype="float32")):\n'
        "    y = R.hint_on_device(x, R.cuda(1))\n    z = R.hint_on_device(y, R.cpu())\n"
        "    return z\n"
    )
    printed = parse(text).script()
    assert 'R.hint_on_device(x, R.device(device_type=2, index=1), "global")' in printed
    assert 'R.hint_on_device(y, R.device(device_type=1, index=0), "global")' in printed
