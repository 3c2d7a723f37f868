"""The examples of docs/schedule.md run, in order, and print what the page says."""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schedule.md"


def test_schedule_doc_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    text = DOCS.read_text()
    # Each python block, with the plain block after it when the page says it prints that.
    shown = r"(?:\n\n(?:prints|The scheduled function prints as)\n\n```\n(.*?)```)?"
    parts = list(re.finditer(r"```python\n(.*?)```" + shown, text, re.S))
    assert len(parts) >= 10 and sum(1 for p in parts if p.group(2)) >= 3
    namespace: dict[str, object] = {"__name__": "schedule_md"}
    for part in parts:
        code, printed = part.group(1), part.group(2) or ""
        # Padded so that a failure points at the line of the page.
        padded = "\n" * text.count("\n", 0, part.start(1)) + code
        exec(compile(padded, str(DOCS), "exec"), namespace)  # noqa: S102 - our own docs
        out = capsys.readouterr().out
        for line in printed.splitlines():
            if line.strip() != "...":
                assert line in out, line
