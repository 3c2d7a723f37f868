"""benchmarks/models.py runs end to end on a tiny model of this test's own (a text
and an npz as gen_real_models.py writes them, outputs from NumPy), with a variant
build; a wrong expected output fails the run; the flop count reads symbolic dims
off the arguments. No PyTorch needed (the tiny model has no PyTorch definition,
so it is left out) and no timing asserted."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from test_run import tables

import tvmlite

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

TINY = """
from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32"), p_fc_weight: R.Tensor((16, 8), dtype="float32"), p_fc_bias: R.Tensor((16,), dtype="float32")) -> R.Tuple(R.Tensor((4, 16), dtype="float32")):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tensor((8, 16), dtype="float32") = R.permute_dims(p_fc_weight, axes=None)
            lv1: R.Tensor((4, 16), dtype="float32") = R.matmul(x, lv, out_dtype="float32")
            lv2: R.Tensor((4, 16), dtype="float32") = R.add(lv1, p_fc_bias)
            lv3: R.Tensor((4, 16), dtype="float32") = R.nn.relu(lv2)
            gv: R.Tuple(R.Tensor((4, 16), dtype="float32")) = (lv3,)
            R.output(gv)
        return gv
"""


def write_tiny(directory: Path, wrong: bool = False) -> None:
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (16, 8), (16,)))
    out = np.maximum(x @ w.T + b, 0)
    if wrong:
        out[0, 0] += 1
    (directory / "tiny.tvms").write_text(TINY)
    np.savez(directory / "tiny.npz", arg0=x, arg1=w, arg2=b, out0=out)


def run(directory: Path, *extra: str) -> subprocess.CompletedProcess:
    args = ["--rounds", "1", "--min-ms", "1", "--settle", "0", "--peak", "100"]
    return subprocess.run(
        [sys.executable, str(BENCH / "models.py"), str(directory), *args, *extra],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_tiny_model(tmp_path):
    write_tiny(tmp_path)
    out = tmp_path / "out.json"
    done = run(tmp_path, "--variant", "fused:pipeline=default", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tiny: no PyTorch definition" in done.stdout
    per_model, summary = tables(done.stdout)
    rows = {row["contender"]: row for row in per_model}
    assert set(rows) == {"tvmlite", "fused"}
    for row in rows.values():
        assert float(row["error"]) <= 1e-5
        assert float(row["GFLOP/s"]) > 0 and float(row["peak MB"]) >= 0
        assert float(row["build s (cpu s)"].split()[0]) > 0
    (row,) = summary
    assert row["model"] == "tiny" and row["met"] == "-"  # no PyTorch to compare with

    (model,) = json.loads(out.read_text())["models"]
    assert model["gflop"] == 2 * 4 * 16 * 8 / 1e9
    assert model["failures"] == {}
    assert set(model["times"]) == {"tvmlite", "fused"}


def test_wrong_output_fails_the_run(tmp_path):
    write_tiny(tmp_path, wrong=True)
    done = run(tmp_path)
    assert done.returncode == 1
    assert "tiny tvmlite: WRONG: relative error" in done.stdout


def test_unknown_model_is_refused(tmp_path):
    write_tiny(tmp_path)
    done = run(tmp_path, "--only", "nope")
    assert done.returncode == 2 and "unknown model nope; known: tiny" in done.stderr


def test_flops_at_the_arguments_shapes(monkeypatch):
    """A convolution over a symbolic batch, then a matmul: 2 x MACs at batch 3."""
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_models", BENCH / "models.py")
    models = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    text = """
from tvm.script import relax as R

@R.function
def main(x: R.Tensor(("n", 3, 8, 8), dtype="float32"), w: R.Tensor((4, 3, 3, 3), dtype="float32"), m: R.Tensor((6, 5), dtype="float32")):
    n = T.int64()
    with R.dataflow():
        y: R.Tensor((n, 4, 6, 6), dtype="float32") = R.nn.conv2d(x, w)
        z: R.Tensor((n, 4, 6, 5), dtype="float32") = R.matmul(y, m)
        R.output(z)
    return z
"""
    main = tvmlite.parse(text)
    arrays = [np.zeros((3, 3, 8, 8), "float32"), np.zeros((4, 3, 3, 3), "float32")]
    conv, matmul = 2 * (3 * 4 * 6 * 6) * (3 * 3 * 3), 2 * (3 * 4 * 6 * 5) * 6
    assert models.count_flops(main, arrays) == conv + matmul
