"""benchmarks/dynamic.py compares a static and a dynamic export of a model of this
test's own (a small MLP, its batch a torch.export.Dim): both imported, built,
checked against PyTorch, timed; a build that computes something else stops the
run. No timing asserted."""

import argparse
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import dynamic  # noqa: E402

torch = pytest.importorskip("torch")  # the importer's extra, installed in CI


def _mlp() -> tuple[object, tuple[object, ...], dict[str, object]]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(24, 40), torch.nn.GELU(), torch.nn.Linear(40, 8)
    ).eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    return model, (torch.randn(5, 24),), {"input": {0: batch}}


def test_static_and_dynamic_builds_are_compared() -> None:
    model, inputs, shapes = _mlp()
    args = dynamic.options(["--rounds", "2", "--min-ms", "1"])
    row = dynamic.compare("mlp", "batch", model, inputs, shapes, args)
    assert row[:2] == ["mlp", "batch (5x24)"]
    assert row[4].split("x")[0].replace(".", "").isdigit()  # the ratio of medians
    static_err, dynamic_err = (float(e) for e in row[7].split(" / "))
    assert static_err <= 1e-4 and dynamic_err <= 1e-4


def test_a_wrong_result_stops_the_run() -> None:
    model, inputs, shapes = _mlp()
    args = argparse.Namespace(rounds=1, min_ms=1.0, rtol=0.0, batch=2)
    with pytest.raises(SystemExit, match="error .* against PyTorch"):
        # rtol 0: float32 rounding differs from PyTorch's somewhere
        dynamic.compare("mlp", "batch", model, inputs, shapes, args)
