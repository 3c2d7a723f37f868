"""tvmlite is typed (py.typed, mypy clean on its public API, concrete return
types) and honest about the systems it runs on."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typecheck import ROOT, installed_layout, run_mypy

import tvmlite
from tvmlite.dsl import relax, tir


def test_the_public_api_is_mypy_clean() -> None:
    done = run_mypy()
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in ")


def test_typed_code_using_the_api_checks(tmp_path: Path) -> None:
    installed_layout(tmp_path)
    user = tmp_path / "user.py"
    user.write_text(
        "import numpy as np\n"
        "import tvmlite\n"
        "mod: tvmlite.IRModule = tvmlite.parse_file('m.tvms', expect=tvmlite.IRModule)\n"
        "ex: tvmlite.Executable = tvmlite.build(mod)\n"
        "seconds: float = ex.time_evaluator('main', number=3)(np.ones(3)).median\n"
        "lib = tvmlite.load_module('m.so')\n"
        "reveal_type(tvmlite.parse('x'))\n"
        "mod = tvmlite.parse_file('m.tvms')  # a union without expect: an error\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-version", "3.11", "--follow-imports",
         "silent", "--cache-dir", str(tmp_path / "cache"), str(user)],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert any("Revealed type is" in x and "IRModule" in x and "PrimFunc" in x for x in lines)
    errors = [x for x in lines if ": error:" in x]
    assert len(errors) == 1 and "user.py:8:" in errors[0], done.stdout


def test_expect_gives_and_checks_the_kind(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "add.tvms").read_text()
    assert isinstance(tvmlite.parse(text, expect=tvmlite.IRModule), tvmlite.IRModule)
    (tmp_path / "add.tvms").write_text(text)
    with pytest.raises(tvmlite.ParseError, match="expected a lone @T.prim_func, the text holds"):
        tvmlite.parse_file(tmp_path / "add.tvms", expect=tir.PrimFunc)
    with pytest.raises(tvmlite.TVMLiteError, match="expect must be IRModule"):
        tvmlite.parse(text, expect=str)  # type: ignore[call-overload]
    function = "@R.function\ndef f(x: R.Tensor((2,), 'float32')):\n    return x\n"
    header = "from tvm.script import relax as R\n"
    assert isinstance(tvmlite.parse(header + function, expect=relax.Function), relax.Function)


def test_the_package_is_marked_typed_and_linux_only() -> None:
    assert (Path(tvmlite.__file__).parent / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["tvmlite"]
    assert config["tool"]["setuptools"]["platforms"] == ["Linux"]
    classifiers = config["project"]["classifiers"]
    assert "Operating System :: POSIX :: Linux" in classifiers and "Typing :: Typed" in classifiers
    assert config["project"]["urls"]
    assert any(r.startswith("mypy") for r in config["project"]["optional-dependencies"]["test"])


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_an_unsupported_system_gets_one_clear_error(platform: str) -> None:
    code = f"import sys\nsys.platform = {platform!r}\nimport tvmlite\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: tvmlite runs on Linux (x86-64 or AArch64")
    assert f"this system is {platform!r}" in last
    assert done.stderr.count("Traceback") == 1
