"""Checks shared by the tests that compare LegalizeOps with what TVM 0.27 printed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_mutator import ExprMutator
from tvmlite.dsl.tir_functor import StmtExprVisitor
from tvmlite.dsl.tir_mutator import StmtExprMutator, replace
from tvmlite.lowering.legalize import OP_ATTRS, OP_KIND, OP_NAME
from tvmlite.lowering.legalize.extern import is_index_check
from tvmlite.transform import LegalizeOps


class _DropIndexChecks(StmtExprMutator):
    """Removes the index-range asserts tvmlite puts before data-dependent stores and
    loads (scatter_elements, scatter_nd, index_put, ...). TVM leaves those unchecked,
    so an out-of-range index writes or reads out of bounds; tvmlite raises instead
    ("never a segfault, never silent garbage"). The rest of the kernel must still
    match TVM's exactly."""

    def visit_SeqStmt(self, s: tir.SeqStmt) -> tir.Stmt:
        kept = tuple(self.visit_stmt(x) for x in s.seq if not is_index_check(x))
        if len(kept) == 1:
            return kept[0]
        return replace(s, seq=kept) if len(kept) != len(s.seq) else super().visit_SeqStmt(s)


def _is_check_kernel(name: str, f: Any) -> bool:
    """Whether `f` is an `<op>_index_check` kernel (`extern.checked_indices`): so
    named (maybe with a uniquing suffix), and asserting index checks only."""
    if not isinstance(f, tir.PrimFunc) or "_index_check" not in name:
        return False
    found: list[bool] = []

    class _Find(StmtExprVisitor):
        def visit_AssertStmt(self, s: tir.AssertStmt) -> None:
            found.append(is_index_check(s))

    _Find().visit_stmt(f.body)
    return bool(found) and all(found)


class _DropCheckCalls(ExprMutator):
    """Drops the bindings `v = R.call_tir(<check kernel>, (a,), ...)`, `v` replaced
    by `a` where used."""

    def __init__(self, checks: set[str]) -> None:
        super().__init__()
        self.checks = checks

    def visit_VarBinding(self, b: relax.VarBinding) -> relax.Binding | None:
        v = b.value
        if (
            isinstance(v, relax.Call)
            and v.op == relax.Op("relax.call_tir")
            and isinstance(v.args[0], relax.GlobalVar)
            and v.args[0].name in self.checks
        ):
            self.var_remap[b.var] = self.visit_expr(v.args[1].fields[0])
            return None
        return super().visit_VarBinding(b)


def strip_op_info(mod: IRModule) -> IRModule:
    """The module without the op-info attributes TVM does not print, and without
    the index-range asserts tvmlite adds (see `_DropIndexChecks`). A gather reads
    through data-dependent indices inside a TE compute stage, where no assert can
    go, so tvmlite checks its index tensor first in a separate `<op>_index_check`
    kernel whose copy of the indices the gather then reads (`extern.checked_indices`);
    those kernels and their calls are dropped too (the call's result replaced by
    its argument), leaving the gather kernel and call TVM builds."""
    checks = {name for name, f in mod.functions.items() if _is_check_kernel(name, f)}
    functions = {}
    for name, f in mod.functions.items():
        if name in checks:
            continue
        if isinstance(f, relax.Function) and checks:
            f = _DropCheckCalls(checks).visit_expr(f)
        if isinstance(f, tir.PrimFunc):
            attrs = tuple(a for a in f.attrs if a[0] not in (OP_NAME, OP_KIND, OP_ATTRS))
            body = _DropIndexChecks().visit_stmt(f.body)
            f = tir.PrimFunc(f.params, f.buffer_map, body, f.ret_type, attrs, f.s_tir)
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
