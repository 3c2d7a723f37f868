"""The `tvms` command: exit codes, streams, and in-place formatting."""

from __future__ import annotations

import io
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cli_common import EXAMPLE, GOOD

from tvmlite.cli import main


def run(argv, capsys, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_check_good_file_says_what_it_checked(tmp_path, capsys):
    path = tmp_path / "good.tvms"
    path.write_text(GOOD)
    code, out, err = run(["check", str(path)], capsys)
    assert (code, err) == (0, "")
    assert out == (
        "1 file well-formed; not lowered for a target (--target llvm also checks what "
        "tvms build accepts: buffer bounds, legalization, the schedule)\n"
    )
    code, out, err = run(["check", str(path), "--target", "llvm"], capsys)
    assert (code, out, err) == (0, "1 file well-formed and lowered for llvm: they build\n", "")


def test_check_bad_file_reports_location_on_stderr(tmp_path, capsys):
    path = tmp_path / "bad.tvms"
    path.write_text(GOOD.replace("T.float32(1.0)", "T.float33(1.0)"))
    code, out, err = run(["check", str(path)], capsys)
    assert code == 1 and out == "1 of 1 file failed\n"
    assert f"{path}:10:" in err and "error:" in err and "^" in err


def test_missing_file_is_a_user_error(tmp_path, capsys):
    missing = tmp_path / "nope.tvms"
    code, _, err = run(["check", str(missing)], capsys)
    assert (code, err) == (1, f"tvms: error: {missing}: No such file or directory\n")


RELAX = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n"
SEMANTIC = {
    "a packed call in a dataflow block": (
        RELAX
        + "    @R.function\n"
        + '    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):\n'
        + "        with R.dataflow():\n"
        + '            y = R.call_packed("f", x, sinfo_args=R.Tensor((4,), "float32"))\n'
        + "            R.output(y)\n"
        + "        return y\n",
        "9:17: error: R.call_packed('f') has side effects: it cannot be inside a dataflow block",
    ),
    "shapes that cannot broadcast": (
        RELAX
        + "    @R.function\n"
        + '    def main(x: R.Tensor(("n", 784), "float32"), w: R.Tensor((784, 64), "float32")):\n'
        + "        y = R.add(x, w)\n"
        + "        return y\n",
        "8:13: error: R.add: shapes cannot broadcast: dim 1 is 784 vs 64",
    ),
    "matmul inner dims": (
        RELAX
        + "    @R.function\n"
        + '    def main(x: R.Tensor(("n", 784), "float32"), w: R.Tensor((100, 64), "float32")):\n'
        + "        y = R.matmul(x, w)\n"
        + "        return y\n",
        "8:13: error: R.matmul: inner dimensions differ: 784 vs 100",
    ),
    "65 over 64 under a symbolic loop": (
        "# from tvm.script import tir as T\n\n@T.prim_func\n"
        + "def main(a: T.handle, n: T.int64):\n"
        + '    A = T.match_buffer(a, (n, 64), "float32")\n'
        + "    for i in range(n):\n"
        + "        for j in range(65):\n"
        + "            A[i, j] = T.float32(0)\n",
        "8:13: error: store to buffer A is out of bounds whenever the loop over i runs: "
        "index j on axis 1 runs from 0 to 64, outside [0, 64)",
    ),
}
NEEDS_TARGET = {"65 over 64 under a symbolic loop"}  # a build's check, not TVM's parser's


@pytest.mark.parametrize("case", sorted(SEMANTIC))
def test_check_refuses_what_build_would_where_it_is_written(tmp_path, capsys, case):
    text, message = SEMANTIC[case]
    path = tmp_path / "m.tvms"
    path.write_text(text)
    target = ["--target", "llvm"] if case in NEEDS_TARGET else []
    if target:
        code, out, _ = run(["check", str(path)], capsys)
        assert code == 0 and "not lowered for a target" in out
    code, out, err = run(["check", str(path), *target], capsys)
    assert (code, out) == (1, "1 of 1 file failed\n")
    assert f"{path}:{message}" in err, err


def test_check_with_a_target_lowers_as_build_does(tmp_path, capsys):
    """A GPU thread launch is well-formed TIR that a CPU build refuses: `check` alone
    passes it and says it did not lower; with --target it refuses what build would."""
    path = tmp_path / "gpu.tvms"
    path.write_text(
        "# from tvm.script import tir as T\n\n@T.prim_func\n"
        'def main(A: T.Buffer((64,), "float32")):\n'
        '    tx = T.launch_thread("threadIdx.x", 64)\n'
        "    A[tx] = T.float32(0)\n"
    )
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 0 and "not lowered for a target" in out
    code, out, err = run(["check", str(path), "--target", "llvm"], capsys)
    assert (code, out) == (1, "1 of 1 file failed\n") and "threadIdx.x" in err


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


def test_fmt_keeps_a_missing_final_newline(tmp_path, capsys):
    """TVM's `script()` writes no newline after the last line: such a file is
    canonical as it is, and formatting keeps its ending."""
    path = tmp_path / "m.tvms"
    path.write_text(GOOD.rstrip("\n"))
    assert run(["fmt", "--check", str(path)], capsys)[0] == 0
    assert run(["fmt", "--diff", str(path)], capsys)[:2] == (0, "")
    path.write_text(GOOD.replace("range(4)", "T.serial(4)").rstrip("\n"))
    assert run(["fmt", str(path)], capsys)[0] == 0
    assert path.read_text() == GOOD.rstrip("\n")


@pytest.mark.parametrize("ending", ["", "\n"])
@pytest.mark.parametrize("tool", ["patch", "git"])
def test_fmt_diff_applies_with_patch_and_git(tmp_path, monkeypatch, capsys, tool, ending):
    """`--diff` is a unified diff the usual tools apply (a last line without a
    newline is marked as `diff` marks it), giving what `fmt` writes."""
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    monkeypatch.chdir(tmp_path)
    messy = GOOD.replace("range(4)", "T.serial(4)").rstrip("\n") + ending
    Path("m.tvms").write_text(messy)
    code, diff, _ = run(["fmt", "--diff", "m.tvms"], capsys)
    assert code == 1 and diff.startswith("--- a/m.tvms\n+++ b/m.tvms\n")
    Path("fix.diff").write_text(diff)
    apply = ["patch", "-p1", "-i", "fix.diff"] if tool == "patch" else ["git", "apply", "fix.diff"]
    done = subprocess.run(apply, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert Path("m.tvms").read_text() == GOOD.rstrip("\n") + ending


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
    # Numbered lines, and signatures wider than --width one parameter a line.
    code, out, _ = run(["show", "-n", "--width", "40", "--color", "never", str(EXAMPLE)], capsys)
    assert code == 0 and " 8 class Module:\n" in out and "11         var_x: T.handle,\n" in out
    code, out, _ = run(["show", "--width", "0", "--color", "never", str(EXAMPLE)], capsys)
    assert code == 0 and "    def bias_relu(var_x: T.handle, b: T.Buffer(" in out
    assert run(["show", "--width", "wide", str(EXAMPLE)], capsys)[0] == 2


@pytest.mark.parametrize("argv", [["-m", "tvmlite", "check"], ["-m", "tvmlite", "check", "x"]])
def test_module_entry_point(argv):
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True)
    assert proc.returncode in (1, 2) and proc.stderr


COMMENTED = (
    GOOD.replace(
        "        for i in range(4):",
        "        # add one\n        for i in range(4):  # each element",
    )
    + "\n# the end\n"
)


def test_fmt_keeps_comments_and_is_idempotent(tmp_path, capsys):
    path = tmp_path / "m.tvms"
    path.write_text(COMMENTED.replace("for i in range(4):", "for i in T.serial(4):"))
    assert run(["fmt", str(path)], capsys)[0] == 0
    assert path.read_text() == COMMENTED
    assert run(["fmt", "--check", str(path)], capsys)[0] == 0


def test_fmt_refuses_to_drop_a_comment_and_leaves_the_file(tmp_path, capsys):
    path = tmp_path / "m.tvms"
    text = COMMENTED.replace("A[i] + T.float32(1.0)", "(A[i]  # inside\n + T.float32(1.0))")
    path.write_text(text)
    for argv in (["fmt", str(path)], ["fmt", "--check", str(path)], ["fmt", "--diff", str(path)]):
        code, out, err = run(argv, capsys)
        assert code == 1 and out == ""
        assert err.startswith(f"{path}:11:27: error: cannot keep this comment")
        assert path.read_text() == text


MESSY = COMMENTED.replace("for i in range(4):", "for i in T.serial(4):")


def test_fmt_rewrites_the_file_a_symlink_names_with_its_mode(tmp_path, capsys):
    path, link = tmp_path / "m.tvms", tmp_path / "link.tvms"
    path.write_text(MESSY)
    path.chmod(0o640)
    link.symlink_to(path.name)
    assert run(["fmt", str(link)], capsys)[0] == 0
    assert link.is_symlink() and path.read_text() == COMMENTED
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.tvms", "m.tvms"]


def test_fmt_that_fails_while_writing_leaves_the_file_whole(tmp_path):
    """A write that fails half-way (here: the file-size limit, as a full disk would)
    leaves the file as it was and no temporary file beside it."""
    path = tmp_path / "m.tvms"
    path.write_text(MESSY)
    limit = len(COMMENTED.encode()) // 2

    def limited() -> None:  # Python ignores SIGXFSZ: the write fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run(
        [sys.executable, "-m", "tvmlite", "fmt", str(path)],
        capture_output=True, text=True, preexec_fn=limited,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == f"tvms: error: {path}: cannot write: File too large\n"
    assert path.read_text() == MESSY
    assert [p.name for p in tmp_path.iterdir()] == ["m.tvms"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_fmt_refuses_a_file_the_user_may_not_write(tmp_path, capsys):
    path = tmp_path / "m.tvms"
    path.write_text(MESSY)
    path.chmod(0o444)
    code, _, err = run(["fmt", str(path)], capsys)
    assert (code, err) == (1, f"tvms: error: {path}: cannot write: Permission denied\n")
    assert path.read_text() == MESSY


def test_fmt_and_show_take_what_tvm_prints_with_its_check_off(tmp_path, capsys):
    """Layout and display need no well-formedness: a free var TVM's check refuses
    (and `check` with it) formats and shows."""
    path = tmp_path / "free.tvms"
    path.write_text(
        "# from tvm.script import tir as T\n\n@T.prim_func\n"
        'def main(A: T.Buffer((4,), "float32")):\n    n = T.int32()\n    A[n] = T.float32(0.0)\n'
    )
    assert run(["check", str(path)], capsys)[0] == 1
    assert run(["fmt", "--check", str(path)], capsys)[0] == 0
    code, out, _ = run(["show", "--color", "never", str(path)], capsys)
    assert code == 0 and "A[n] = T.float32(0.0)" in out
