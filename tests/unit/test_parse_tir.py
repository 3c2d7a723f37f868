"""`@T.prim_func` text to `tir.PrimFunc`: every construct, the typing rules, and each
kind of error with its location. Snippets are copied from TVM-printed texts."""

from __future__ import annotations

import textwrap

import pytest

import tvmlite
from tvmlite.diagnostics import ParseError, Source, VerifyError
from tvmlite.dsl import tir
from tvmlite.dsl.parse.scope import ParseContext, Scope
from tvmlite.dsl.parse.tir.func import parse_prim_func, parse_tir_expr
from tvmlite.dsl.verify.tir import verify_prim_func
from tvmlite.dsl.walk import walk
from tvmlite.grammar import parse_expression, parse_syntax, syntax

CLASSIC, NEW = "classic", "tvm-0.27"


def _context(text: str, dialect: str, type_vars: tuple[str, ...] = ()) -> ParseContext:
    return ParseContext(dialect, Source(text, "t.tvms"), type_vars=set(type_vars))


def parse_all(text: str, dialect: str = CLASSIC, type_vars: tuple[str, ...] = ()) -> list:
    text = textwrap.dedent(text).strip() + "\n"
    module = parse_syntax(text, "t.tvms")
    ctx = _context(text, dialect, type_vars)
    funcs = [n for n in module.body if isinstance(n, syntax.FunctionDef)]
    return [parse_prim_func(f, ctx) for f in funcs]


def parse(text: str, dialect: str = CLASSIC, type_vars: tuple[str, ...] = ()) -> tir.PrimFunc:
    return parse_all(text, dialect, type_vars)[0]


def body_of(
    stmts: str, params: str = 'A: T.Buffer((16,), "float32")', dialect: str = CLASSIC
) -> tir.Stmt:
    indented = textwrap.indent(textwrap.dedent(stmts).strip(), "    ")
    return parse(f"@T.prim_func\ndef f({params}):\n{indented}\n", dialect).body


def expr_of(source: str, params: str = "", dialect: str = CLASSIC) -> tir.PrimExpr:
    """The value of `T.evaluate(<source>)` in a function with `params`."""
    stmt = body_of(f"T.evaluate({source})", params, dialect)
    assert isinstance(stmt, tir.Evaluate)
    return stmt.value


def error_of(text: str, dialect: str = CLASSIC, type_vars: tuple[str, ...] = ()) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_all(text, dialect, type_vars)
    return info.value


def where(error: ParseError) -> tuple[int, int]:
    assert error.span is not None
    return error.span.line, error.span.column


# ---------------------------------------------------------------- signatures


