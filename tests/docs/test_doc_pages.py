"""Every code block of README.md and docs/*.md runs, as a reader would run it.

Each page runs in a directory of its own holding a copy of `examples/`, block
by block in page order: `python` blocks in one namespace (then every `test_*`
function they define is called, as pytest would), `sh` blocks with bash (the
installed `tvms` first on the PATH), `c` blocks compiled (a block with `main`
is written to `main.c` for the `sh` block after it to build and run; the others
are declarations, compiled against the header of `examples/add.tvms` built as
a library, `PREFIX_` and `NAME` read as its `add_` and `main`, so they cannot
drift from the generated header). A `text` block is output or a synopsis, not
code; when the prose before it says the block above "prints" it, each of its
lines must appear in what that block printed. A runnable block preceded by
`<!-- not run: REASON -->` is skipped; every other block must have one of these
languages."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis as a reader has it (its 200 ms deadline, which builds exceed), not the
# suite's `ci` profile; derandomized, so a page's property tests stay reproducible.
settings.register_profile(
    "reader",
    parent=settings.get_profile("default"),
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
NOT_RUN = re.compile(r"<!-- not run: (\S.*?) -->\s*$")
PRINTS = re.compile(r"\bprints(?: as)?:?\s*$")
LANGUAGES = ("python", "sh", "c", "text")
# A C declaration block defines the DLPack structs itself: it needs no header.
DEFINES_DLPACK = re.compile(r"}\s*DLTensor;")


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int  # of the block's first code line, 1-based
    prose: str  # the text between the previous block and this one
    not_run: str | None  # the reason, when marked

    def where(self, page: str) -> str:
        return f"{page}:{self.line}"


def blocks(page: str) -> list[Block]:
    text = (ROOT / page).read_text()
    found, end = [], 0
    for m in FENCE.finditer(text):
        prose = text[end : m.start()]
        marked = NOT_RUN.search(prose)
        line = text.count("\n", 0, m.start(2)) + 1
        found.append(Block(m.group(1), m.group(2), line, prose, marked and marked.group(1)))
        end = m.end()
    return found


def test_every_block_says_what_it_is() -> None:
    bad = []
    for page in PAGES:
        for block in blocks(page):
            if block.lang not in LANGUAGES:
                bad.append(f"{block.where(page)}: ```{block.lang}: give one of {LANGUAGES}")
            elif block.not_run and block.lang == "text":
                bad.append(f"{block.where(page)}: a text block is never run: no marker needed")
    assert not bad, "\n".join(bad)


@pytest.fixture(scope="module")
def add_header(tmp_path_factory) -> Path:
    """The folder of add.so and add.h, built from examples/add.tvms."""
    import tvmlite

    folder = tmp_path_factory.mktemp("add")
    tvmlite.build(tvmlite.parse_file(ROOT / "examples" / "add.tvms"), cache=False).export_library(
        folder / "add.so"
    )
    return folder


class PageRun:
    """One page's blocks, run in order in `folder`."""

    def __init__(self, page: str, folder: Path, header: Path | None, capsys, monkeypatch) -> None:
        self.page, self.folder, self.header, self.capsys = page, folder, header, capsys
        # A real module: dataclasses and pickling look classes up in sys.modules.
        module = types.ModuleType(re.sub(r"\W", "_", page))
        monkeypatch.setitem(sys.modules, module.__name__, module)
        self.namespace: dict[str, object] = module.__dict__
        self.printed = ""
        bindir = str(Path(sys.executable).parent)
        self.env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
        self.env.pop("FORCE_COLOR", None)

    def run(self, block: Block) -> None:
        if block.lang == "python":
            # Padded so that a traceback points at the line of the page.
            code = "\n" * (block.line - 1) + block.code
            program = compile(code, str(ROOT / self.page), "exec", dont_inherit=True)
            exec(program, self.namespace)  # noqa: S102 - our own docs
            self.printed = self.capsys.readouterr().out
        elif block.lang == "sh":
            self.printed = self.shell(block)
        elif block.lang == "c":
            self.compile_c(block)
        elif PRINTS.search(block.prose):
            missing = [
                line
                for line in block.code.splitlines()
                if line.strip() not in ("", "...") and line not in self.printed
            ]
            assert not missing, f"{block.where(self.page)}: not printed: {missing}"

    def shell(self, block: Block) -> str:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block.code],
            cwd=self.folder, env=self.env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, f"{block.where(self.page)}: exit {done.returncode}\n" + (
            done.stdout + done.stderr
        )
        return done.stdout

    def compile_c(self, block: Block) -> None:
        if "int main(" in block.code:
            (self.folder / "main.c").write_text(block.code)
            return  # the sh block after it builds and runs it
        assert self.header is not None
        code = block.code.replace("PREFIX_", "add_").replace("NAME", "main")
        if DEFINES_DLPACK.search(code):
            source = "#include <stdint.h>\n" + code
        else:
            source = '#include <stdint.h>\n#include "add.h"\n' + code
        cc = shutil.which("cc") or "cc"
        done = subprocess.run(
            [cc, "-std=c11", "-Wall", "-Werror", "-fsyntax-only", "-I", str(self.header),
             "-x", "c", "-"],
            input=source, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, f"{block.where(self.page)}: {done.stderr}"

    def run_tests(self) -> None:
        """The `test_*` functions the page defined, called as pytest would."""
        for name, value in list(self.namespace.items()):
            if name.startswith("test_") and callable(value):
                value()


@pytest.mark.parametrize("page", PAGES)
def test_page_runs(page: str, tmp_path: Path, monkeypatch, capsys, request) -> None:
    header = None
    if any(block.lang == "c" for block in blocks(page)):
        if shutil.which("cc") is None:
            pytest.skip(f"{page} compiles C: needs cc")
        header = request.getfixturevalue("add_header")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # modules a page writes import from here
    runner = PageRun(page, tmp_path, header, capsys, monkeypatch)
    settings.load_profile("reader")  # before the blocks: `@settings(...)` inherits it
    try:
        for block in blocks(page):
            if block.not_run is None:
                runner.run(block)
        runner.run_tests()
    finally:
        settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
        cleanup = runner.namespace.get("cleanup")
        if callable(cleanup):
            cleanup()
