"""Type-check tvmlite's public API with mypy, as pyproject's [tool.mypy] says.

    python tests/unit/typecheck.py          # prints mypy's report; exit status is mypy's

The sources are not laid out as the package is installed (`dsl/` is
`tvmlite.dsl`, pyproject's package-dir), and mypy finds modules by folders, so
this lays them out as installed, with symbolic links in a temporary directory,
and runs mypy there with the project's configuration.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def installed_layout(into: Path) -> None:
    """Symbolic links under `into` that give every package its installed path."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = mapping["package-dir"]
    root = into / "tvmlite"
    root.mkdir()
    for entry in (ROOT / folders["tvmlite"]).iterdir():
        if entry.name != "__pycache__":
            (root / entry.name).symlink_to(entry)
    for package, folder in folders.items():
        if package != "tvmlite":
            (into / package.replace(".", "/")).symlink_to(ROOT / folder)


def run_mypy() -> subprocess.CompletedProcess[str]:
    """mypy over the public API; its report is in stdout."""
    with tempfile.TemporaryDirectory(prefix="tvmlite-typecheck-") as tmp:
        installed_layout(Path(tmp))
        command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
        return subprocess.run(
            [*command, "--cache-dir", str(Path(tmp) / ".mypy_cache")],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )


if __name__ == "__main__":
    done = run_mypy()
    print(done.stdout + done.stderr, end="")
    sys.exit(done.returncode)
