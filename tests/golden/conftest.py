"""Collects every `.tvms` file under tests/golden as a test item.

Each file must parse, print back identical in its own spelling (trailing
whitespace aside), re-parse to a structurally equal module, and survive a trip
through the other spelling and back. A file whose first line names
`check_well_formed=False` holds what TVM prints with its well-formedness check
off: it is parsed so, and the default parse must refuse it, located.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tvmlite
from tvmlite.dsl.dialect import tvm027_only
from tvmlite.dsl.module import CLASSIC, TVM027


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


class GoldenItem(pytest.Item):
    def runtest(self) -> None:
        path = Path(self.path)
        text = path.read_text()
        checked = "check_well_formed=False" not in text.partition("\n")[0]
        if not checked:
            with pytest.raises(tvmlite.VerifyError) as refused:
                tvmlite.parse(text, filename=str(path))
            assert refused.value.span is not None, "a well-formedness error without a location"
        mod = tvmlite.parse(text, filename=str(path), check_well_formed=checked)
        out = mod.script()
        if _lines(out) != _lines(text):
            if self.config.getoption("--update-golden"):
                path.write_text(out)
            else:
                raise GoldenMismatch(path, text, out)
        again = tvmlite.parse(out, check_well_formed=checked)
        assert tvmlite.structural_equal(again, mod), "parse(print(m)) != m"
        if mod.dialect == TVM027 and tvm027_only(mod):
            return  # classic cannot spell these: the trip through it is lossy by design
        other = TVM027 if mod.dialect == CLASSIC else CLASSIC
        back = tvmlite.parse(mod.script(dialect=other), check_well_formed=checked)
        there = tvmlite.parse(back.script(dialect=mod.dialect), check_well_formed=checked)
        assert tvmlite.structural_equal(there, mod)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, GoldenMismatch):
            return excinfo.value.describe()
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"golden: {Path(self.path).name}"


class GoldenMismatch(Exception):
    def __init__(self, path: Path, want: str, got: str):
        self.path, self.want, self.got = path, want, got

    def describe(self) -> str:
        import difflib

        diff = difflib.unified_diff(
            _lines(self.want), _lines(self.got), "expected", "printed", lineterm="", n=1
        )
        return f"{self.path.name} reprints differently:\n" + "\n".join(list(diff)[:40])


class GoldenFile(pytest.File):
    def collect(self):
        yield GoldenItem.from_parent(self, name=Path(self.path).name)


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".tvms":
        return GoldenFile.from_parent(parent, path=file_path)
    return None
