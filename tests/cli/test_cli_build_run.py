"""`tvms build`, `tvms run` and `tvms show --after`: outputs, streams, exit codes."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

from tvmlite.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mlp.tvms"
ADD = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        z = R.add(x, y)
        return z
"""


@pytest.fixture
def add_file(tmp_path):
    path = tmp_path / "add.tvms"
    path.write_text(ADD)
    return path


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_build_so_is_silent_and_writes_header(tmp_path, add_file, capsys):
    out = tmp_path / "add.so"
    assert run(["build", add_file, "-o", out], capsys) == (0, "", "")
    assert out.read_bytes()[:4] == b"\x7fELF" and out.with_suffix(".h").exists()


def test_build_prefix_names_the_library_symbols(tmp_path, add_file, capsys):
    out = tmp_path / "libadd.so"
    assert run(["build", add_file, "-o", out, "--prefix", "net_"], capsys) == (0, "", "")
    assert "int32_t net_entry_main(" in out.with_suffix(".h").read_text()
    code, text, _ = run(["run", out, "--random", "--dim", "n=2"], capsys)
    assert code == 0 and "float32" in text
    code, _, err = run(["build", add_file, "-o", "-", "--emit", "ll", "--prefix", "p"], capsys)
    assert code == 1 and "tvms: error: --prefix names the symbols of a library" in err
    code, _, err = run(["build", add_file, "-o", out, "--prefix", "9"], capsys)
    assert code == 1 and "prefix='9' is not the start of a C identifier" in err


@pytest.mark.parametrize(
    ("emit", "marker"),
    [("ll", "define"), ("asm", "tvmlite_entry_main"), ("relax", "T.prim_func"), ("tir", "def add")],
)
def test_build_text_emits_to_stdout(add_file, capsys, emit, marker):
    code, out, err = run(["build", add_file, "-o", "-", "--emit", emit], capsys)
    assert code == 0 and marker in out and err == ""


def test_build_object_and_binary_to_stdout(tmp_path, add_file, capsys):
    obj = tmp_path / "add.o"
    assert run(["build", add_file, "-o", obj], capsys)[0] == 0
    assert obj.read_bytes()[:4] == b"\x7fELF"
    code, _, err = run(["build", add_file, "-o", "-", "--emit", "so"], capsys)
    assert code == 1 and "binary" in err


def test_build_time_passes_and_print_after_all(tmp_path, add_file, capsys):
    code, out, err = run(
        ["build", add_file, "-o", tmp_path / "a.ll", "--time-passes", "--print-after-all"], capsys
    )
    assert code == 0 and "LegalizeOps" in err and "# IR after LegalizeOps" in out
    assert "# IR after FlattenBuffers" in out
    lines = [line.split(":")[0] for line in err.splitlines()]
    for step in ("parse", "  LowerBlocks", "codegen", "LLVM optimization", "machine code"):
        assert step in lines, err


def test_build_no_legalize_keeps_operators(add_file, capsys):
    code, out, _ = run(["build", add_file, "-o", "-", "--emit", "relax", "--no-legalize"], capsys)
    assert code == 0 and "R.add" in out


def test_build_errors_exit_1(tmp_path, add_file, capsys):
    bad = tmp_path / "bad.tvms"
    bad.write_text(ADD.replace("R.add", "R.addd"))
    code, out, err = run(["build", bad, "-o", tmp_path / "x.so"], capsys)
    assert code == 1 and out == "" and "bad.tvms:" in err
    code, _, err = run(["build", add_file, "-o", tmp_path / "x.so", "--target", "cuda"], capsys)
    assert code == 1 and "target" in err


def test_usage_errors_exit_2(add_file, capsys):
    assert main(["build", str(add_file)]) == 2  # no -o
    assert main(["run", str(add_file), "--dim", "n"]) == 2
    assert main(["build", str(add_file), "-o", "x", "--emit", "exe"]) == 2


def test_run_random_library_and_file_agree(tmp_path, add_file, capsys):
    lib = tmp_path / "add.so"
    assert run(["build", add_file, "-o", lib], capsys)[0] == 0
    results = []
    for source in (lib, add_file):
        out_file = tmp_path / f"{source.suffix[1:]}.npz"
        argv = ["run", source, "--random", "--dim", "n=5", "--output", out_file]
        assert run(argv, capsys) == (0, "", "")
        results.append(np.load(out_file)["result"])
    assert results[0].shape == (5,)
    np.testing.assert_array_equal(*results)


def test_run_prints_results_and_reads_inputs(tmp_path, add_file, capsys):
    x = tmp_path / "x.npy"
    np.save(x, np.arange(3, dtype="float32"))
    code, out, err = run(["run", add_file, "--input", f"x={x}", "--input", f"y={x}"], capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[0] == "result: float32 (3,)" and "[0. 2. 4.]" in out


def test_run_repeat_prints_timing(add_file, capsys):
    code, out, _ = run(["run", add_file, "--random", "--repeat", "5"], capsys)
    assert code == 0 and out.startswith("main: 5 runs, median ")


def test_run_user_errors(tmp_path, add_file, capsys):
    code, _, err = run(["run", add_file], capsys)
    assert code == 1 and "--random" in err
    for _ in range(2):  # built, then served by the compile cache: both name the file
        code, _, err = run(["run", add_file, "--random", "--entry", "nope"], capsys)
        assert code == 1 and f"function 'nope' does not exist in {add_file} " in err
    bad = tmp_path / "x.npy"
    np.save(bad, np.zeros(3, "float64"))
    code, _, err = run(["run", add_file, "--random", "--input", f"x={bad}"], capsys)
    assert code == 1 and "dtype float32" in err


def test_run_prim_function_prints_written_buffers(tmp_path, capsys):
    prim = tmp_path / "p.tvms"
    prim.write_text(
        "@T.prim_func\n"
        'def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):\n'
        "    for i in range(4):\n"
        "        B[i] = A[i] * T.float32(2.0)\n"
    )
    code, out, _ = run(["run", prim, "--random"], capsys)
    assert code == 0 and out.startswith("B: float32 (4,)")


def test_show_after_pass(add_file, capsys):
    code, out, _ = run(["show", add_file, "--after", "LegalizeOps", "--color", "never"], capsys)
    assert code == 0 and "T.prim_func" in out
    code, _, err = run(["show", add_file, "--after", "NoSuchPass"], capsys)
    assert code == 1 and "did not run" in err and "FlattenBuffers" in err
    code, out, _ = run(["show", add_file, "--after", "LowerBlocks", "--color", "never"], capsys)
    assert code == 0 and "T.prim_func" in out and "T.block" not in out
    # The schedule point is a step too: prim functions still block-style there.
    code, out, _ = run(["show", add_file, "--after", "schedule", "--color", "never"], capsys)
    assert code == 0 and "T.block" in out


def test_stdin_input(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(ADD))
    code, out, _ = run(["run", "-", "--random", "--dim", "n=2"], capsys)
    assert code == 0 and "float32 (2,)" in out
