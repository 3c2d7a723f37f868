"""TVM 0.27 tirx constructs on a CPU build (one-element buffers' `.source`, `&`/`|` on
bools, view chains, `T.decl_scalar`, `B.local(...)`, typed handles, device calls):
those that compute run and match NumPy; those that only make sense on a GPU fail with
a TVMLiteError naming the construct; bad forms fail at their place in the text."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir, tir_layout

HEADER = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n\n"


def _module(body: str, params: str) -> str:
    return HEADER + f"@T.prim_func\ndef main({params}):\n" + textwrap.indent(body, "    ")


def _build_error(body: str, params: str = 'A: T.Buffer((4,), "float32")') -> str:
    mod = tvmlite.parse(_module(body, params))
    with pytest.raises(tvmlite.TVMLiteError) as info:
        tvmlite.build(mod)
    return str(info.value)


def _parse_error(
    body: str, params: str = 'A: T.Buffer((4,), "float32"), n: T.int32'
) -> tvmlite.ParseError:
    with pytest.raises(tvmlite.ParseError) as info:
        tvmlite.parse(_module(body, params), filename="s.tvms")
    return info.value


def test_bool_flags_run_bitwise() -> None:
    """0.27 keeps `&`, `|`, `^` on bools as bitwise calls (TVM prints them back so)."""
    body = (
        "if (n == 0) & (m == 0):\n    A[0] = T.float32(1.0)\n"
        "if (n == 0) | (m == 0):\n    A[1] = T.float32(1.0)\n"
        "if (n == 0) ^ (m == 0):\n    A[2] = T.float32(1.0)\n"
    )
    mod = tvmlite.parse(_module(body, 'A: T.Buffer((4,), "float32"), n: T.int32, m: T.int32'))
    first = mod.body.seq[0].condition
    assert isinstance(first, tir.Call) and first.op == "bitwise_and" and first.dtype == "bool"
    main = tvmlite.build(mod)["main"]
    for n in (0, 1):
        for m in (0, 1):
            a = np.zeros(4, "float32")
            main(a, n, m)
            want = [n == 0 and m == 0, n == 0 or m == 0, (n == 0) != (m == 0), False]
            np.testing.assert_array_equal(a, np.array(want, "float32"))


def test_view_chain_runs() -> None:
    """`data=buffer_1.data` names the view it was declared along; the storage is src's."""
    body = textwrap.dedent(
        """\
        buffer = src.view(16, 4, 4, 4)
        buffer_1 = buffer.view(64, 16)
        blk = T.decl_buffer((4, 4), "int32", data=buffer_1.data, elem_offset=4)
        for i, j in T.grid(4, 4):
            dst[i, j] = blk[i, j]
        """
    )
    mod = tvmlite.parse(
        _module(body, 'src: T.Buffer((1024,), "int32"), dst: T.Buffer((4, 4), "int32")')
    )
    decl = mod.body.seq[2]
    assert isinstance(decl, tir.AllocBuffer) and decl.source is mod.body.seq[1].buffer
    src, dst = np.arange(1024, dtype="int32"), np.zeros((4, 4), "int32")
    tvmlite.build(mod)["main"](src, dst)
    np.testing.assert_array_equal(dst, src[4:20].reshape(4, 4))


def test_decl_scalar_runs() -> None:
    body = (
        'x = T.decl_scalar(T.float32, data=A.data, elem_offset=2, scope="global")\nB = x + A[0]\n'
    )
    a, b = np.array([1, 2, 3, 4], "float32"), np.zeros(1, "float32")
    tvmlite.build(
        tvmlite.parse(_module(body, 'A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32")'))
    )["main"](a, b)
    np.testing.assert_array_equal(b, [4.0])


def test_source_is_the_one_element_buffer_itself() -> None:
    body = 'T.tile.copy(B[1], A.source[0])\nT.cuda.ldg(A.source.data, "float32")\n'
    mod = tvmlite.parse(_module(body, 'A: T.Buffer((1,), "float32"), B: T.Buffer((4,), "float32")'))
    copy, ldg = (stmt.value for stmt in mod.body.seq)
    region = copy.args[1]
    assert isinstance(region, tir.BufferRegion) and region.buffer.name == "A"
    assert ldg.args[0] is region.buffer.data


def test_thread_local_view_is_refused_by_name() -> None:
    body = textwrap.dedent(
        """\
        R = T.alloc_local((2,))
        W = R.view(64, layout=T.TileLayout(T.S[(32, 2):(1 @ Axis.laneid, 1)]))
        mine = W.local()
        A[0] = mine[0]
        """
    )
    assert "has a tirx layout (T.TileLayout): a CPU build cannot place it" in _build_error(body)


