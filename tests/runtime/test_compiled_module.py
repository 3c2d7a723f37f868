"""One compiled-module protocol: what `build()` returns (an Executable over the
JIT's code), what the compile cache hands back and what `load_module()` returns
(a Library over a mapped file) look up, call, refuse and export alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.runtime import CompiledModule, Executable, Library

MOD = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), "float32"), y: R.Tensor((3,), "float32")) -> R.Tensor(("n", 3), "float32"):
        z = R.add(x, y)
        return z

    @R.function(private=True)
    def helper(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):
        return x

    @R.function
    def pair(x: R.Tensor((3,), "float32")) -> R.Tuple(R.Tensor((3,), "float32"), R.Tensor((3,), "float32")):
        a = R.multiply(x, x)
        b = R.negative(x)
        return (a, b)
"""


def modules(tmp_path: Path) -> dict[str, CompiledModule]:
    mod = tvmlite.parse(MOD)
    built = tvmlite.build(mod, cache=False)
    tvmlite.build(mod)  # stores the entry the next build loads
    return {
        "built": built,
        "cached": tvmlite.build(mod),
        "loaded": tvmlite.load_module(built.export_library(tmp_path / "m.so")),
    }


def test_built_cached_and_loaded_modules_share_one_protocol(cache_dir, tmp_path: Path) -> None:
    found = modules(tmp_path)
    assert isinstance(found["built"], Executable)
    assert isinstance(found["cached"], Library) and isinstance(found["loaded"], Library)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    y = np.array([1, 2, 3], "float32")
    for how, m in found.items():
        assert isinstance(m, CompiledModule), how
        assert m.functions == ["main", "pair"] and list(m) == m.functions, how
        assert "main" in m and "helper" not in m, how
        np.testing.assert_array_equal(m["main"](x, y), x + y)
        squares, negated = m["pair"](y)
        np.testing.assert_array_equal(squares, y * y)
        np.testing.assert_array_equal(negated, -y)
        with pytest.raises(tvmlite.TVMLiteError, match="'helper' is private"):
            m["helper"]
        with pytest.raises(tvmlite.TVMLiteError, match="'nope' does not exist.*main, pair"):
            m["nope"]
        with pytest.raises(tvmlite.TVMLiteError, match="parameter 'y'.*expected shape"):
            m["main"](x, y[:2])
        again = tvmlite.load_module(m.export_library(tmp_path / f"{how}.so"))
        np.testing.assert_array_equal(again["main"](x, y), x + y)
    # The JIT's code and the cache's listing show their LLVM IR; a bare file keeps none.
    for how in ("built", "cached"):
        assert "tvmlite_entry_main" in found[how].llvm_ir()
    with pytest.raises(tvmlite.TVMLiteError, match="keeps no LLVM IR"):
        found["loaded"].llvm_ir()
