"""Mutants of valid modules (lines deleted or moved, tokens changed, numbers
replaced by 2**31, 10**30, 99999999999, 1e308, 0.5, ...) fail cleanly: parsing
gives a located ParseError or a module, and a module builds (checked) and runs on
random inputs or raises TVMLiteError, in a child process, never an internal
exception, a crash or a hang (issue 9).

CI runs a small sample; `TVMLITE_FUZZ=3000 python -m pytest tests/fuzz -s` runs
3000 mutants and prints the outcomes (`TVMLITE_FUZZ_SEED` picks other ones).
"""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import pytest
from mutants import LOCATED, fuzz, mutate, run_in_child

import tvmlite

SEEDS = sorted((Path(__file__).parent / "seeds").glob("*.tvms"))
GOLDEN = sorted((Path(__file__).parents[1] / "golden" / "corpus").glob("*.tvms"))
COUNT = int(os.environ.get("TVMLITE_FUZZ", "100"))
SEED = int(os.environ.get("TVMLITE_FUZZ_SEED", "0"))


@pytest.mark.parametrize("seed", range(8))
def test_parsed_mutants_fail_cleanly(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        try:
            tvmlite.parse(mutate(rng.choice(GOLDEN).read_text(), rng), filename="mutant.tvms")
        except tvmlite.ParseError as err:
            assert LOCATED.match(str(err)), str(err)


def test_built_and_run_mutants_fail_cleanly() -> None:
    report = fuzz([p.read_text() for p in SEEDS], COUNT, seed=SEED)
    print(f"\n{COUNT} mutants (seed {SEED}): {report.summary()}")
    assert not report.bad, "\n\n".join(report.bad[:5])
    assert report.counts["ran"] > 0  # mutants really are built and run


def test_seeds_build_and_run() -> None:
    for path in SEEDS:
        assert run_in_child(path.read_text()) == "ran", path.name


def test_the_harness_reports_crashes_and_internal_errors(monkeypatch) -> None:
    """What the fuzz test looks for, made to happen (the child inherits the patch)."""
    import mutants

    text = SEEDS[0].read_text()
    monkeypatch.setattr(mutants, "build_and_run", lambda *_: os.kill(os.getpid(), signal.SIGSEGV))
    assert run_in_child(text) == f"crash (signal {int(signal.SIGSEGV)})"
    monkeypatch.setattr(mutants, "build_and_run", lambda *_: {}["missing"])
    assert run_in_child(text).startswith("internal exception: KeyError")
    monkeypatch.setattr(mutants, "build_and_run", lambda *_: signal.pause())
    assert run_in_child(text, timeout=1) == "hang"
