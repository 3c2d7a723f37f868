"""Constructs of TVM's printed surface on a CPU build: those that compute run and
match NumPy; those that cannot run as written (GPU threads, free variables) fail
with a TVMLiteError that names the construct."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

import tvmlite

HEADER = "# from tvm.script import tirx as T\n\n"


def _build_error(body: str, params: str = 'A: T.Buffer((4,), "float32")') -> str:
    text = HEADER + f"@T.prim_func\ndef main({params}):\n" + textwrap.indent(body, "    ")
    mod = tvmlite.parse(text)
    with pytest.raises(tvmlite.TVMLiteError) as info:
        tvmlite.build(mod)
    return str(info.value)


def test_free_variable_has_no_value() -> None:
    body = 'n = T.int32()\nA[0] = T.Cast("float32", n)\n'
    text = (
        HEADER
        + '@T.prim_func\ndef main(A: T.Buffer((4,), "float32")):\n'
        + textwrap.indent(body, "    ")
    )
    with pytest.raises(tvmlite.ParseError, match=r":6:12: error: variable 'n' is used but nothing"):
        tvmlite.parse(text)  # TVM's well-formedness check, as TVM's parser runs it
    mod = tvmlite.parse(text, check_well_formed=False)
    with pytest.raises(tvmlite.TVMLiteError, match="variable 'n' has no value here"):
        tvmlite.build(mod)


def test_launch_thread_names_the_thread() -> None:
    body = 'tx = T.launch_thread("threadIdx.x", 4)\nA[tx] = T.float32(1.0)\n'
    message = _build_error(body)
    assert "T.launch_thread('threadIdx.x') launches a GPU thread" in message


def test_scope_id_names_the_gpu_scope() -> None:
    body = "bx, by = T.cta_id([2, 2])\nA[bx * 2 + by] = T.float32(1.0)\n"
    message = _build_error(body)
    assert "T.cta_id defines the ids of a GPU cta ('bx, by'): a CPU build cannot run it" in message
    assert ":5:14: T.cta_id" in message  # where it is written


def test_device_namespace_call_is_named() -> None:
    message = _build_error("T.cuda.thread_fence()\nA[0] = T.float32(1.0)\n")
    assert "T.cuda.thread_fence is not supported by the LLVM backend" in message


def test_integer_if_condition_runs() -> None:
    text = HEADER + textwrap.dedent(
        """\
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "uint8")):
            for i in range(4):
                if i % 2:
                    A[i] = T.float32(1.0)
                else:
                    A[i] = T.float32(2.0)
                if B[i]:
                    A[i] = A[i] + T.float32(10.0)
        """
    )
    a, b = np.zeros(4, "float32"), np.array([0, 3, 0, 255], "uint8")
    tvmlite.build(tvmlite.parse(text))["main"](a, b)
    np.testing.assert_array_equal(a, [2.0, 11.0, 2.0, 11.0])


@pytest.mark.parametrize("dtype", ["int4", "uint4", "float8_e4m3", "float6_e3m2fn"])
def test_narrow_dtype_is_named(dtype: str) -> None:
    body = 'A[0] = T.Cast("float32", B[0])\n'
    message = _build_error(body, f'A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "{dtype}")')
    assert f"the LLVM backend does not support dtype {dtype}" in message


def test_scalar_buffers_run() -> None:
    """0.27's `acc: T.float32` and the bare names of one-element buffers."""
    text = textwrap.dedent(
        """\
        # from tvm.script import ir as I
        # from tvm.script import tirx as T

        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), out: T.Buffer((1,), "float32")):
                acc: T.float32
                acc = T.float32(0.0)
                for i in range(8):
                    acc = acc + A[i]
                out = acc * T.float32(2.0)
        """
    )
    a, out = np.arange(8, dtype="float32"), np.zeros(1, "float32")
    tvmlite.build(tvmlite.parse(text))["main"](a, out)
    np.testing.assert_array_equal(out, [2 * a.sum()])


def test_unroll_keywords_run() -> None:
    text = HEADER + textwrap.dedent(
        """\
        @T.prim_func
        def main(A: T.Buffer((8,), "float32")):
            for i in T.serial(4, unroll=True):
                A[i] = T.float32(1.0)
            for i in T.serial(4, 8, unroll=False):
                A[i] = T.Cast("float32", i)
        """
    )
    a = np.zeros(8, "float32")
    tvmlite.build(tvmlite.parse(text))["main"](a)
    np.testing.assert_array_equal(a, [1, 1, 1, 1, 4, 5, 6, 7])


