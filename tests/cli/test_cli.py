"""The `tvms` command: exit codes, streams, and in-place formatting."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from cli_common import EXAMPLE, GOOD

from tvmlite.cli import main


def run(argv, capsys, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_check_good_file_is_silent(tmp_path, capsys):
    path = tmp_path / "good.tvms"
    path.write_text(GOOD)
    assert run(["check", str(path)], capsys) == (0, "", "")


def test_check_bad_file_reports_location_on_stderr(tmp_path, capsys):
    path = tmp_path / "bad.tvms"
    path.write_text(GOOD.replace("T.float32(1.0)", "T.float33(1.0)"))
    code, out, err = run(["check", str(path)], capsys)
    assert code == 1 and out == ""
    assert f"{path}:10:" in err and "error:" in err and "^" in err


def test_missing_file_is_a_user_error(tmp_path, capsys):
    missing = tmp_path / "nope.tvms"
    code, _, err = run(["check", str(missing)], capsys)
    assert (code, err) == (1, f"tvms: error: {missing}: No such file or directory\n")


def test_usage_error_exits_2(capsys):
    assert main(["frobnicate"]) == 2


def test_fmt_check_and_diff(tmp_path, capsys):
    path = tmp_path / "m.tvms"
    path.write_text(GOOD)
    assert run(["fmt", "--check", str(path)], capsys)[0] == 0
    messy = GOOD.replace("for i in range(4):", "for i in T.serial(4):")
    path.write_text(messy)
    code, _, err = run(["fmt", "--check", str(path)], capsys)
    assert code == 1 and "would reformat" in err
    code, out, _ = run(["fmt", "--diff", str(path)], capsys)
    assert (
        code == 1
        and "-        for i in T.serial(4):" in out
        and "+        for i in range(4):" in out
    )
    assert path.read_text() == messy  # --check and --diff never write


def test_fmt_rewrites_in_place_and_converts_dialect(tmp_path, capsys):
    path = tmp_path / "m.tvms"
    path.write_text(GOOD.replace("for i in range(4):", "for i in T.serial(4):"))
    assert run(["fmt", str(path)], capsys)[0] == 0
    assert path.read_text() == GOOD
    assert run(["fmt", "--dialect", "tvm-0.27", str(path)], capsys)[0] == 0
    assert '"tirx.noalias": True' in path.read_text()


def test_fmt_reads_stdin(capsys, monkeypatch):
    code, out, _ = run(["fmt", "-"], capsys, stdin=GOOD, monkeypatch=monkeypatch)
    assert code == 0 and out == GOOD


def test_show_plain_when_not_a_terminal(capsys):
    code, out, _ = run(["show", "--color", "never", str(EXAMPLE)], capsys)
    assert code == 0 and "\x1b[" not in out
    assert "def bias_relu(" in out and 'with T.block("bias_relu"):' in out


@pytest.mark.parametrize("argv", [["-m", "tvmlite", "check"], ["-m", "tvmlite", "check", "x"]])
def test_module_entry_point(argv):
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True)
    assert proc.returncode in (1, 2) and proc.stderr
