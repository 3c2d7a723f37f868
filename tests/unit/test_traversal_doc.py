"""The examples of docs/ir-traversal.md run, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "ir-traversal.md"


def test_traversal_doc_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    assert len(blocks) >= 6
    namespace: dict[str, object] = {"__name__": "ir_traversal_md"}
    for code in blocks:
        exec(compile(code, str(DOCS), "exec"), namespace)  # noqa: S102 - our own docs
