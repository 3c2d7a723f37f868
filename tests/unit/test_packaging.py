"""pyproject lists every package folder: a missing one vanishes from regular installs."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_listed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapping = config["package-dir"]
    found = set()
    for package, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            found.add(".".join((package, *rel.parts)))
    assert found == listed


def test_grammar_file_is_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "*.lark" in config["package-data"]["tvmlite.grammar"]
    assert list((ROOT / "grammar").glob("*.lark")), "grammar/ holds the .lark file"
