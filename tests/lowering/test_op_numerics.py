"""Numerics of every legalized operator: each case is built natively with
`tvmlite.build` and run on small inputs against a NumPy reference computed here
(case tables in op_cases_*.py). A meta-test keeps the table complete."""

from __future__ import annotations

from typing import Any

import numpy as np
import op_cases_attention
import op_cases_dynamic
import op_cases_elementwise
import op_cases_image
import op_cases_layout
import op_cases_nn
import op_cases_sampling
import op_cases_tensor
import op_cases_vision
import pytest
from op_cases_common import Case

import tvmlite
from tvmlite.dsl import relax
from tvmlite.lowering.legalize import legalized_ops

CASES = (
    op_cases_elementwise.CASES
    + op_cases_tensor.CASES
    + op_cases_nn.CASES
    + op_cases_attention.CASES
    + op_cases_layout.CASES
    + op_cases_image.CASES
    + op_cases_sampling.CASES
    + op_cases_dynamic.CASES
    + op_cases_vision.CASES
)

# Operators with a legalization rule that no case here can exercise. Keep tiny;
# every entry says why.
NOT_TESTABLE = {
    # No OpDef is registered for it (TVM's R.linear is a Python helper that emits
    # permute_dims + matmul + add), so TVMScript cannot spell it and LegalizeOps
    # never dispatches the rule; its expansion is covered by matmul/add cases.
    "relax.linear",
}

# rtol = atol by output dtype; a case may set its own.
TOLERANCE = {"float16": 4e-3, "float32": 1e-5, "float64": 1e-10}


def _check(got: Any, want: Any, tol: float | None, where: str = "out") -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple), f"{where}: expected a tuple, got {type(got).__name__}"
        assert len(got) == len(want), f"{where}: {len(got)} fields, expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _check(g, w, tol, f"{where}[{i}]")
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, expected {want.shape}"
    if want.dtype.kind == "f":
        t = TOLERANCE[want.dtype.name] if tol is None else tol
        np.testing.assert_allclose(
            got.astype("float64"), want.astype("float64"), rtol=t, atol=t, err_msg=where
        )
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_numerics(case: Case) -> None:
    ex = tvmlite.build(case.module())
    got = ex["main"](*(a.copy() for a in case.inputs))
    _check(got, case.ref(*case.inputs), case.tol)


def _called_ops(case: Case) -> set[str]:
    """Operators called in `main` of the case's module."""
    main = case.module().functions["main"]
    found: set[str] = set()

    def visit(e: Any) -> None:
        if isinstance(e, relax.Call):
            if isinstance(e.op, relax.Op):
                found.add(e.op.name)
            for a in e.args:
                visit(a)
        elif isinstance(e, relax.Tuple):
            for f in e.fields:
                visit(f)

    for block in main.body.blocks:
        for b in block.bindings:
            visit(b.value)
    return found


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_every_legalized_op_has_a_numerics_case() -> None:
    covered = set().union(*(_called_ops(c) for c in CASES))
    rules = set(legalized_ops())
    missing = sorted(rules - covered - NOT_TESTABLE)
    assert not missing, f"legalized operators without a numerics case: {missing}"
    stale = sorted(NOT_TESTABLE - (rules - covered))
    assert not stale, f"NOT_TESTABLE entries that are covered or have no rule: {stale}"
