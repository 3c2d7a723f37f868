"""Running cases: export a batch, import it with tvmlite, build and run it once, and
hand each case its own outputs next to PyTorch's. A batch that fails to import or
build is retried case by case, so a failure belongs to the case that caused it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from cases import Case, flat_outputs
from programs import export, op_names

import tvmlite
from tvmlite.frontend import from_exported_program
from tvmlite.lowering.target import Target

BATCH_SIZE = 24


@dataclass
class Outcome:
    """What one case gave: the ops its program had, tvmlite's and PyTorch's outputs,
    or the error that stopped it."""

    ops: set[str] = field(default_factory=set)
    got: list[np.ndarray] = field(default_factory=list)
    want: list[torch.Tensor] = field(default_factory=list)
    error: BaseException | None = None


def batches(cases: Sequence[Case]) -> list[list[Case]]:
    """Cases grouped so that one export serves each group: same decomposition, static
    and dynamic apart, retargeted cases alone."""
    groups: dict[tuple[bool, bool], list[Case]] = {}
    singles: list[list[Case]] = []
    for case in cases:
        if case.retarget is not None:
            singles.append([case])
        else:
            groups.setdefault((case.decompose, bool(case.dynamic)), []).append(case)
    out = [g[i : i + BATCH_SIZE] for g in groups.values() for i in range(0, len(g), BATCH_SIZE)]
    return out + singles


def run_batch(cases: Sequence[Case]) -> dict[str, Outcome]:
    try:
        return _run(cases)
    except Exception as err:  # noqa: BLE001 - retried case by case just below
        if len(cases) == 1:
            return {cases[0].id: Outcome(error=err)}
    results: dict[str, Outcome] = {}
    for case in cases:
        results.update(run_batch([case]))
    return results


def _run(cases: Sequence[Case]) -> dict[str, Outcome]:
    module, inputs, ep = export(cases, cases[0].decompose)
    names = op_names(ep)
    mod = from_exported_program(ep, run_ep_decomposition=False)
    # LLVM at -O0: the importer is what is tested here, and it halves the build time
    executable = tvmlite.build(mod, target=Target("llvm", opt_level=0))
    got = executable["main"](*[t.numpy() for t in inputs])
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    results: dict[str, Outcome] = {}
    at_in = at_out = 0
    with torch.no_grad():
        for case in cases:
            args = inputs[at_in : at_in + len(case.inputs)]
            at_in += len(case.inputs)
            fn: Any = case.reference or (
                module.parts[cases.index(case)] if isinstance(case.fn, torch.nn.Module) else case.fn
            )
            want = flat_outputs(fn(*args))
            outs = [np.asarray(g) for g in got[at_out : at_out + len(want)]]
            at_out += len(want)
            results[case.id] = Outcome(ops=names, got=outs, want=want)
    if at_out != len(got):
        raise AssertionError(f"the import returns {len(got)} outputs, PyTorch {at_out}")
    return results


def check(case: Case, outcome: Outcome) -> None:
    """Assert the case's program had its operator and tvmlite computed PyTorch's result."""
    if outcome.error is not None:
        raise outcome.error
    assert case.op in outcome.ops, f"the exported program has no {case.op}: {sorted(outcome.ops)}"
    assert len(outcome.got) == len(outcome.want)
    for got, want in zip(outcome.got, outcome.want, strict=True):
        expected = want.detach().numpy()
        assert got.shape == expected.shape, f"shape {got.shape}, PyTorch {expected.shape}"
        assert got.dtype == expected.dtype, f"dtype {got.dtype}, PyTorch {expected.dtype}"
        if case.check == "exact":
            np.testing.assert_array_equal(got, expected)
        elif case.check == "close":
            np.testing.assert_allclose(
                got.astype(np.float64),
                expected.astype(np.float64),
                rtol=case.rtol,
                atol=case.atol,
                equal_nan=True,
            )
