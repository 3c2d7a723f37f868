"""Forms TVM 0.27 prints that tvmlite reads and prints back the same way: a CUDA
function called with its source (`T.cuda.func_call`), the runtime's context handle
(`T.tvm_context_id()`), a typed module-level `R.ExternFunc`, the offset of a 0-d
matched buffer."""

from __future__ import annotations

import textwrap

import pytest

from tvmlite import ParseError, parse, structural_equal

HEADER = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n\n"


def module(body: str) -> str:
    return HEADER + "@I.ir_module\nclass Module:\n" + textwrap.indent(textwrap.dedent(body), "    ")


def reprints(text: str) -> str:
    """tvmlite's print of `text`, checked to parse back to the same module."""
    mod = parse(text, check_well_formed=False)
    printed = mod.script()
    assert structural_equal(parse(printed, check_well_formed=False), mod), printed
    return printed


def test_cuda_func_call_keeps_source_and_return_type():
    text = module(
        """
        @T.prim_func
        def f(A: T.Buffer((4,), "int32")):
            T.cuda.func_call("my_func", T.address_of(A[0]), source_code="__device__ void my_func(int* p) {\\n}\\n")
            p: T.let[T.handle] = T.cuda.func_call("offset", T.address_of(A[0]), 2, source_code="x", return_type=T.handle().ty)
            A[0] = T.cuda.func_call("get", source_code="y", return_type="int32")
        """
    )
    printed = reprints(text)
    assert 'source_code="__device__ void my_func(int* p) {\\n}\\n")' in printed
    assert 'source_code="x", return_type=T.handle().ty)' in printed
    assert 'T.cuda.func_call("get", source_code="y", return_type="int32")' in printed


def test_cuda_func_call_needs_its_source():
    text = module(
        """
        @T.prim_func
        def f():
            T.cuda.func_call("my_func")
        """
    )
    with pytest.raises(ParseError, match="source_code"):
        parse(text)


def test_tvm_context_id_is_a_handle():
    text = module(
        """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.call_extern("int32", "Run", A.data, T.tvm_context_id())
        """
    )
    assert "T.tvm_context_id()" in reprints(text)


def test_typed_extern_func():
    text = (
        "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
        "@I.ir_module\nclass Module:\n"
        '    ext = R.ExternFunc("ext", R.Callable((), R.Tensor(dtype="float32", ndim=2), True))\n'
        '    plain = R.ExternFunc("plain")\n'
    )
    printed = reprints(text)
    assert 'R.ExternFunc("ext", R.Callable((), R.Tensor(dtype="float32", ndim=2), True))' in printed
    assert 'plain = R.ExternFunc("plain")\n' in printed
    bad = text.replace('R.Callable((), R.Tensor(dtype="float32", ndim=2), True)', "R.Object")
    with pytest.raises(ParseError, match="R.Callable"):
        parse(bad)


def test_zero_offset_of_a_0d_match_buffer_is_printed():
    # a 0-d buffer's index dtype is TVM's default, int64: an int32 zero is not implied
    text = module(
        """
        @T.prim_func(s_tir=True)
        def f(A: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.sblock(""):
                    T.reads(A[i])
                    T.writes()
                    sub_A = T.match_buffer(A[i], (), elem_offset=0)
                    T.evaluate(sub_A[()])
        """
    )
    assert "sub_A = T.match_buffer(A[i], (), elem_offset=0)" in reprints(text)