@pytest.mark.parametrize(
    ("body", "params", "message"),
    [
        ("T.nvshmem.quiet()\n", "", "T.nvshmem.quiet is not supported by the LLVM backend"),
        (
            'A[0] = T.Cast("float32", T.buffer_offset(A[2]))\n',
            'A: T.Buffer((4,), "float32")',
            "T.buffer_offset is not supported by the LLVM backend",
        ),
        (
            "T.evaluate(T.address_of(M))\n",
            "M: T.TensorMap()",
            "T.address_of of a T.TensorMap() var (a CUDA tensor-map descriptor)",
        ),
        (
            'A[0] = T.Cast("float32", B[0])\n',
            'A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int1")',
            "the LLVM backend does not support dtype int1",
        ),
        (
            'A[0] = T.Cast("float32", B[0])\n',
            'A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "uint128")',
            "the LLVM backend does not support dtype uint128",
        ),
    ],
)
def test_gpu_only_constructs_are_named(body: str, params: str, message: str) -> None:
    assert message in _build_error(body, params)


@pytest.mark.parametrize(
    ("body", "message", "location"),
    [
        (
            "W = A.view(4, layout=T.TileLayout(T.S[(2, 2):(1 @ Axis.laneid, 1)]))\nL = W.local(3)\n",
            "W.local shape has 3 elements, but each thread holds a span of 2 of 'W'",
            (7, 9),
        ),
        ("L = A.local(4, scope=1)\n", "A.local takes a shape (dims) and layout=", (6, 9)),
        (
            "L = A.local(n)\n",
            "A.local shape is not constant, but each thread holds a span of 4",
            (6, 9),
        ),
        ("x: T.let[T.void]\n", "T.let needs a value", (6, 5)),
        (
            'm: T.let[T.TensorMap(1)] = T.tvm_stack_alloca("tensormap", 1)\n',
            "T.TensorMap() takes no arguments",
            (6, 14),
        ),
        ("x = T.decl_scalar(T.float32, data=A.data)\n", "T.decl_scalar needs scope=", (6, 9)),
        ("T.evaluate(T.buffer_offset(1))\n", "T.buffer_offset expects a buffer element", (6, 32)),
    ],
)
def test_bad_forms_are_located(body: str, message: str, location: tuple[int, int]) -> None:
    error = _parse_error(body)
    assert message in error.message
    assert (error.span.line, error.span.column) == location


def test_s_tir_scalars_and_flat_views_run() -> None:
    """An s_tir function's `lower: T.float32 = v` is a one-element buffer laid out
    `T.S[1:1]` (TVM 0.27 names it bare, `lower.source[0]` in regions); a view keeps
    the flat layout of the buffer it reshapes. Both place their elements row-major."""
    text = HEADER + textwrap.dedent(
        """\
        @T.prim_func(s_tir=True)
        def main(A: T.Buffer((16,), "float32"), D: T.Buffer((4, 4), "float32")):
            lower: T.float32 = T.float32(-0.5)
            A_2d = A.view(4, 4)
            for i, j in T.grid(4, 4):
                with T.sblock("clip"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A_2d[vi, vj], lower.source[0])
                    T.writes(D[vi, vj])
                    D[vi, vj] = T.max(A_2d[vi, vj], lower)
        """
    )
    mod = tvmlite.parse(text)
    lower = mod.body.block.body.seq[0].buffer
    assert lower.layout == tir_layout.row_major(lower.shape)
    a, d = np.linspace(-1, 1, 16, dtype="float32"), np.zeros((4, 4), "float32")
    tvmlite.build(mod)["main"](a, d)
    np.testing.assert_array_equal(d, np.maximum(a, -0.5).reshape(4, 4))


def test_view_data_names_the_view_and_runs() -> None:
    """`V.data` of a view is the storage V shares, kept as the view's (TVM 0.27's
    `buffer_data(V)`): it prints back `V.data` and a CPU build passes the storage."""
    body = 'V = A.view(2, 4)\nT.call_extern("handle", "memset", V.data, 0, 8)\n'
    mod = tvmlite.parse(_module(body, 'A: T.Buffer((8,), "float32")'))
    call = mod.body.seq[1].value
    assert call.args[1].op == "buffer_data" and call.args[1].args[0].buffer.name == "V"
    assert '"memset", V.data, 0, 8)' in mod.script()
    a = np.ones(8, "float32")
    tvmlite.build(mod)["main"](a)
    np.testing.assert_array_equal(a, [0, 0, 1, 1, 1, 1, 1, 1])


def test_a_target_given_as_a_dict_or_a_name_selects_the_kind() -> None:
    """`T.target({...})` (as TVM prints a target) and `T.target("llvm")` name the kind a
    prim function is for: an llvm one builds, a cuda one is refused by name."""

    def module(target: str) -> str:
        return HEADER + textwrap.dedent(
            f"""\
            @T.prim_func
            def main(A: T.Buffer((4,), "float32")):
                T.func_attr({{"target": {target}}})
                A[0] = T.float32(1.0)
            """
        )

    a = np.zeros(4, "float32")
    for target in ('T.target({"keys": ["cpu"], "kind": "llvm", "tag": ""})', 'T.target("llvm")'):
        tvmlite.build(tvmlite.parse(module(target)))["main"](a)
        np.testing.assert_array_equal(a, [1, 0, 0, 0])
    cuda = tvmlite.parse(module('T.target({"kind": "cuda"}, host="llvm")'))
    assert 'T.target({"kind": "cuda"}, host="llvm")' in cuda.script()
    with pytest.raises(tvmlite.TVMLiteError, match="target 'cuda'"):
        tvmlite.build(cuda)
