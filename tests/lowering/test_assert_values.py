"""Asserts whose message reports values (a part that is an integer expression,
what checked builds use for the failing index): printed and parsed back, filled
in by the compiled kernel (called directly or through R.call_tir) and by the
reference evaluator, with the message's own `%` left alone."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.testing.reference import run_prim_func

T_HEADER = "# from tvm.script import tir as T\n\n"
VALUED = """@T.prim_func
def main(A: T.Buffer((8,), "int32"), n: T.int32):
    for i in range(8):
        assert i < n, ("RuntimeError", ["100% sure: i = ", i, ", n * 2 = ", n * 2])
        A[i] = i
"""
GRAPH = """# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fill(N: T.Buffer((1,), "int32"), A: T.Buffer((8,), "int32")):
        for i in range(8):
            assert i < N[0], ("RuntimeError", ["100% sure: i = ", i, ", n * 2 = ", N[0] * 2])
            A[i] = i

    @R.function
    def main(n: R.Tensor((1,), "int32")) -> R.Tensor((8,), "int32"):
        cls = Module
        y = R.call_tir(cls.fill, (n,), out_sinfo=R.Tensor((8,), "int32"))
        return y
"""
MESSAGE = re.escape("100% sure: i = 5, n * 2 = 10")


def valued() -> tir.PrimFunc:
    return tvmlite.parse(T_HEADER + VALUED)


def test_value_parts_parse_print_and_parse_back() -> None:
    func = valued()
    loop = func.body
    assert isinstance(loop, tir.For)
    check = loop.body.seq[0]
    assert isinstance(check, tir.AssertStmt)
    assert check.message[0] == "100% sure: i = " and check.message[1] is loop.loop_var
    text = func.script()
    assert '["100% sure: i = ", i, ", n * 2 = ", n * 2]' in text
    assert tvmlite.parse(text).script() == text


def test_a_value_part_must_be_an_integer() -> None:
    bad = VALUED.replace("n * 2]", "T.float32(1)]")
    with pytest.raises(tvmlite.ParseError, match="a message part must be a string or a scalar"):
        tvmlite.parse(T_HEADER + bad)


def test_kernel_fills_in_the_values() -> None:
    a = np.zeros(8, "int32")
    with pytest.raises(tvmlite.TVMLiteError, match=f"^main: assertion failed: {MESSAGE}$"):
        tvmlite.build(valued())["main"](a, 5)
    np.testing.assert_array_equal(a, [0, 1, 2, 3, 4, 0, 0, 0])
    tvmlite.build(valued())["main"](a, 8)  # nothing fails: no message


def test_host_passes_the_kernels_message_on() -> None:
    ex = tvmlite.build(tvmlite.parse(GRAPH))
    np.testing.assert_array_equal(ex["main"](np.array([8], "int32")), np.arange(8))
    with pytest.raises(tvmlite.TVMLiteError, match=f"R.call_tir of 'fill': {MESSAGE} \\(status"):
        ex["main"](np.array([5], "int32"))


def test_reference_evaluator_fills_in_the_values() -> None:
    with pytest.raises(tvmlite.TVMLiteError, match=f"^assertion failed: {MESSAGE}$"):
        run_prim_func(valued(), np.zeros(8, "int32"), 5)
