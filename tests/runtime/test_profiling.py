"""Measuring compiled code with TVM's names: `time_evaluator` (repeats of timed
calls and their statistics) and `profile` (per kernel and packed function, in a
build of its own), from Python and from `tvms run`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.cli import main
from tvmlite.runtime.profiling import time_evaluator
from tvmlite.runtime.registry import remove_global_func

HEADER = (
    "from tvm.script import ir as I\nfrom tvm.script import relax as R\n"
    "from tvm.script import tir as T\n\n"
)


# One kernel a binding, so that the reports name `add` and `relu` (the default
# build fuses the chain into one kernel, and its host code takes one form only).
MINIMAL = "minimal"
CLI_MINIMAL = ("--pipeline", MINIMAL)


def chain(n: int, dims: str) -> str:
    """`main(x)`: `n` bindings alternating x + x and relu (a function of more than
    32 bindings is a program when its dims are static, code with steps otherwise)."""
    lines, name = [], "x"
    for i in range(n):
        op = "R.add({0}, {0})" if i % 2 == 0 else "R.nn.relu({0})"
        lines.append(f'            v{i}: R.Tensor(({dims}), "float32") = {op.format(name)}')
        name = f"v{i}"
    body = "\n".join(lines)
    return (
        HEADER + "@I.ir_module\nclass Module:\n    @R.function\n"
        f'    def main(x: R.Tensor(({dims}), "float32")) -> R.Tensor(({dims}), "float32"):\n'
        f"        with R.dataflow():\n{body}\n            R.output({name})\n        return {name}\n"
    )


def want(x: np.ndarray, n: int) -> np.ndarray:
    for i in range(n):
        x = x + x if i % 2 == 0 else np.maximum(x, 0)
    return x


# ------------------------------------------------------------ time_evaluator


def test_time_evaluator_statistics_of_its_results() -> None:
    ex = tvmlite.build(tvmlite.parse(chain(4, "4, 8")), pipeline=MINIMAL)
    x = np.random.default_rng(0).standard_normal((4, 8)).astype("float32")
    result = ex.time_evaluator("main", number=5, repeat=4)(x)
    assert len(result.results) == 4 and all(r > 0 for r in result.results)
    r = np.array(result.results)
    assert result.mean == pytest.approx(r.mean())
    assert result.median == pytest.approx(np.median(r))
    assert (result.min, result.max) == (r.min(), r.max())
    assert result.std == pytest.approx(r.std())  # population std, as NumPy's and TVM's
    assert "median (ms)" in str(result) and "results=" in repr(result)


def test_time_evaluator_calls_number_times_per_repeat_after_one_warm_call() -> None:
    calls = []
    timer = time_evaluator(lambda a: calls.append(a), number=3, repeat=2)
    timer(7)
    assert calls == [7] * (1 + 3 * 2)


def test_min_repeat_ms_grows_the_number_of_calls() -> None:
    calls = []

    def sleepy() -> None:
        calls.append(1)
        time.sleep(0.002)

    result = time_evaluator(sleepy, number=1, repeat=2, min_repeat_ms=10)()
    # A 2 ms call cannot make a 10 ms measurement alone: TVM's rule calls it more.
    assert len(calls) > 1 + 2 * 2
    assert all(r < 0.010 for r in result.results)  # each result is per call


@pytest.mark.parametrize(
    ("option", "value"),
    [("number", 0), ("repeat", 1.5), ("min_repeat_ms", -1), ("repeats_to_cooldown", 0)],
)
def test_time_evaluator_options_are_checked(option: str, value: object) -> None:
    ex = tvmlite.build(tvmlite.parse(chain(2, "4, 8")), pipeline=MINIMAL)
    with pytest.raises(tvmlite.TVMLiteError, match=option):
        ex.time_evaluator("main", **{option: value})


def test_time_evaluator_of_an_unknown_function() -> None:
    ex = tvmlite.build(tvmlite.parse(chain(2, "4, 8")), pipeline=MINIMAL)
    with pytest.raises(tvmlite.TVMLiteError, match="'mian' does not exist"):
        ex.time_evaluator("mian")


# ------------------------------------------------------------ profile


@pytest.mark.parametrize(
    ("n", "dims"),
    [(4, "4, 8"), (40, "4, 8"), (40, '"n", 8')],
    ids=["optimized code", "program", "code with steps"],
)
def test_profile_counts_every_kernel_call_in_each_form_of_host_code(n: int, dims: str) -> None:
    ex = tvmlite.build(tvmlite.parse(chain(n, dims)), pipeline=MINIMAL)
    x = np.random.default_rng(1).standard_normal((4, 8)).astype("float32")
    report = ex.profile("main", x, number=3)
    rows = {r.name: r for r in report.rows}
    assert set(rows) == {"add", "relu", "host"}
    assert rows["add"].kind == rows["relu"].kind == "kernel"
    assert rows["add"].calls == 3 * ((n + 1) // 2)
    assert rows["relu"].calls == 3 * (n // 2)
    assert rows["host"].calls == report.number == 3
    assert sum(r.share for r in report.rows) == pytest.approx(1.0)
    assert report.total >= sum(r.seconds for r in report.rows if r.kind == "kernel")
    assert [r.seconds for r in report.rows] == sorted(
        (r.seconds for r in report.rows), reverse=True
    )
    np.testing.assert_allclose(ex["main"](x), want(x, n), rtol=1e-6)


def test_profiling_off_costs_nothing() -> None:
    ex = tvmlite.build(tvmlite.parse(chain(4, "4, 8")), pipeline=MINIMAL, cache=False)
    x = np.ones((4, 8), "float32")
    ex.profile("main", x)
    profiled = ex._profiled
    assert profiled is not None and profiled is not ex
    assert "tvmlite_profile" not in ex.llvm_ir() and "clock_gettime" not in ex.llvm_ir()
    assert "tvmlite_profile" in profiled.llvm_ir() and "clock_gettime" in profiled.llvm_ir()
    assert "profile" not in ex.manifest
    np.testing.assert_array_equal(profiled["main"](x), ex["main"](x))
    ex.profile("main", x)
    assert ex._profiled is profiled  # built once


def test_profile_report_as_table_and_json() -> None:
    ex = tvmlite.build(tvmlite.parse(chain(4, "4, 8")), pipeline=MINIMAL)
    report = ex.profile("main", np.ones((4, 8), "float32"))
    table = str(report)
    assert table.splitlines()[0] == "main: 1 call"
    assert table.splitlines()[1].split() == ["name", "kind", "calls", "total", "(ms)", "share"]
    assert {line.split()[0] for line in table.splitlines()[2:]} == {"add", "relu", "host", "total"}
    data = json.loads(report.json())
    assert data["function"] == "main" and data["number"] == 1
    assert [r["name"] for r in data["rows"]] == [r.name for r in report.rows]
    assert data["total"] == report.total


@pytest.fixture
def doubled():  # noqa: ANN201 - a fixture generator
    tvmlite.register_func("test.profile_double", lambda a, out: np.multiply(a, 2, out=out))
    yield
    remove_global_func("test.profile_double")


PACKED = HEADER + (
    "@I.ir_module\nclass Module:\n"
    "    @R.function(pure=False)\n"
    '    def main(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):\n'
    '        a = R.call_dps_packed("test.profile_double", (x,), out_sinfo=R.Tensor((3,), "float32"))\n'
    '        b = R.call_dps_packed("test.profile_double", (a,), out_sinfo=R.Tensor((3,), "float32"))\n'
    "        c = R.add(b, x)\n"
    "        return c\n"
)


def test_profile_counts_packed_calls(doubled: None) -> None:
    ex = tvmlite.build(tvmlite.parse(PACKED))
    x = np.arange(3, dtype="float32")
    report = ex.profile("main", x, number=2)
    rows = {r.name: r for r in report.rows}
    assert rows["test.profile_double"].kind == "packed"
    assert rows["test.profile_double"].calls == 4
    assert rows["add"].calls == 2
    np.testing.assert_allclose(ex["main"](x), 5 * x)


def test_profiled_library_and_a_library_without_profiling(tmp_path: Path) -> None:
    mod = tvmlite.parse(chain(4, "4, 8"))
    plain = tvmlite.build(mod, pipeline=MINIMAL).export_library(tmp_path / "plain.so")
    with tvmlite.transform.PassContext(config={"tvmlite.profile": True}):
        profiled = tvmlite.build(mod, pipeline=MINIMAL).export_library(tmp_path / "prof.so")
    x = np.ones((4, 8), "float32")
    report = tvmlite.load_module(profiled).profile("main", x)
    assert {r.name for r in report.rows} == {"add", "relu", "host"}
    with pytest.raises(tvmlite.TVMLiteError, match="tvms build --profiled"):
        tvmlite.load_module(plain).profile("main", x)


def test_profile_number_is_checked() -> None:
    ex = tvmlite.build(tvmlite.parse(chain(2, "4, 8")), pipeline=MINIMAL)
    with pytest.raises(tvmlite.TVMLiteError, match="number must be an int >= 1"):
        ex.profile("main", np.ones((4, 8), "float32"), number=0)


# ------------------------------------------------------------ tvms run


def test_cli_repeat_and_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "chain.tvms"
    source.write_text(chain(4, "4, 8"))
    assert main(["run", str(source), "--random", "--repeat", "5", *CLI_MINIMAL]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("main: 5 runs, median ")
    for word in ("min", "max", "std", "mean"):
        assert f" {word} " in line
    assert main(["run", str(source), "--random", "--profile", *CLI_MINIMAL]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "main: 1 call" and lines[-1].startswith("total")
    assert (
        main(["run", str(source), "--random", "--profile", "json", "--repeat", "3", *CLI_MINIMAL])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert {r["name"]: r["calls"] for r in data["rows"]} == {"add": 6, "relu": 6, "host": 3}


def test_cli_profiled_library(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "chain.tvms"
    source.write_text(chain(2, "4, 8"))
    lib = tmp_path / "chain.so"
    assert main(["build", str(source), "-o", str(lib), "--profiled", *CLI_MINIMAL]) == 0
    assert main(["run", str(lib), "--random", "--profile"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[2:]].count("add") == 1
    assert main(["run", str(lib), "--random", "--repeat", "0"]) == 0  # 0: no timing, print
    assert main(["run", str(lib), "--random", "--repeat", "-2"]) == 1
    assert "--repeat must be at least 1" in capsys.readouterr().err