MATMUL = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 12), "float32"), C: T.Buffer((16, 12), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i, j, k in T.grid(16, 12, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def test_buffer_params_and_attrs():
    func = parse(MATMUL)
    assert [p.name for p in func.params] == ["A_handle", "B_handle", "C_handle"]
    assert all(p.dtype == "handle" for p in func.params)
    a = func.buffer_map[0][1]
    assert (a.name, a.dtype, a.shape) == (
        "A",
        "float32",
        (tir.IntImm("int32", 16), tir.IntImm("int32", 8)),
    )
    assert func.attrs == (("global_symbol", "main"), ("tir.noalias", True))
    assert not func.s_tir


def test_decorator_options():
    func = parse(
        '@T.prim_func(private=True, s_tir=True)\ndef f(A: T.Buffer((4,), "int8")):\n    A[0] = T.int8(1)\n',
        NEW,
    )
    assert func.attrs == () and func.s_tir
    assert isinstance(func.body, tir.BufferStore)  # no block, no root block (as in TVM)
    error = error_of("@T.prim_func(fast=True)\ndef f():\n    pass\n")
    assert "unexpected keyword argument 'fast'" in error.message and where(error) == (1, 14)


def test_buffer_keywords():
    func = parse(
        """
        @T.prim_func
        def f(a: T.handle):
            A = T.match_buffer(a, (4, 4), strides=(8, 1), elem_offset=2, scope="shared", align=64, offset_factor=1)
            A[0, 0] = T.float32(1)
        """
    )
    buf = func.buffer_map[0][1]
    assert buf.dtype == "float32"  # default of match_buffer
    assert buf.strides == (tir.IntImm("int32", 8), tir.IntImm("int32", 1))
    assert buf.elem_offset == tir.IntImm("int32", 2)
    assert (buf.scope, buf.align, buf.offset_factor) == ("shared", 64, 1)


def test_handle_match_buffer_with_symbolic_var():
    func = parse(
        """
        @T.prim_func
        def main(var_A: T.handle, var_B: T.handle):
            n = T.int64()
            A = T.match_buffer(var_A, (n, T.int64(8)), "float32")
            B = T.match_buffer(var_B, (n,), "float32")
            for i in range(n):
                B[i] = A[i, T.int64(0)]
        """
    )
    (_, a), (_, b) = func.buffer_map
    n = a.shape[0]
    assert isinstance(n, tir.Var) and n.dtype == "int64" and b.shape[0] is n
    loop = func.body
    assert isinstance(loop, tir.For) and loop.loop_var.dtype == "int64" and loop.extent is n


def test_quoted_dim_declared_later_in_body():
    func = parse(
        """
        @T.prim_func
        def f(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n * 4",), "float32")):
            n = T.int32()
            A[0] = B[0]
        """,
        NEW,
    )
    (_, a), (_, b) = func.buffer_map
    n = a.shape[0]
    assert isinstance(n, tir.Var) and n.dtype == "int32"
    assert b.shape[0] == tir.BinaryOp("mul", n, tir.IntImm("int32", 4), "int32")


def test_type_vars_are_fresh_per_function():
    f, g = parse_all(
        """
        @T.prim_func
        def f(A: T.Buffer((n, T.int64(8)), "float32"), B: T.Buffer((n,), "float32")):
            B[0] = A[0, 0]

        @T.prim_func
        def g(A: T.Buffer((n,), "float32")):
            A[0] = T.float32(0)
        """,
        NEW,
        type_vars=("n",),
    )
    fa, fb, ga = f.buffer_map[0][1], f.buffer_map[1][1], g.buffer_map[0][1]
    assert fa.shape[0].dtype == "int64" and fa.shape[0] is fb.shape[0]
    assert ga.shape[0] is not fa.shape[0]


def test_scalar_params_and_return_type():
    func = parse("@T.prim_func\ndef f(n: T.int32, x: T.float32) -> T.int32:\n    return n\n")
    assert [(p.name, p.dtype) for p in func.params] == [("n", "int32"), ("x", "float32")]
    assert func.ret_type == "int32" and func.buffer_map == ()
    assert func.body == tir.Return(func.params[0])


def test_func_attr_values():
    func = parse(
        "@T.prim_func(private=True)\ndef f():\n"
        '    T.func_attr({"tirx.noalias": True, "n": 3, "d": {"k": [1, "x"]}, "s": T.int64(2)})\n'
        "    pass\n",
        NEW,
    )
    assert func.attrs == (
        ("tirx.noalias", True),
        ("n", 3),
        ("d", tir.AttrDict((("k", (1, "x")),))),  # a nested dict prints back as a dict
        ("s", tir.IntImm("int64", 2)),
    )


# ---------------------------------------------------------------- loops and branches


def test_loop_kinds():
    stmt = body_of(
        """
        for i in T.parallel(8):
            for j in T.vectorized(2, 6):
                for k in T.unroll(4, annotations={"pragma": 1}):
                    for t in T.thread_binding(4, thread="threadIdx.x"):
                        for s in range(0, 16, 2):
                            A[s] = T.float32(0)
        """
    )
    kinds = []
    while isinstance(stmt, tir.For):
        kinds.append((stmt.kind, stmt.min.value, stmt.extent.value, stmt.thread, stmt.annotations))
        last = stmt
        stmt = stmt.body
    assert kinds == [
        ("parallel", 0, 8, "", ()),
        ("vectorized", 2, 4, "", ()),
        ("unroll", 0, 4, "", (("pragma", 1),)),
        ("thread_binding", 0, 4, "threadIdx.x", ()),
        ("serial", 0, 16, "", ()),
    ]
    assert last.step == tir.IntImm("int32", 2)


def test_range_with_symbolic_bounds_folds_extent():
    stmt = body_of(
        "for i in range(n, n + 4):\n    A[i] = T.float32(0)",
        'A: T.Buffer((16,), "float32"), n: T.int32',
    )
    assert isinstance(stmt, tir.For) and stmt.extent == tir.IntImm("int32", 4)


def test_grid_nests_serial_loops():
    stmt = body_of("for i, j in T.grid(T.int64(2), 3):\n    A[j] = T.float32(0)")
    assert isinstance(stmt, tir.For) and stmt.loop_var.dtype == "int64"
    assert isinstance(stmt.body, tir.For) and stmt.body.loop_var.dtype == "int32"


def test_if_elif_else_and_while():
    stmt = body_of(
        """
        for i in range(16):
            if i < 4:
                A[i] = T.float32(1)
            elif i < 8:
                A[i] = T.float32(2)
            else:
                while A[i] > T.float32(0):
                    A[i] = A[i] - T.float32(1)
        """
    )
    branch = stmt.body
    assert isinstance(branch, tir.IfThenElse)
    nested = branch.else_case
    assert isinstance(nested, tir.IfThenElse) and isinstance(nested.else_case, tir.While)


def test_break_continue_and_loop_controls():
    stmt = body_of("for i in range(4):\n    if i == 2:\n        break\n    T.continue_loop()")
    assert isinstance(stmt.body, tir.SeqStmt)
    assert isinstance(stmt.body.seq[0].then_case, tir.Break)
    assert isinstance(stmt.body.seq[1], tir.Continue)


# ---------------------------------------------------------------- blocks


def test_block_with_remap_init_and_root():
    func = parse(MATMUL)
    root = func.body
    assert isinstance(root, tir.BlockRealize) and root.block.name == "root"
    assert root.block.iter_vars == () and root.block.reads == ()
    realize = root.block.body.body.body.body
    block = realize.block
    assert block.name == "C" and [iv.kind for iv in block.iter_vars] == [
        "spatial",
        "spatial",
        "reduce",
    ]
    assert realize.iter_values[0].name == "i" and block.iter_vars[0].dom.extent == tir.IntImm(
        "int32", 16
    )
    assert [r.buffer.name for r in block.reads] == ["A", "B"]
    assert isinstance(block.init, tir.BufferStore)
    assert realize.predicate == tir.IntImm("bool", 1)


def test_sblock_axes_where_attrs():
    func = parse(
        """
        @T.prim_func(s_tir=True)
        def f(A: T.Buffer((8,), "float32")):
            for i in range(10):
                with T.sblock("b"):
                    vi = T.axis.spatial((2, 10), i)
                    T.where(i >= 2)
                    T.reads()
                    T.writes(A[vi - 2])
                    T.sblock_attr({"note": "x"})
                    A[vi - 2] = T.float32(0)
        """,
        NEW,
    )
    realize = func.body.block.body.body
    block = realize.block
    dom = block.iter_vars[0].dom
    assert (dom.min, dom.extent) == (tir.IntImm("int32", 2), tir.IntImm("int32", 8))
    assert isinstance(realize.predicate, tir.BinaryOp) and realize.predicate.kind == "ge"
    assert block.annotations == (("note", "x"),) and block.reads == ()


def test_classic_function_level_alloc_goes_to_root_block():
    func = parse(
        """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            tmp = T.alloc_buffer((4,))
            for i in range(4):
                tmp[i] = A[i]
        """
    )
    assert isinstance(func.body, tir.BlockRealize)
    assert [b.name for b in func.body.block.alloc_buffers] == ["tmp"]


def test_027_alloc_buffer_is_a_statement_and_sblock_alloc_is_root():
    func = parse(
        """
        @T.prim_func(s_tir=True)
        def f(A: T.Buffer((4,), "float32")):
            tmp = T.alloc_buffer((4,), "float32")
            acc = T.sblock_alloc_buffer((4,), "int32")
            loc = T.alloc_local((1,), "int64")
            tmp[0] = A[0]
        """,
        NEW,
    )
    root = func.body.block
    assert [b.name for b in root.alloc_buffers] == ["acc"]
    first, second = root.body.seq[:2]
    assert first == tir.AllocBuffer(first.buffer, "alloc_buffer")
    assert second.form == "alloc_local" and second.buffer.scope == "local"


def test_block_level_alloc_and_match_buffer():
    func = parse(
        """
        @T.prim_func
        def f(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("row"):
                    vi = T.axis.spatial(4, i)
                    T.reads(A[vi, 0:16])
                    T.writes(B[vi])
                    Arow = T.match_buffer(A[vi, 0:16], (16,), offset_factor=1)
                    tmp = T.alloc_buffer((1,))
                    tmp[0] = Arow[3]
                    B[vi] = tmp[0]
        """
    )
    block = func.body.block.body.body.block
    assert [b.name for b in block.alloc_buffers] == ["tmp"]
    match = block.match_buffers[0]
    assert match.buffer.shape == (tir.IntImm("int32", 16),)
    assert match.source.region[1] == tir.Range(tir.IntImm("int32", 0), tir.IntImm("int32", 16))


def test_inferred_regions():
    func = parse(
        """
        @T.prim_func
        def f(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 4), "float32")):
            for i, j in T.grid(6, 4):
                with T.block("t"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    local = T.alloc_buffer((1,))
                    local[0] = A[vj, vi]
                    for k in range(2):
                        B[vi, vj + k] = local[0]
        """
    )
    block = func.body.block.body.body.body.block
    (read,), (write,) = block.reads, block.writes
    assert read.buffer.name == "A" and read.region[0].min.name == "vj"
    assert read.region[0].extent == tir.IntImm("int32", 1)
    assert write.buffer.name == "B" and write.region[1].extent == tir.IntImm("int32", 2)


# ---------------------------------------------------------------- statements


def test_store_with_slice_is_a_ramp():
    stmt = body_of("for i in range(4):\n    A[i * 4:i * 4 + 4] = T.Broadcast(T.float32(1), 4)")
    store = stmt.body
    ramp = store.indices[0]
    assert isinstance(ramp, tir.Ramp) and ramp.lanes == 4 and ramp.dtype == "int32x4"


def test_classic_let_scopes_over_the_rest():
    stmt = body_of("x: T.float32 = A[0]\ny = x + T.float32(1)\nA[1] = y")
    assert isinstance(stmt, tir.LetStmt) and stmt.var.dtype == "float32"
    assert isinstance(stmt.body, tir.LetStmt) and isinstance(stmt.body.body, tir.BufferStore)


def test_027_bind_is_flat_and_let_is_scoped():
    stmt = body_of(
        "x: T.float32 = A[0]\ny = x\nz: T.let[T.float32] = y\nw: T.let = z\nA[1] = w", dialect=NEW
    )
    first, second, third = stmt.seq
    assert isinstance(first, tir.Bind) and isinstance(second, tir.Bind)
    assert isinstance(third, tir.LetStmt) and isinstance(third.body, tir.LetStmt)


def test_typed_binding_converts_literals():
    stmt = body_of('x: T.int64 = 3\nA[0] = T.Cast("float32", x)')
    assert stmt.value == tir.IntImm("int64", 3)


def test_evaluate_extern_assert_attr_return():
    stmt = body_of(
        """
        T.evaluate(0)
        T.call_extern("int32", "puts", 1)
        assert A[0] > T.float32(0), "positive"
        assert A[1] > T.float32(0), ("ValueError", ["a", "b"])
        with T.attr(0, "pragma_scope", "seq"):
            A[0] = T.float32(1)
        T.attr({"pragma_scope": "seq"})
        return 0
        """
    )
    ev, ext, a1, a2, attr, flat, ret = stmt.seq
    assert ev == tir.Evaluate(tir.IntImm("int32", 0))
    assert ext.value.op == "call_extern" and ext.value.args[0] == tir.StringImm("puts")
    assert (a1.error_kind, a1.message) == ("RuntimeError", ("positive",))
    assert (a2.error_kind, a2.message) == ("ValueError", ("a", "b"))
    assert attr.key == "pragma_scope" and attr.value == tir.StringImm("seq")
    assert isinstance(attr.body, tir.BufferStore) and flat.body is None
    assert isinstance(ret, tir.Return)


def test_aug_assign_on_buffer():
    store = body_of("A[0] += T.float32(2)")
    assert isinstance(store.value, tir.BinaryOp) and store.value.kind == "add"


# ---------------------------------------------------------------- expression typing


def test_int_literal_adopts_other_operand():
    e = expr_of("n + 1", "n: T.int64")
    assert e.dtype == "int64" and e.b == tir.IntImm("int64", 1)
    assert expr_of("1 + 2").dtype == "int32"
    assert expr_of("x * 2", "x: T.float16").b == tir.FloatImm("float16", 2.0)


def test_float_literal_rules():
    assert expr_of("x + 0.5", "x: T.float16").b == tir.FloatImm("float16", 0.5)
    mixed = expr_of("n * 0.5", "n: T.int32")
    assert mixed.dtype == "float32" and mixed.a == tir.Cast("float32", mixed.a.value)
    assert expr_of("True") == tir.IntImm("bool", 1)


def test_mixed_widths_promote():
    e = expr_of("a + b", "a: T.int32, b: T.int64")
    assert e.dtype == "int64" and isinstance(e.a, tir.Cast)


def test_negation():
    assert expr_of("-1") == tir.IntImm("int32", -1)
    neg = expr_of("-x", "x: T.float32")
    assert neg == tir.BinaryOp("mul", neg.a, tir.FloatImm("float32", -1.0), "float32")


def test_operators():
    ops = {"x // y": "floordiv", "x % y": "floormod", "x < y": "lt", "x != y": "ne"}
    for text, kind in ops.items():
        assert expr_of(text, "x: T.int32, y: T.int32").kind == kind
    assert expr_of("x / y", "x: T.float32, y: T.float32").kind == "div"
    assert expr_of("x & 255", "x: T.int32").op == "bitwise_and"
    assert expr_of("x << 2", "x: T.int32").op == "shift_left"
    assert expr_of("~x", "x: T.int32").op == "bitwise_not"
    both = expr_of("x < 1 and not x > 5 or x == 3", "x: T.int32")
    assert both.kind == "or" and both.a.kind == "and" and isinstance(both.a.b, tir.Not)
    chain = expr_of("0 <= x < 4", "x: T.int32")
    assert chain.kind == "and" and chain.dtype == "bool"
    ite = expr_of("x if x > 0 else 0", "x: T.int32")
    assert ite.op == "if_then_else" and ite.args[2] == tir.IntImm("int32", 0)


def test_dtype_constructors():
    assert expr_of("T.int64(3)") == tir.IntImm("int64", 3)
    assert expr_of("T.uint8(7)") == tir.IntImm("uint8", 7)
    assert expr_of("T.float32(0.5)") == tir.FloatImm("float32", 0.5)
    assert expr_of('T.float32("inf")') == tir.FloatImm("float32", float("inf"))
    assert expr_of("T.float32(-1e30)") == tir.FloatImm("float32", -1e30)
    assert expr_of("T.bool(True)") == tir.IntImm("bool", 1)
    assert expr_of("T.bfloat16(1)") == tir.FloatImm("bfloat16", 1.0)
    vec = expr_of("T.float32x4(1.0)")
    assert isinstance(vec, tir.Broadcast) and vec.lanes == 4 and vec.dtype == "float32x4"
    cast = expr_of("T.float32(n)", "n: T.int32")
    assert isinstance(cast, tir.Cast) and cast.dtype == "float32" and cast.value.name == "n"


def test_casts_and_selects():
    cast = expr_of('T.Cast("float32", x)', "x: T.float32")
    assert isinstance(cast, tir.Cast)  # the node form never folds
    assert expr_of('T.cast(x, "float32")', "x: T.float32").name == "x"
    assert expr_of('T.cast(3, "int64")') == tir.IntImm("int64", 3)
    sel = expr_of("T.Select(x > 0, x, 0)", "x: T.int64")
    assert isinstance(sel, tir.Select) and sel.false_value == tir.IntImm("int64", 0)
    assert expr_of("T.if_then_else(x > 0, x, 1)", "x: T.int32").op == "if_then_else"
    assert expr_of("T.max(x, 0)", "x: T.float32").kind == "max"


def test_math_intrinsics():
    for name in ("exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "exp2", "fabs", "atan"):
        call = expr_of(f"T.{name}(x)", "x: T.float32")
        assert (call.op, call.dtype) == (name, "float32")
    assert expr_of("T.pow(x, 2)", "x: T.float16").args[1] == tir.FloatImm("float16", 2.0)
    assert expr_of("T.isnan(x)", "x: T.float32").dtype == "bool"
    assert expr_of("T.floor(n)", "n: T.int32").name == "n"
    absolute = expr_of("T.abs(a)", "a: T.int32")
    assert isinstance(absolute, tir.Select)  # TVM: Select(a >= 0, a, 0 - a)
    assert expr_of("T.abs(x)", "x: T.float32").op == "fabs"
    assert expr_of("T.popcount(a)", "a: T.uint32").op == "popcount"


def test_explicit_forms():
    pairs = {"T.Add": "add", "T.FloorDiv": "floordiv", "T.truncdiv": "div", "T.truncmod": "mod"}
    for fn, kind in pairs.items():
        assert expr_of(f"{fn}(a, b)", "a: T.int32, b: T.int32").kind == kind
    assert expr_of("T.EQ(a, 1)", "a: T.int32").dtype == "bool"
    assert expr_of("T.And(a > 1, a < 3)", "a: T.int32").kind == "and"
    assert isinstance(expr_of("T.Not(a > 1)", "a: T.int32"), tir.Not)


def test_limits_and_bits():
    assert expr_of('T.min_value("float32")') == tir.FloatImm("float32", -3.4028234663852886e38)
    assert expr_of('T.max_value("int8")') == tir.IntImm("int8", 127)
    assert expr_of('T.infinity("float16")') == tir.FloatImm("float16", float("inf"))
    assert expr_of('T.reinterpret("int32", x)', "x: T.float32").dtype == "int32"
    assert expr_of("T.shift_right(T.bitwise_or(a, 1), 1)", "a: T.int32").op == "shift_right"


def test_misc_expressions():
    assert expr_of("T.likely(a < 2)", "a: T.int32").op == "likely"
    ramp = expr_of("T.Ramp(a, 1, 4)", "a: T.int32")
    assert ramp.dtype == "int32x4"
    packed = expr_of('T.call_packed("f", a)', "a: T.int32")
    assert packed.dtype == "int32" and packed.args[0] == tir.StringImm("f")
    addr = expr_of("T.address_of(A[0])", 'A: T.Buffer((4,), "float32")')
    assert addr.dtype == "handle" and isinstance(addr.args[0], tir.BufferLoad)
    scalar = expr_of("S[()]", 'S: T.Buffer((), "int8")')
    assert isinstance(scalar, tir.BufferLoad) and scalar.indices == ()
    load = expr_of("A[T.Ramp(0, 1, 4)]", 'A: T.Buffer((16,), "float32")')
    assert load.dtype == "float32x4"
    assert expr_of('"text"') == tir.StringImm("text")


def test_let_expression():
    stmt = body_of('v = T.int32()\nA[0] = T.Cast("float32", T.Let(v * v, where={v: 3}))')
    let = stmt.value.value
    assert isinstance(let, tir.Let) and let.value == tir.IntImm("int32", 3)


def test_parse_tir_expr_for_shapes():
    text = "n + 1"
    node = parse_expression(text)
    scope = Scope()
    n = tir.Var("n", "int64")
    scope.define("n", n)
    ctx = _context(text, NEW)
    e = parse_tir_expr(node, scope, ctx, expected_dtype="int64")
    assert e == tir.BinaryOp("add", n, tir.IntImm("int64", 1), "int64")
    assert parse_tir_expr(parse_expression("4"), scope, ctx, "int64") == tir.IntImm("int64", 4)
    ctx = _context("m", NEW, ("m",))
    first = parse_tir_expr(parse_expression("m"), scope, ctx, "int64")
    assert first.dtype == "int64" and parse_tir_expr(parse_expression("m"), scope, ctx) is first


# ---------------------------------------------------------------- errors


def _err(stmts: str, params: str = 'A: T.Buffer((16,), "float32")', dialect: str = CLASSIC):
    indented = textwrap.indent(textwrap.dedent(stmts).strip(), "    ")
    return error_of(f"@T.prim_func\ndef f({params}):\n{indented}\n", dialect)


@pytest.mark.parametrize(
    ("stmts", "message", "location"),
    [
        ("A[0] = y", "undefined name 'y'", (3, 12)),
        ("A[0] = T.foo(1)", "unknown TIR builtin T.foo", (3, 12)),
        ("A[0] = T.exp(A[0], A[1])", "T.exp expects 1 argument, got 2", (3, 12)),
        ("A[0] = T.exp(A[0], fast=1)", "T.exp got an unexpected keyword argument 'fast'", (3, 24)),
        ('A[0] = T.Cast("float33", A[0])', "unknown dtype 'float33'", (3, 19)),
        ("A[0] = T.float33(1)", "unknown dtype 'float33'", (3, 12)),
        (
            "A[0, 1] = T.float32(0)",
            "buffer 'A' has 1 dimension but is indexed with 2 indices",
            (3, 5),
        ),
        ("x = 1\nx[0] = 1", "cannot store to 'x': it is not a buffer", (4, 5)),
        (
            "for i in range(4):\n    pass\nA[i] = T.float32(0)",
            "'i' is used outside its scope",
            (5, 7),
        ),
        (
            "A[0] = T.meta_var(1)",
            "T.meta_var is not supported: it needs Python evaluation",
            (3, 12),
        ),
        ("T.evaluate(lambda x: x)", "lambda is not supported: it needs Python evaluation", (3, 16)),
        ('A[0] = T.Cast("float32", 1 / 2)', "'/' on integers is ambiguous", (3, 30)),
        ("A[0] = T.int32(1.5)", "T.int32 expects an integer", (3, 20)),
        ("A[0] = T.uint8(300)", "value 300 is out of range for uint8", (3, 20)),
        ("T.reads(A[0])", "T.reads must be directly inside a T.block/T.sblock", (3, 5)),
        ("for i in T.grid(2, 3):\n    pass", "T.grid has 2 extents for 1 loop variables", (3, 9)),
        ("A = T.alloc_buffer((4,))", "'A' is already a buffer and cannot be redefined", (3, 5)),
        ("break", "break outside a loop", (3, 5)),
        (
            "with T.block():\n    vi = T.axis.spatial(4, 0)\n    vi = T.axis.spatial(4, 1)",
            "block axis 'vi' is defined twice",
            (5, 9),
        ),
    ],
)
def test_errors_are_located(stmts, message, location):
    error = _err(stmts)
    assert message in error.message
    assert where(error) == location


def test_duplicate_parameter():
    error = error_of("@T.prim_func\ndef f(n: T.int32, n: T.int32):\n    pass\n")
    assert error.message == "duplicate parameter 'n'" and where(error) == (2, 19)


def test_error_renders_with_file_and_caret():
    error = _err("A[0] = y")
    assert str(error).startswith("t.tvms:3:12: error: undefined name 'y'")
    assert str(error).rstrip().endswith("^")


# ---------------------------------------------------------------- verifier


def _verify_err(stmts: str, params: str = 'A: T.Buffer((16, 4), "float32")') -> VerifyError:
    with pytest.raises(VerifyError) as info:
        body_of(stmts, params)
    return info.value


def test_verify_region_rank():
    error = _verify_err(
        """
        for i in range(16):
            with T.block("b"):
                vi = T.axis.spatial(16, i)
                T.reads(A[vi])
                T.writes(A[vi, 0])
                A[vi, 0] = T.float32(0)
        """
    )
    assert "region of buffer 'A' has 1 index but the buffer has 2 dimensions" in error.message
    assert where(error) == (6, 21)


# A row sum of A (16x4) into B whose block declares its axes with `{axes}`.
_ROW_SUM = """
for i, k in T.grid(16, 4):
    with T.block("sum"):
{axes}
        T.reads(A[vi, vk])
        T.writes(B[vi])
        with T.init():
            B[vi] = T.float32(0)
        B[vi] = B[vi] + A[vi, vk]
"""


def test_init_without_reduce_axis_is_accepted_as_tvm() -> None:
    """TVM's parser accepts T.init() in a block with no reduce axis and spatial axes
    that are only read; the init then runs at every instance of the block."""
    params = 'A: T.Buffer((16, 4), "float32"), B: T.Buffer((16,), "float32")'
    for axes in (
        ['vi, vk = T.axis.remap("SS", [i, k])'],
        ["vi = T.axis.spatial(16, i)", "vk = T.axis.spatial(4, k)", "vr = T.axis.reduce(1, 0)"],
    ):
        root = body_of(_ROW_SUM.format(axes="\n".join(" " * 8 + a for a in axes)), params)
        blocks = [n for n in walk(root) if isinstance(n, tir.Block) and n.name == "sum"]
        assert len(blocks) == 1 and blocks[0].init is not None


def test_verify_negative_extent_and_zero_is_fine():
    """As in TVM, a loop with a negative extent is valid and runs no iteration."""
    body_of("for i in range(0):\n    A[i] = T.float32(0)")
    loop = body_of("for i in range(4, 2):\n    A[i] = T.float32(0)")
    assert isinstance(loop, tir.For) and loop.extent.value == -2


def test_verify_binding_out_of_domain():
    error = _verify_err(
        """
        for i in range(16):
            with T.block("b"):
                vi = T.axis.spatial(8, i)
                A[vi, 0] = T.float32(0)
        """
    )
    assert "outside its domain [0, 8)" in error.message and where(error) == (5, 13)
    error = _verify_err(
        'with T.block("c"):\n    vi = T.axis.spatial(4, 9)\n    A[vi, 0] = T.float32(0)'
    )
    assert "ranges over [9, 9]" in error.message


def free_body(stmts: str, dialect: str = CLASSIC) -> tir.Stmt:
    """The body of a function that TVM's well-formedness check refuses: parsed with
    the check off (the decorator's keyword), after the default parse refused it."""
    header = 'def f(A: T.Buffer((16,), "float32")):\n'
    body = textwrap.indent(stmts, "    ") + "\n"
    with pytest.raises(VerifyError) as refused:
        parse("@T.prim_func\n" + header + body, dialect)
    assert refused.value.span is not None and refused.value.span.line == 4  # the use
    return parse("@T.prim_func(check_well_formed=False)\n" + header + body, dialect).body


def test_verify_free_variable_and_scope():
    # a declared var that nothing binds is free, as TVM's parser keeps it with its check off
    store = free_body("v = T.int32()\nA[v] = T.float32(0)")
    assert isinstance(store, tir.BufferStore) and store.indices[0].name == "v"
    # a loop var used after its loop only comes from IR built in code
    i = tir.Var("i", "int32")
    buf = tir.Buffer("A", tir.Var("A", "handle"), "float32", (tir.IntImm("int32", 4),))
    zero = tir.FloatImm("float32", 0.0)
    loop = tir.For(i, tir.IntImm("int32", 0), tir.IntImm("int32", 4), tir.SERIAL, tir.Evaluate(i))
    after = tir.BufferStore(buf, zero, (i,))
    handle = tir.Var("A_handle", "handle")
    func = tir.PrimFunc((handle,), ((handle, buf),), tir.SeqStmt((loop, after)))
    with pytest.raises(VerifyError, match="variable 'i' is used outside its scope"):
        verify_prim_func(func)


def test_verify_free_buffer_and_scope():
    # `B = T.Buffer(...)` in a body names a buffer no statement declares: free, as in TVM
    store = free_body("B = T.Buffer((4,))\nA[0] = B[1]", dialect=NEW)
    assert isinstance(store, tir.BufferStore) and store.value.buffer.name == "B"
    # an allocation used after the loop that holds it only comes from IR built in code
    i, four = tir.Var("i", "int32"), tir.IntImm("int32", 4)
    inner = tir.Buffer("B", tir.Var("B", "handle"), "float32", (four,))
    zero = tir.FloatImm("float32", 0.0)
    body = tir.SeqStmt((tir.AllocBuffer(inner), tir.BufferStore(inner, zero, (i,))))
    loop = tir.For(i, tir.IntImm("int32", 0), four, tir.SERIAL, body)
    after = tir.Evaluate(tir.BufferLoad(inner, (tir.IntImm("int32", 0),), "float32"))
    func = tir.PrimFunc((), (), tir.SeqStmt((loop, after)))
    with pytest.raises(VerifyError, match="buffer 'B' is used outside its scope"):
        verify_prim_func(func)


@pytest.mark.parametrize(
    "body, rooted",
    [
        ("for i in range(4):\n    A[i] = T.float32(0.0)", False),
        ("T.evaluate(0)", False),
        ("B = T.sblock_alloc_buffer((4,))\nfor i in range(4):\n    A[i] = B[i]", True),
    ],
    ids=["loop", "evaluate", "root-alloc"],
)
def test_s_tir_function_has_a_root_block_only_where_tvm_adds_one(body: str, rooted: bool):
    """TVM 0.27's own output for these (checked against TVM): a block-free `s_tir`
    function has no root block, so its text comes back as it was."""
    lines = ["@T.prim_func(s_tir=True)", 'def main(A: T.Buffer((4,), "float32")):']
    if rooted:
        lines.append('    # with T.sblock("root"):')
    lines += ["    " + line for line in body.splitlines()]
    header = "# from tvm.script import tirx as T\n# from tvm.tirx.layout import Axis\n\n"
    text = header + "\n".join(lines) + "\n"
    func = tvmlite.parse(text)
    assert func.s_tir and isinstance(func.body, tir.BlockRealize) == rooted
    assert func.script() == text


@pytest.mark.parametrize(
    "params, use, message",
    [
        ('A: T.Buffer((4,), "float32")', "A.strides[0]", "buffer 'A' has no strides"),
        ('A: T.Buffer((4,), "float32", strides=("s",))', "A.strides[1]", "has 1 stride"),
        ('A: T.Buffer((4,), "float32", strides=("s",))', "A.strides[0, 1]", "has 1 stride"),
    ],
)
def test_bad_stride_reference(params: str, use: str, message: str):
    error = _err(f'A[0] = T.Cast("float32", {use})', params, dialect=NEW)
    assert message in error.message and where(error) == (3, 30)


def test_tuple_declaration_and_quoted_strides():
    func = parse(
        '@T.prim_func\ndef f(A: T.Buffer(("m", "n"), "float32", strides=("s0", 1))):\n'
        "    m, n = T.int32(), T.int64()\n"
        '    A[0, 0] = T.Cast("float32", m + A.strides[0])\n',
        NEW,
    )
    buffer = func.buffer_map[0][1]
    m, n = buffer.shape
    assert (m.name, m.dtype, n.dtype) == ("m", "int32", "int64")
    value = func.body.value.value
    assert value.b is buffer.strides[0] and value.a is m


@pytest.mark.parametrize(
    "reducer, message",
    [
        ("T.comm_reducer(lambda x: x, [T.float32(0)])", "takes 2 parameters for 1 identity"),
        ("T.comm_reducer(lambda x, y: (x, y), [T.float32(0)])", "returns 2 values for 1"),
        ("T.comm_reducer(1, [T.float32(0)])", "T.comm_reducer expects (lambda x, y: ...,"),
    ],
)
def test_bad_comm_reducer(reducer: str, message: str):
    error = _err(f'T.attr({reducer}, "reduce_scope", 0)\nA[0] = T.float32(0)', dialect=NEW)
    assert message in error.message and error.span.line == 3


def test_comm_reducer_outside_an_attribute():
    error = _err("A[0] = T.comm_reducer(lambda x, y: x + y, [T.float32(0)])", dialect=NEW)
    assert 'node of T.attr(..., "reduce_scope", ...)' in error.message


def test_comm_reducer_lambda_defines_typed_vars():
    stmt = body_of(
        'T.attr(T.comm_reducer(lambda x, y: x * y, [T.int8(1)]), "reduce_scope", 0)\n'
        "A[0] = T.float32(0)",
        dialect=NEW,
    )
    reducer = stmt.seq[0].node
    assert isinstance(reducer, tir.CommReducer)
    assert [v.dtype for v in (*reducer.lhs, *reducer.rhs)] == ["int8", "int8"]
    assert reducer.result[0].a is reducer.lhs[0] and reducer.result[0].b is reducer.rhs[0]


def test_param_strides_and_offset_print_bare():
    """TVM 0.27 quotes symbolic shape vars met first in a signature but writes
    strides and offsets over scalar params (printed later) bare; a quoted stride
    would be a fresh var, so quoting these would change the function."""
    signature = (
        'def f(A: T.Buffer(("m",), "float32", strides=(p,), elem_offset=q), m: T.int32, '
        "p: T.int32, q: T.int32):"
    )
    text = f"# from tvm.script import tirx as T\n# from tvm.tirx.layout import Axis\n\n@T.prim_func\n{signature}\n    A[0] = T.float32(0.0)\n"
    func = tvmlite.parse(text)
    assert func.script(dialect=NEW) == text
    buffer, params = func.buffer_map[0][1], func.params
    assert buffer.strides[0] is params[2] and buffer.elem_offset is params[3]


def test_a_block_with_axes_reads_loops_only_through_its_bindings():
    """TVM's check refuses a loop var read inside a block with axes (TVM's
    cross-thread reduction tests print such blocks); an opaque block may read it."""
    loop_in_block = (
        "for i in range(16):\n"
        '    with T.block("b"):\n'
        "        vi = T.axis.spatial(16, i)\n"
        '        A[vi] = T.Cast("float32", i)\n'
    )
    header = '@T.prim_func\ndef f(A: T.Buffer((16,), "float32")):\n'
    with pytest.raises(VerifyError, match="loop variable 'i' is read inside block 'b'") as info:
        parse(header + textwrap.indent(loop_in_block, "    "))
    assert (info.value.span.line, info.value.span.column) == (6, 21)  # the cast reading it
    lenient = header.replace("@T.prim_func", "@T.prim_func(check_well_formed=False)")
    assert isinstance(parse(lenient + textwrap.indent(loop_in_block, "    ")), tir.PrimFunc)
    opaque = 'for i in range(16):\n    with T.block("b"):\n        A[i] = T.float32(0)\n'
    assert isinstance(parse(header + textwrap.indent(opaque, "    ")), tir.PrimFunc)
