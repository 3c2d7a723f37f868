"""Checks shared by the tests that compare LegalizeOps with what TVM 0.27 printed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.legalize import OP_ATTRS, OP_KIND, OP_NAME
from tvmlite.transform import LegalizeOps


def strip_op_info(mod: IRModule) -> IRModule:
    """The module without the op-info attributes TVM does not print."""
    functions = {}
    for name, f in mod.functions.items():
        if isinstance(f, tir.PrimFunc):
            attrs = tuple(a for a in f.attrs if a[0] not in (OP_NAME, OP_KIND, OP_ATTRS))
            f = tir.PrimFunc(f.params, f.buffer_map, f.body, f.ret_type, attrs, f.s_tir)
        functions[name] = f
    return IRModule(functions, mod.attrs, mod.global_infos, mod.metadata, mod.dialect)


def legalize(source: str) -> IRModule:
    return LegalizeOps(dialect="tvm-0.27")(tvmlite.parse(source))


def tvm_comparison_tests(cases: dict[str, tuple[str, str]]) -> tuple[Callable, Callable]:
    """The two tests of a module of `cases` (name: (source, what TVM printed for its
    legalized module)), parametrized by case name: the legalized module equals TVM's
    (op-info attributes aside), and it prints as text that parses back to itself."""

    @pytest.mark.parametrize("name", sorted(cases))
    def test_matches_tvm(name: str) -> None:
        source, expected = cases[name]
        got = legalize(source)
        want = tvmlite.parse(expected)
        assert tvmlite.structural_equal(strip_op_info(got), want), got.script()

    @pytest.mark.parametrize("name", sorted(cases))
    def test_printed_kernels_reparse(name: str) -> None:
        got = legalize(cases[name][0])
        again = tvmlite.parse(got.script())
        assert tvmlite.structural_equal(strip_op_info(again), strip_op_info(got))

    return test_matches_tvm, test_printed_kernels_reparse
