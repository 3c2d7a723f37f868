"""tvmlite's `T.*` builtin tables against calls TVM 0.27 parsed and printed itself
(tests/unit/data/tvm_builtin_calls.json, written by tools/tvm_builtin_calls.py): every
entry of the tables has its parse rule (the call TVM accepts parses, defaults and
aliases filled as TVM fills them), its print rule (it prints as TVM prints it) and its
result type rule (the call's dtype is TVM's); and every entry has such a call."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.parse import namespaces
from tvmlite.dsl.parse.tir.device import PTX_FAMILIES
from tvmlite.dsl.parse.tir.intrin import BUILTINS

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((Path(__file__).parent / "data" / "tvm_builtin_calls.json").read_text())
SAMPLES = DATA["samples"]


def _module(statement: str) -> str:
    """The call as a statement of a module's function (a module keeps the spelling)."""
    head = f"@I.ir_module\nclass Module:\n    @T.prim_func\n    def f({DATA['params']}):\n"
    return f"{DATA['header']}{head}        {statement}\n"


def _accepted(qualified: str) -> bool:
    space, _, name = qualified.rpartition(".")
    if space.count(".") == 2:  # T.cuda.iket.mark
        space, _, head = space.rpartition(".")
        name = f"{head}.{name}"
    return namespaces.accepts(space, name)


def _dtype(tvm_type: str) -> str:
    """TVM's `ty` of a call as tvmlite's dtype: a statement (void) is a handle call."""
    if tvm_type == "" or tvm_type.startswith("T.handle"):
        return "handle"
    return tvm_type


def _dtype_of(mod: tvmlite.IRModule) -> str:
    body = mod["f"].body
    assert isinstance(body, tir.Evaluate), body
    return body.value.dtype


COVERED = sorted(name for name in SAMPLES if _accepted(name))


@pytest.mark.parametrize("qualified", COVERED)
def test_tvm_printed_call_reprints_with_tvms_type(qualified: str) -> None:
    sample = SAMPLES[qualified]
    text = _module(sample["printed"])
    mod = tvmlite.parse(text, check_well_formed=False)
    assert mod.script().strip().splitlines()[-1].strip() == sample["printed"]
    again = tvmlite.parse(mod.script(), check_well_formed=False)
    assert tvmlite.structural_equal(again, mod)
    if sample["reparsed_type"] is not None:  # else TVM cannot parse its own print back
        assert _dtype_of(mod) == _dtype(sample["reparsed_type"])


@pytest.mark.parametrize("qualified", COVERED)
def test_call_as_written_parses_as_tvm_parses_it(qualified: str) -> None:
    sample = SAMPLES[qualified]
    mod = tvmlite.parse(_module(sample["call"]), check_well_formed=False)
    assert mod.script().strip().splitlines()[-1].strip() == sample["printed"]
    assert _dtype_of(mod) == _dtype(sample["type"])
    if sample["reparsed_type"] == sample["type"]:  # else TVM's print loses the type too
        again = tvmlite.parse(mod.script(), check_well_formed=False)
        assert tvmlite.structural_equal(again, mod)


def _tvm_parses() -> set[str]:
    """Qualified names TVM 0.27's parser accepts, as docs/tvm-coverage.md keeps them."""
    found = set()
    for line in (ROOT / "docs" / "tvm-coverage.md").read_text().splitlines():
        match = re.match(r"^<!-- tvm (\S+) parsed: (.*) -->$", line)
        if match:
            found |= {f"{match.group(1)}.{name}" for name in match.group(2).split()}
    return found


def test_every_table_entry_has_a_call_tvm_printed() -> None:
    """A builtin without one has a parse, print or type rule nobody checked; only the
    names TVM's parser does not take (tvmlite's own spellings, names TVM only
    prints) have none. TVM's PTX instructions share one rule (a statement: operands,
    then modifier strings), which the instructions sampled check for all of them."""
    qualified = {f"T.{name}" for name in BUILTINS} & _tvm_parses()
    shared = {f"T.ptx.{name}" for name in PTX_FAMILIES}
    missing = sorted(qualified - shared - set(SAMPLES))
    assert not missing, f"no call TVM printed (tools/tvm_builtin_calls.py): {missing}"
    assert len(shared & set(SAMPLES)) >= 10
