"""The operator list of docs/frontend.md is the converter registry's, and the registry
covers every operator TVM 0.27's translator converts.

    python tests/frontend/test_operator_list.py   # rewrites the list in the page
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

import tvmlite.frontend.aten  # noqa: E402, F401  (registers the converters)
from tvmlite.frontend.registry import CONVERTERS  # noqa: E402
from tvmlite.frontend.tvm_ops import TVM_027_OPERATORS  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "frontend.md"
BEGIN, END = "<!-- operators: begin -->", "<!-- operators: end -->"
FAMILIES = {
    "unary": "Elementwise math and activations",
    "binary": "Binary arithmetic, comparison, logic; sizes",
    "linalg": "Linear algebra",
    "conv_pool": "Convolution, pooling, padding",
    "norm": "Normalization, attention, loss",
    "reduce": "Reductions, scans, search",
    "shape": "Shapes, views, joining, slicing",
    "index": "Indexing, gather and scatter",
    "create": "Creation, dtypes, copies",
    "image": "Image",
    "rnn": "Recurrent layers",
    "control": "Tuples, scalars, assertions, control flow",
}


def _family(name: str) -> str:
    fn = CONVERTERS[name]
    module = fn.__module__ if hasattr(fn, "__name__") else type(fn).__module__
    return module.rsplit(".", 1)[-1]


def operator_list() -> str:
    """The page's list: the counts, then each family's operators (extras marked)."""
    ours = set(CONVERTERS)
    extra = sorted(ours - TVM_027_OPERATORS)
    lines = [
        f"TVM 0.27's translator converts {len(TVM_027_OPERATORS)} operators; tvmlite converts "
        f"{len(ours)}: all {len(TVM_027_OPERATORS & ours)} of TVM's and {len(extra)} that "
        f"torch.export writes and TVM does not convert ({', '.join(f'`{e}`' for e in extra)}, "
        "marked +).",
        "",
    ]
    for family, title in FAMILIES.items():
        names = sorted(n for n in ours if _family(n) == family)
        marked = [f"`{n}`" + (" +" if n not in TVM_027_OPERATORS else "") for n in names]
        lines.append(f"- **{title}** ({len(names)}): {', '.join(marked)}")
    return "\n".join(lines)


def _page_list() -> str:
    text = PAGE.read_text()
    match = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    assert match, f"{PAGE} has no {BEGIN} ... {END} section"
    return match.group(1)


def test_every_tvm_operator_has_a_converter() -> None:
    assert sorted(TVM_027_OPERATORS - set(CONVERTERS)) == []


def test_every_converter_is_in_a_listed_family() -> None:
    assert sorted(n for n in CONVERTERS if _family(n) not in FAMILIES) == []


def test_page_lists_the_registry() -> None:
    assert _page_list() == operator_list(), (
        "docs/frontend.md's operator list is stale: python tests/frontend/test_operator_list.py"
    )


if __name__ == "__main__":
    text = PAGE.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    PAGE.write_text(text[:start] + "\n" + operator_list() + "\n" + text[end:])
    sys.exit(0)
