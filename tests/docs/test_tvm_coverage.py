"""docs/tvm-coverage.md is what tools/tvm_coverage.py renders from TVM's names (kept in
the page) and tvmlite's tables now: a table that gains or loses a name fails here until
the page is refreshed (`python tools/tvm_coverage.py --refresh`, no TVM needed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tvmlite.dsl.parse import namespaces

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("tvm_coverage", ROOT / "tools" / "tvm_coverage.py")
coverage = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(coverage)


def test_page_matches_the_tables() -> None:
    page = coverage.PAGE.read_text()
    rendered = coverage.render(coverage.read_page(page))
    assert rendered == page, "docs/tvm-coverage.md is stale: run tools/tvm_coverage.py --refresh"


def test_page_keeps_tvms_names_for_every_namespace() -> None:
    tvm = coverage.read_page(coverage.PAGE.read_text())
    assert {"T", "T.cuda", "T.ptx", "T.tile", "R", "R.nn", "I"} <= set(tvm)
    assert "conv2d" in tvm["R.nn"]["parsed"] and "exp" in tvm["T"]["parsed"]
    # every namespace tvmlite has a table for is one TVM has too
    assert set(namespaces.names()) <= set(tvm)


def test_reasons() -> None:
    assert coverage.reason("T", "macro", False) == coverage.EVAL
    assert coverage.reason("R.dist", "Expr", False) == coverage.BUILDER
    assert coverage.reason("T", "buffer_data", True) == coverage.PRINTED_ONLY
    assert coverage.reason("T.cuda", "no_such_name", False) == coverage.GAP


def test_namespaces_view() -> None:
    names = namespaces.names()
    assert "conv2d" in names["R.nn"] and "call_tir" in names["R"] and "Tensor" in names["R"]
    assert "iket.mark" in names["T.cuda"] and "copy" in names["T.tile"]
    assert "remap" in names["T.axis"] and "prim_func" in names["T"]
    assert namespaces.accepts("T", "float16x4") and not namespaces.accepts("T", "float16x3q")
    assert "macro" in namespaces.refused()["T"] and "macro" not in names["T"]