def test_init_without_reduce_axis_runs_every_instance() -> None:
    """As TVM lowers it: with no reduce axis the init has no condition."""
    text = HEADER + textwrap.dedent(
        """\
        @T.prim_func
        def main(A: T.Buffer((4, 3), "float32"), B: T.Buffer((4,), "float32")):
            for i, k in T.grid(4, 3):
                with T.sblock("sum"):
                    vi, vk = T.axis.remap("SS", [i, k])
                    with T.init():
                        B[vi] = T.float32(0.0)
                    B[vi] = B[vi] + A[vi, vk]
        """
    )
    a, b = np.arange(12, dtype="float32").reshape(4, 3), np.full(4, 7.0, "float32")
    tvmlite.build(tvmlite.parse(text))["main"](a, b)
    np.testing.assert_array_equal(b, a[:, 2])


def test_call_to_module_function_is_named() -> None:
    text = textwrap.dedent(
        """\
        # from tvm.script import ir as I
        # from tvm.script import tirx as T

        @I.ir_module
        class Module:
            @T.prim_func(private=True)
            def add(a: T.int32, b: T.int32) -> T.int32:
                return a + b

            @T.prim_func
            def main(A: T.Buffer((4,), "int32")):
                A[0] = Module.add(A[1], A[2])
        """
    )
    mod = tvmlite.parse(text)
    call = mod["main"].body.value
    assert call.dtype == "int32" and call.args[0].buffer.name == "A"
    with pytest.raises(tvmlite.TVMLiteError, match="a call to prim function 'add' inside TIR"):
        tvmlite.build(mod)


def test_buffer_views_run() -> None:
    text = HEADER + textwrap.dedent(
        """\
        @T.prim_func
        def main(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "int32")):
            A_flat = A.view(6)
            A_bits = A.view("int32")
            for i in range(6):
                A_flat[i] = T.Cast("float32", i)
            for i, j in T.grid(2, 3):
                B[i, j] = A_bits[i, j]
        """
    )
    a, b = np.zeros((2, 3), "float32"), np.zeros((2, 3), "int32")
    tvmlite.build(tvmlite.parse(text))["main"](a, b)
    np.testing.assert_array_equal(a, np.arange(6, dtype="float32").reshape(2, 3))
    np.testing.assert_array_equal(b, a.view("int32"))


def test_device_intrinsic_is_named() -> None:
    message = _build_error('A[0] = T.Cast("float32", T.vscale())\n')
    assert "T.vscale is not supported by the LLVM backend" in message


def test_tile_layout_is_refused_by_name() -> None:
    body = (
        "B = T.alloc_buffer((4,), layout=T.TileLayout(T.S[4:2]))\n"
        "B[0] = T.float32(1.0)\nA[0] = B[0]\n"
    )
    assert "buffer 'B' has a tirx layout (T.TileLayout)" in _build_error(body)


def test_default_and_absent_layouts_run() -> None:
    text = HEADER + textwrap.dedent(
        """\
        @T.prim_func
        def main(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32", layout=None)):
            C = T.alloc_buffer((2, 3), layout=T.TileLayout(T.S[(2, 3):(3, 1)]))
            for i, j in T.grid(2, 3):
                C[i, j] = A[i, j] * T.float32(2.0)
                B[i, j] = C[i, j]
        """
    )
    a, b = np.arange(6, dtype="float32").reshape(2, 3), np.zeros((2, 3), "float32")
    tvmlite.build(tvmlite.parse(text))["main"](a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_tile_operator_is_refused_by_name() -> None:
    body = "T.tile.add(A[0:4], A[0:4], T.float32(1.0))\n"
    assert "T.tile.add is not supported by the LLVM backend" in _build_error(body)


def test_vector_halves_run() -> None:
    """`T.vectorlow` / `T.vectorhigh` (golden tir/vector_halves.tvms): the first and
    last 8 lanes of 16, as TVM 0.27 computes them."""
    path = Path(__file__).parents[1] / "golden" / "tir" / "vector_halves.tvms"
    main = tvmlite.build(tvmlite.parse(path.read_text()))["main"]
    a = np.arange(16, dtype="int8") * 3
    high, low = np.zeros(8, "int8"), np.zeros(8, "int8")
    main(a, high, low)
    np.testing.assert_array_equal(high, a[8:])
    np.testing.assert_array_equal(low, a[:8])


def test_a_vector_half_of_another_element_type_is_named() -> None:
    params = 'A: T.Buffer((16,), "int8"), B: T.Buffer((8,), "int16")'
    body = 'v: T.int8x16 = A[T.Ramp(0, 1, 16)]\nB[T.Ramp(0, 1, 8)] = T.vectorhigh("int16x8", v)\n'
    assert "T.vectorhigh cannot take int16x8 out of int8x16" in _build_error(body, params)
