"""The recipe of docs/constants.md for users who have TVM: the page shows the
function of examples/tvm_constants.py as it is, and where Apache TVM is
installed the function's file parses back in tvmlite with every constant where
TVM numbered it (TVM itself is no dependency: without it, only the first test
runs)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import tvmlite

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "examples" / "tvm_constants.py"


def _recipe():
    spec = importlib.util.spec_from_file_location("tvm_constants", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_shows_the_recipe_as_it_is():
    page = (ROOT / "docs" / "constants.md").read_text()
    source = RECIPE.read_text()
    start = source.index("def save_constants(")
    function = source[start : source.index("\n\n\ndef ", start)] + "\n"
    shown = re.search(r"```python\n(def save_constants\(.*?)```", page, re.S)
    assert shown is not None and shown.group(1) == function


def test_tvm_numbering_is_what_the_recipe_saves(tmp_path):
    pytest.importorskip("tvm", reason="the recipe runs where Apache TVM is installed")
    from tvm import relax

    # Two constants of equal values (two entries), one used twice (one entry), and a
    # scalar TVM prints inline; two functions, printed `helper` first.
    x = relax.Var("x", relax.TensorType((3,), "float32"))
    y = relax.Var("y", relax.TensorType((3,), "float32"))
    first = relax.const(np.ones(3, "float32"))
    bb = relax.BlockBuilder()
    with bb.function("helper", [y]):
        out = bb.emit(relax.op.subtract(y, relax.const(np.arange(3, dtype="float32"))))
        bb.emit_func_output(out)
    with bb.function("main", [x]):
        a = bb.emit(relax.op.add(x, first))
        b = bb.emit(relax.op.multiply(a, relax.const(np.ones(3, "float32"))))
        c = bb.emit(relax.op.add(b, first))
        d = bb.emit(relax.op.multiply(c, relax.const(2.0, "float32")))
        bb.emit_func_output(d)
    mod = bb.get()
    text = mod.script()
    path = tmp_path / "m.constants.npz"
    assert _recipe().save_constants(mod, str(path)) == 3
    parsed = tvmlite.parse(text, constants=path)
    assert parsed.script() == text + ("" if text.endswith("\n") else "\n")
    np.testing.assert_array_equal(
        parsed["helper"].body.blocks[0].bindings[0].value.args[1].data, np.arange(3)
    )
    main = [binding.value for binding in parsed["main"].body.blocks[0].bindings]
    assert main[0].args[1] is main[2].args[1] and main[0].args[1] is not main[1].args[1]
    got = tvmlite.build(parsed)["main"](np.full(3, 2.0, "float32"))
    np.testing.assert_array_equal(got, np.full(3, 8.0))
