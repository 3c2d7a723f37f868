"""Every ATen operator the importer converts, imported from a one-op program, built by
tvmlite and checked against PyTorch (cases_*.py list the programs)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import batches  # noqa: E402
import cases_elementwise  # noqa: E402
import cases_misc  # noqa: E402
import cases_nn  # noqa: E402
import cases_shape  # noqa: E402
from cases import Case  # noqa: E402

CASES: list[Case] = [
    *cases_elementwise.CASES,
    *cases_nn.CASES,
    *cases_shape.CASES,
    *cases_misc.CASES,
]
BATCHES = batches.batches(CASES)
_BATCH_OF = {case.id: i for i, batch in enumerate(BATCHES) for case in batch}
_DONE: dict[int, dict[str, batches.Outcome]] = {}


def _outcome(case: Case) -> batches.Outcome:
    index = _BATCH_OF[case.id]
    if index not in _DONE:
        _DONE[index] = batches.run_batch(BATCHES[index])
    return _DONE[index][case.id]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_operator(case: Case) -> None:
    batches.check(case, _outcome(case))


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_every_converter_has_a_case() -> None:
    from tvmlite.frontend.registry import CONVERTERS

    covered = {c.op for c in CASES}
    assert sorted(set(CONVERTERS) - covered) == []
