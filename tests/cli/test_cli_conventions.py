"""`tvms` behaves as ruff, black and clang users expect, checked by running it
as a real process: --version, help, exit codes (2 usage, 130 Ctrl-C), one error
format, sub-command usage on a bad flag, directories, colour variables, output
suffixes, run's inputs and dims, the progress line and the cache commands."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from cli_common import EXAMPLE, GOOD

import tvmlite
from tvmlite.cli_args import parser
from tvmlite.printer.highlight import wants_colour

COLOUR_VARS = ("FORCE_COLOR", "CLICOLOR_FORCE", "NO_COLOR", "TERM", "COLORTERM")


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in COLOUR_VARS}
    out["TVMLITE_CACHE_DIR"] = str(tmp_path / "cache")
    out.pop("TVMLITE_NO_CACHE", None)
    return out


def tvms(*args: object, env: dict[str, str], cwd: Path | None = None, stdin: str = ""):
    return subprocess.run(
        [sys.executable, "-m", "tvmlite", *map(str, args)],
        capture_output=True,
        text=True,
        input=stdin,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def test_no_arguments_version_and_help(env) -> None:
    bare = tvms(env=env)
    assert bare.returncode == 2 and bare.stdout == ""
    assert bare.stderr.startswith("usage: tvms") and "cache" in bare.stderr
    version = tvms("--version", env=env)
    assert (version.returncode, version.stdout) == (0, f"tvms (tvmlite) {tvmlite.__version__}\n")
    run_help = tvms("run", "--help", env=env)
    assert run_help.returncode == 0
    assert "Call one function" in run_help.stdout and "examples:\n  tvms run " in run_help.stdout


def test_every_command_has_a_description_and_an_example() -> None:
    _, commands = parser()
    assert set(commands) == {"check", "fmt", "show", "build", "run", "import", "cache"}
    for name, command in commands.items():
        text = command.format_help()
        assert command.description and len(command.description) > 30, name
        assert f"examples:\n  tvms {name} " in text, name


def test_opt_levels_and_bad_flags_use_the_command_usage(tmp_path, env) -> None:
    path = tmp_path / "m.tvms"
    path.write_text(GOOD)
    ok = tvms("build", path, "-o", "-", "--emit", "tir", "-O", "2", env=env)
    assert ok.returncode == 0 and "def main" in ok.stdout
    four = tvms("build", path, "-o", "x.so", "-O4", env=env)
    assert four.returncode == 2
    assert four.stderr.startswith("usage: tvms build")
    assert (
        "tvms build: error: argument -O: invalid choice: 4 (choose from 0, 1, 2, 3)" in four.stderr
    )
    flag = tvms("run", path, "--frobnicate", env=env)
    assert flag.returncode == 2 and flag.stderr.startswith("usage: tvms run")
    assert "unrecognized arguments: --frobnicate" in flag.stderr


def test_directories_walk_and_file_errors_are_reported_once(tmp_path, env) -> None:
    (tmp_path / "models" / "sub").mkdir(parents=True)
    (tmp_path / "models" / ".hidden").mkdir()
    (tmp_path / "models" / "a.tvms").write_text(GOOD)
    (tmp_path / "models" / "sub" / "b.tvms").write_text(GOOD.replace("float32(1.0)", "float33(1)"))
    (tmp_path / "models" / ".hidden" / "c.tvms").write_text("not tvms")
    (tmp_path / "models" / "notes.txt").write_text("not tvms")
    (tmp_path / "empty").mkdir()
    done = tvms("check", "models", "missing.tvms", "empty", env=env, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "2 of 3 files failed\n"
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"{Path('models/sub/b.tvms')}:10:") and "error:" in lines[0]
    assert "tvms: error: missing.tvms: No such file or directory" in lines
    assert "tvms: warning: empty: no .tvms files" in lines
    assert "Errno" not in done.stderr and done.stderr.count("missing.tvms") == 1
    assert "c.tvms" not in done.stderr and "notes" not in done.stderr
    messy = tmp_path / "models" / "a.tvms"
    messy.write_text(GOOD.replace("for i in range(4):", "for i in T.serial(4):"))
    fmt = tvms("fmt", "--check", "models", env=env, cwd=tmp_path)
    assert fmt.returncode == 1 and f"{Path('models/a.tvms')}: would reformat" in fmt.stderr


def test_build_and_runtime_errors_have_the_error_prefix(tmp_path, env) -> None:
    path = tmp_path / "m.tvms"
    path.write_text(GOOD)
    target = tvms("build", path, "-o", tmp_path / "m.so", "--target", "llvm -mcpu=skylak", env=env)
    assert target.returncode == 1
    assert target.stderr.startswith("tvms: error: -mcpu: unknown CPU 'skylak' (did you mean")
    np.save(tmp_path / "short.npy", np.zeros(3, "float32"))
    runtime = tvms("run", path, "--input", f"A={tmp_path / 'short.npy'}", "--random", env=env)
    assert runtime.returncode == 1
    assert runtime.stderr.startswith("tvms: error: main: parameter 'A'")


def test_colour_variables(tmp_path, env) -> None:
    path = tmp_path / "m.tvms"
    path.write_text(GOOD)
    assert "\x1b[" in tvms("show", path, env=env | {"CLICOLOR_FORCE": "1"}).stdout  # a pipe
    assert "\x1b[" not in _on_terminal(["show", str(path)], env | {"TERM": "dumb"})[0]
    assert "\x1b[" in _on_terminal(["show", str(path)], env | {"TERM": "xterm"})[0]


@pytest.mark.parametrize(
    ("color", "terminal", "environ", "expected"),
    [
        ("auto", False, {}, False),
        ("auto", True, {}, True),
        ("auto", False, {"FORCE_COLOR": "1"}, True),
        ("auto", False, {"FORCE_COLOR": "0"}, False),
        ("auto", False, {"CLICOLOR_FORCE": "1"}, True),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),  # set but empty: not set (no-color.org)
        ("auto", False, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),  # CPython's order
        ("auto", True, {"TERM": "dumb"}, False),
        ("auto", False, {"TERM": "dumb", "FORCE_COLOR": "1"}, True),
        ("always", False, {"NO_COLOR": "1"}, True),  # the flag first
        ("never", True, {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_decision(color, terminal, environ, expected) -> None:
    assert wants_colour(color, terminal, environ) is expected


def test_output_suffix_and_foreign_header(tmp_path, env) -> None:
    path = tmp_path / "m.tvms"
    path.write_text(GOOD.replace("@T.prim_func", "@T.prim_func(private=True)"))
    odd = tvms("build", path, "-o", tmp_path / "out.xyz", env=env)
    assert odd.returncode == 1 and "cannot tell what to write from the suffix '.xyz'" in odd.stderr
    assert not (tmp_path / "out.xyz").exists() and not (tmp_path / "out.h").exists()
    (tmp_path / "out.h").write_text("/* my own header */\n")
    foreign = tvms("build", EXAMPLE, "-o", tmp_path / "out.so", env=env)
    assert (
        foreign.returncode == 1 and "out.h exists and was not written by tvmlite" in foreign.stderr
    )
    assert (tmp_path / "out.h").read_text() == "/* my own header */\n"
    assert not (tmp_path / "out.so").exists()
    (tmp_path / "out.h").unlink()
    for _ in range(2):  # a header tvmlite wrote is rewritten
        assert tvms("build", EXAMPLE, "-o", tmp_path / "out.so", env=env).returncode == 0


def test_run_inputs_dims_and_sizes(tmp_path, env) -> None:
    lib = tmp_path / "mlp.so"
    assert tvms("build", EXAMPLE, "-o", lib, env=env).returncode == 0
    dim = tvms("run", lib, "--random", "--dim", "m=3", env=env)
    assert dim.returncode == 1
    assert (
        dim.stderr == "tvms: error: --dim m: main has no symbolic dim 'm' (its symbolic dims: n)\n"
    )
    huge = tvms("run", lib, "--random", "--dim", "n=100000000", env=env)
    assert huge.returncode == 1 and huge.stderr.startswith("tvms: error: parameter 'x' of shape")
    assert "(100000000, 784)" in huge.stderr and "GiB" in huge.stderr
    x = np.asfortranarray(np.random.default_rng(0).standard_normal((3, 784), dtype="float32"))
    np.save(tmp_path / "x.npy", x)
    first = tvms("run", lib, "--input", f"x={tmp_path / 'x.npy'}", "--random",
                 "--output", tmp_path / "out.npz", env=env)  # fmt: skip
    assert first.returncode == 0, first.stderr
    # .npz as --output writes it: its one array, or one picked by key
    np.savez(tmp_path / "xs.npz", x=x, other=np.zeros(1))
    again = tvms("run", lib, "--input", f"x={tmp_path / 'xs.npz'}", "--random",
                 "--output", tmp_path / "again.npz", env=env)  # fmt: skip
    assert again.returncode == 0, again.stderr
    np.testing.assert_array_equal(
        np.load(tmp_path / "out.npz")["result"], np.load(tmp_path / "again.npz")["result"]
    )
    keyed = tvms("run", lib, "--input", f"x={tmp_path / 'out.npz'}:nope", "--random", env=env)
    assert keyed.returncode == 1 and "has no array 'nope' (arrays: result)" in keyed.stderr


def test_ctrl_c_exits_130(tmp_path, env) -> None:
    fifo = tmp_path / "in.tvms"
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-m", "tvmlite", "check", str(fifo)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # as from a terminal: a suite started in the background (`pytest &` without job
        # control) has SIGINT ignored, and its children would inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        writer = None
        deadline = time.monotonic() + 120
        while writer is None and time.monotonic() < deadline:
            try:  # succeeds once the child has the FIFO open: it is inside main()
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.05)
        assert writer is not None, "tvms never opened its input"
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        os.close(writer)
    finally:
        child.kill()
    assert child.returncode == 130 and "Traceback" not in err


def test_progress_line_only_on_a_terminal(tmp_path, env) -> None:
    code = (
        "import sys, tvmlite.cli_progress as p\n"
        "p.PROGRESS_AFTER = 0.0\n"  # every build counts as long here
        "from tvmlite.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    argv = ["build", str(EXAMPLE), "-o", str(tmp_path / "m.so"), "--no-cache"]
    _, err = _on_terminal(argv, env | {"TERM": "xterm"}, code=code, stderr_too=True)
    assert f"tvms: building {EXAMPLE} (" in err and err.endswith("\r\x1b[K")
    piped = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, check=False
    )
    assert piped.returncode == 0 and piped.stderr == ""


def test_cache_info_clear_and_cap(tmp_path, env) -> None:
    path = tmp_path / "m.tvms"
    path.write_text(GOOD.replace("@T.prim_func", "@T.prim_func(private=True)"))
    empty = tvms("cache", "info", env=env)
    assert empty.returncode == 0 and "entries: 0 (0 B)" in empty.stdout
    assert "size cap: 1.0 GiB" in empty.stdout
    other = tmp_path / "other.tvms"
    other.write_text(path.read_text().replace("1.0", "2.0"))
    assert tvms("run", path, "--random", env=env).returncode == 0
    assert tvms("run", other, "--random", env=env).returncode == 0
    info = tvms("cache", "info", env=env)
    assert f"cache: {tmp_path / 'cache'}\n" in info.stdout and "entries: 2 (" in info.stdout
    capped = env | {"TVMLITE_CACHE_SIZE": "1K"}  # smaller than any entry: only the newest stays
    assert tvms("run", path, "--random", "--no-legalize", env=capped).returncode == 0
    info = tvms("cache", "info", env=capped)
    assert "entries: 1 (" in info.stdout and "size cap: 1.0 KiB" in info.stdout
    cleared = tvms("cache", "clear", env=env)
    assert cleared.returncode == 0 and cleared.stdout.startswith("removed 1 entries")
    assert (tmp_path / "cache" / "secret").exists()
    assert "entries: 0 (0 B)" in tvms("cache", "info", env=env).stdout


def _on_terminal(
    argv: list[str], env: dict[str, str], code: str | None = None, stderr_too: bool = False
) -> tuple[str, str]:
    """(stdout, stderr) of tvms with stdout (and stderr) on a pseudo-terminal."""
    leader, follower = pty.openpty()
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "tvmlite"]
    child = subprocess.Popen(
        [*command, *argv],
        stdout=follower,
        stderr=follower if stderr_too else subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    err = child.stderr.read().decode() if child.stderr else ""
    child.wait(timeout=60)
    assert child.returncode == 0, (b"".join(chunks), err)
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    return (text, text) if stderr_too else (text, err)
