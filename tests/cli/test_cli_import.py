"""`tvms import`: a program saved with torch.export.save becomes a .tvms file and its
weights, which `tvms run` and `tvms build` take as they are."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tvmlite.cli import main  # noqa: E402


class Done:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.returncode, self.stdout, self.stderr = code, out, err


@pytest.fixture
def tvms(capsys):
    def call(*argv: object) -> Done:
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return call


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(5, 3)
        self.bn = torch.nn.BatchNorm1d(3)
        self.bn.running_var.fill_(2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.bn(self.fc(x)))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("import")
    model = Net().eval()
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    torch.export.save(torch.export.export(model, (x,)), folder / "net.pt2")
    np.save(folder / "x.npy", x.numpy())
    with torch.no_grad():
        return folder, model(x).numpy()


def test_import_then_run_with_the_constants_file(saved, tvms):
    folder, want = saved
    done = tvms("import", folder / "net.pt2", "-o", folder / "net.tvms")
    assert done.returncode == 0, done.stderr
    assert (folder / "net.tvms").exists() and (folder / "net.constants.npz").exists()
    assert "net.tvms" in done.stderr and "net.constants.npz" in done.stderr
    text = (folder / "net.tvms").read_text()
    assert 'metadata["ir.GenericConst"][0]' in text
    run = tvms(
        "run", folder / "net.tvms", "--input", f"x={folder / 'x.npy'}",
        "--output", folder / "out.npz",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (got,) = np.load(folder / "out.npz").values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_import_keep_params_then_build_with_the_params_file(saved, tvms):
    folder, want = saved
    out = folder / "netp.tvms"
    done = tvms("import", folder / "net.pt2", "-o", out, "--keep-params")
    assert done.returncode == 0, done.stderr
    params = np.load(folder / "netp.params.npz")
    assert sorted(params) == ["p_bn_bias", "p_bn_weight", "p_fc_bias", "p_fc_weight"]
    assert 'R.func_attr({"num_input": 1})' in out.read_text()
    run = tvms(
        "run", out, "--params", folder / "netp.params.npz", "--input",
        f"x={folder / 'x.npy'}", "--output", folder / "outp.npz",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (got,) = np.load(folder / "outp.npz").values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_import_refuses_what_is_not_a_saved_program(tmp_path, tvms):
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip")
    done = tvms("import", bad, "-o", tmp_path / "bad.tvms")
    assert done.returncode == 1
    assert "not a program saved with torch.export.save" in done.stderr
    assert "Traceback" not in done.stderr
    missing = tvms("import", tmp_path / "nope.pt2")
    assert missing.returncode == 1 and "no such file" in missing.stderr
