"""A model with its weights on the command line: `--constants` (and the constants
file beside the text) for every command, `--params` for build and run, `--input
FILE.npz` keyed by parameter names, and `--random` that knows weights from data
(`num_input`), on conv_bn, TVM's print of a PyTorch conv + BatchNorm."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tvmlite.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"  # conv_bn.*: make_conv_bn.py


@pytest.fixture
def model(tmp_path) -> Path:
    """conv_bn.tvms with its constants file beside it, and its weights and io files."""
    for name in ("tvms", "constants.npz", "params.npz", "io.npz"):
        shutil.copy(EXAMPLES / f"conv_bn.{name}", tmp_path / f"conv_bn.{name}")
    io = np.load(tmp_path / "conv_bn.io.npz")
    np.savez(tmp_path / "x.npz", x=io["x"])
    return tmp_path / "conv_bn.tvms"


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _expected(model: Path) -> np.ndarray:
    return np.load(model.with_name("conv_bn.io.npz"))["out"]


def test_check_fmt_show_find_the_constants_file(model, capsys):
    code, out, err = run(["check", model], capsys)
    assert (code, err) == (0, "") and out.startswith("1 file well-formed")
    code, out, _ = run(["fmt", "--stdout", model], capsys)
    assert code == 0 and out == model.read_text()  # (TVM's text has no final newline)
    code, out, _ = run(["show", model, "--color", "never"], capsys)
    assert code == 0 and 'metadata["ir.GenericConst"][2]' in out
    moved = model.with_name("stats.npz")
    model.with_name("conv_bn.constants.npz").rename(moved)
    code, _, err = run(["check", model], capsys)
    assert (
        code == 1
        and 'conv_bn.tvms:13:180: error: the value of metadata["ir.GenericConst"][0]' in err
    )
    code, out, err = run(["check", model, "--constants", moved], capsys)
    assert (code, err) == (0, "") and out.startswith("1 file well-formed")
    code, _, err = run(
        ["build", model, "-o", model.with_suffix(".so"), "--constants", model], capsys
    )
    assert code == 1 and "is not an .npz file" in err


def test_run_with_params_and_inputs_from_files(model, tmp_path, capsys):
    out = tmp_path / "out.npz"
    argv = ["run", model, "--params", model.with_name("conv_bn.params.npz"), "--input"]
    assert run([*argv, tmp_path / "x.npz", "--output", out], capsys) == (0, "", "")
    np.testing.assert_allclose(np.load(out)["result0"], _expected(model), rtol=1e-4, atol=1e-5)
    # weights as inputs, from one file keyed by parameter names
    both = tmp_path / "all.npz"
    params = np.load(model.with_name("conv_bn.params.npz"))
    np.savez(both, x=np.load(tmp_path / "x.npz")["x"], **{k: params[k] for k in params.files})
    assert run(["run", model, "--input", both, "--output", out], capsys) == (0, "", "")
    np.testing.assert_allclose(np.load(out)["result0"], _expected(model), rtol=1e-4, atol=1e-5)
    np.savez(both, x=np.load(tmp_path / "x.npz")["x"], weight=params["p_conv_weight"])
    code, _, err = run(["run", model, "--input", both], capsys)
    assert code == 1 and "'weight' names no parameter of main (parameters: x, p_conv_weight" in err


def test_build_embeds_params_and_the_library_runs(model, tmp_path, capsys):
    lib = tmp_path / "convbn.so"
    argv = ["build", model, "--params", model.with_name("conv_bn.params.npz"), "-o", lib]
    assert run(argv, capsys) == (0, "", "")
    header = lib.with_suffix(".h").read_text()
    assert "[0] x: float32 (1, 3, 8, 8)" in header and "p_conv_weight" not in header
    out = tmp_path / "out.npz"
    assert run(["run", lib, "--input", tmp_path / "x.npz", "--output", out], capsys) == (0, "", "")
    np.testing.assert_allclose(np.load(out)["result0"], _expected(model), rtol=1e-4, atol=1e-5)
    code, _, err = run(["run", lib, "--params", model.with_name("conv_bn.params.npz")], capsys)
    assert code == 1 and "is built already: pass its weights with --input FILE.npz" in err


def test_the_header_says_which_arguments_are_weights(model, tmp_path, capsys):
    lib = tmp_path / "convbn.so"
    assert run(["build", model, "-o", lib], capsys) == (0, "", "")
    header = lib.with_suffix(".h").read_text()
    assert "(num_input 1: [0, 1) are data, the rest are weights)" in header
    assert "[1] p_conv_weight: float32 (4, 3, 3, 3) (weight)" in header
    assert "[0] x: float32 (1, 3, 8, 8)\n" in header


def test_random_weights_are_scaled_and_announced(model, tmp_path, capsys):
    out = tmp_path / "out.npz"
    code, text, err = run(["run", model, "--random", "--output", out], capsys)
    assert code == 0 and text == ""
    assert "tvms: note: 4 weights of main are random (p_conv_weight, p_conv_bias," in err
    result = np.load(out)["result0"]
    assert np.isfinite(result).all() and 0.05 < np.abs(result).max() < 100
    code, _, err = run(
        ["run", model, "--random", "--input", model.with_name("conv_bn.params.npz")], capsys
    )
    assert code == 0 and "note" not in err  # only the data input was drawn


def test_the_random_draws(capsys):
    from tvmlite.cli_inputs import draw
    from tvmlite.dsl import relax, tir

    rng = np.random.default_rng(0)
    conv = relax.TensorStructInfo(tuple(tir.IntImm("int64", d) for d in (64, 32, 3, 3)), "float32")
    w = draw(conv, "w", {}, rng, weight=True)
    assert abs(w.std() * np.sqrt(32 * 9) - 1) < 0.05 and w.dtype == np.float32
    gains = draw(
        relax.TensorStructInfo((tir.IntImm("int64", 1000),), "float32"), "v", {}, rng, True
    )
    assert gains.min() >= 0.5 and gains.max() < 1.5
    data = draw(conv, "x", {}, rng)
    assert abs(data.std() - 1) < 0.05


def test_object_output_holds_the_weights(model, tmp_path, capsys):
    obj = tmp_path / "convbn.o"
    argv = ["build", model, "--params", model.with_name("conv_bn.params.npz"), "-o", obj]
    assert run(argv, capsys) == (0, "", "")
    nm = shutil.which("nm")
    if nm is None:
        return
    symbols = subprocess.run([nm, str(obj)], capture_output=True, text=True).stdout
    defined = [line.split()[-1] for line in symbols.splitlines() if len(line.split()) == 3]
    assert "tvmlite_const_data.0" in defined and "tvmlite_entry_main" in defined
    assert not [line for line in symbols.splitlines() if " U tvmlite_const_data" in line]
