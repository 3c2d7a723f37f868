"""The compile cache: hits, keys, corrupted and foreign entries, concurrent
builds. Every test uses its own cache directory."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tvmlite
from tvmlite.runtime import cache
from tvmlite.runtime.executable import Executable
from tvmlite.runtime.loader import Library

SOURCE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        z = R.multiply(x, y)
        return z
"""


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TVMLITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TVMLITE_NO_CACHE", raising=False)
    return tmp_path / "cache"


def _call(ex):
    x = np.arange(4, dtype="float32")
    return ex["main"](x, x).tolist()


def test_second_build_loads_the_cached_library(cache_dir):
    mod = tvmlite.parse(SOURCE)
    first = tvmlite.build(mod)
    assert isinstance(first, Executable)
    assert len(list(cache_dir.glob("*.so"))) == 1 and len(list(cache_dir.glob("*.json"))) == 1
    second = tvmlite.build(tvmlite.parse(SOURCE))
    assert isinstance(second, Library)
    assert _call(first) == _call(second) == [0, 1, 4, 9]
    assert "tvmlite_entry_main" in second.llvm_ir()


def test_key_depends_on_names_target_and_pipeline(cache_dir):
    from tvmlite.lowering.target import Target

    mod = tvmlite.parse(SOURCE)
    renamed = tvmlite.parse(SOURCE.replace("x: R", "a: R").replace("(x, y)", "(a, y)"))
    key = cache.cache_key(mod, Target("llvm"), None)
    assert key == cache.cache_key(tvmlite.parse(SOURCE), Target("llvm"), None)
    assert key != cache.cache_key(renamed, Target("llvm"), None)
    assert key != cache.cache_key(mod, Target("llvm -opt-level=1"), None)
    assert key != cache.cache_key(mod, Target("llvm"), "default")
    assert cache.cache_key(mod, Target("llvm"), lambda m: m) is None


def test_disabled_by_env_and_argument(cache_dir, monkeypatch):
    tvmlite.build(tvmlite.parse(SOURCE), cache=False)
    assert not cache_dir.exists() or not list(cache_dir.iterdir())
    monkeypatch.setenv("TVMLITE_NO_CACHE", "1")
    tvmlite.build(tvmlite.parse(SOURCE))
    assert not cache_dir.exists() or not list(cache_dir.iterdir())


@pytest.mark.parametrize("damage", ["truncate", "flip", "version", "format"])
def test_damaged_or_foreign_entry_is_rebuilt(cache_dir, damage):
    tvmlite.build(tvmlite.parse(SOURCE))
    (lib,) = cache_dir.glob("*.so")
    meta_path = lib.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    if damage == "truncate":
        lib.write_bytes(lib.read_bytes()[:100])
    elif damage == "flip":
        data = bytearray(lib.read_bytes())
        data[len(data) // 2] ^= 0xFF
        lib.write_bytes(bytes(data))
    else:
        meta["tvmlite" if damage == "version" else "format"] = "0.0-other"
        meta_path.write_text(json.dumps(meta))
    rebuilt = tvmlite.build(tvmlite.parse(SOURCE))
    assert isinstance(rebuilt, Executable)  # never loaded the bad entry
    assert _call(rebuilt) == [0, 1, 4, 9]
    assert isinstance(tvmlite.build(tvmlite.parse(SOURCE)), Library)  # and repaired it


def test_concurrent_builds_of_one_module(cache_dir, tmp_path):
    source = tmp_path / "m.tvms"
    source.write_text(SOURCE)
    script = textwrap.dedent(f"""
        import numpy as np, tvmlite
        ex = tvmlite.build(tvmlite.parse_file({str(source)!r}))
        x = np.arange(4, dtype="float32")
        print(ex["main"](x, x).tolist())
    """)
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == ["[0.0, 1.0, 4.0, 9.0]"] * 2
    assert len(list(cache_dir.glob("*.so"))) == 1
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".")]  # no temp files left
    hit = tvmlite.build(tvmlite.parse(SOURCE))
    assert isinstance(hit, Library) and _call(hit) == [0, 1, 4, 9]


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("TVMLITE_CACHE_DIR", raising=False)
    monkeypatch.delenv("TVMLITE_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "tvmlite"
