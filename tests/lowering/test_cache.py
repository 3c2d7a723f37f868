"""The compile cache: hits, keys, corrupted and foreign entries, concurrent
builds, and what it refuses to trust (swapped, planted, symlinked, foreign
entries; directories others can write). Every test uses its own cache directory."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.lowering.cache import directory as cache_dir_module
from tvmlite.lowering.cache import entries as cache
from tvmlite.lowering.cache.directory import configured_dir
from tvmlite.runtime.executable import Executable

ROOT = Path(__file__).resolve().parents[2]
SOURCE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        z = R.multiply(x, y)
        return z
"""


def _call(ex):
    x = np.arange(4, dtype="float32")
    return ex["main"](x, x).tolist()


def test_second_build_loads_the_cached_library(cache_dir):
    mod = tvmlite.parse(SOURCE)
    first = tvmlite.build(mod)
    assert isinstance(first, Executable)
    # and the metadata of it, of its kernel and of its lowered prim function (and
    # of the support helpers' object, when this process compiled them)
    kinds = sorted(json.loads(m.read_text()).get("kind", "build") for m in cache_dir.glob("*.json"))
    assert kinds in (["build", "kernel", "lowered"], ["build", "kernel", "lowered", "support"])
    assert len(list(cache_dir.glob("*.so"))) == 1 and len(list(cache_dir.glob("*.tir"))) == 1
    second = tvmlite.build(tvmlite.parse(SOURCE))
    assert "cache" in second.timings
    assert _call(first) == _call(second) == [0, 1, 4, 9]
    assert "tvmlite_entry_main" in second.llvm_ir()


def test_a_hit_is_an_executable_named_by_the_users_file(cache_dir, tmp_path):
    """A hit is the same kind of object as a fresh build, and both name the file the
    module came from, never the cache's own file."""
    path = tmp_path / "model.tvms"
    path.write_text(SOURCE)
    built = [tvmlite.build(tvmlite.parse_file(path)) for _ in range(2)]
    assert "cache" not in built[0].timings and "cache" in built[1].timings
    for ex in built:
        assert isinstance(ex, Executable)
        assert repr(ex) == f"<Executable main from {path}>"
        with pytest.raises(tvmlite.TVMLiteError, match=f"'nope' does not exist in {path} "):
            ex["nope"]
    assert repr(tvmlite.build(tvmlite.parse(SOURCE))) == "<Executable main>"


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
    # None is the target's default pipeline, one entry with the name spelled out,
    # and the one `build` stores
    assert key == cache.cache_key(mod, Target("llvm"), Target("llvm").default_pipeline)
    assert key != cache.cache_key(mod, Target("llvm"), "minimal")
    tvmlite.build(mod)
    assert [p.name for p in cache_dir.glob("*.so")] == [f"{key}.so"]


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
    assert "cache" in tvmlite.build(tvmlite.parse(SOURCE)).timings  # and repaired it


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
    assert "cache" in hit.timings and _call(hit) == [0, 1, 4, 9]


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("TVMLITE_CACHE_DIR", raising=False)
    monkeypatch.delenv("TVMLITE_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert configured_dir() == tmp_path / "tvmlite"


# ---------------------------------------------------------------- trust

OTHER = SOURCE.replace("R.multiply", "R.add")  # same signature, x + y


def _entry(cache_dir, source):
    from tvmlite.lowering.target import Target

    key = cache.cache_key(tvmlite.parse(source), Target("llvm"), None)
    return cache_dir / f"{key}.so", cache_dir / f"{key}.json"


def test_directory_and_secret_are_owner_only(cache_dir):
    tvmlite.build(tvmlite.parse(SOURCE))
    assert cache_dir.stat().st_mode & 0o777 == 0o700
    assert (cache_dir / "secret").stat().st_mode & 0o777 == 0o600
    meta = json.loads(next(cache_dir.glob("*.json")).read_text())
    assert len(meta["mac"]) == 64


def test_swapped_library_with_its_checksum_is_rebuilt(cache_dir):
    """Module OTHER's library and checksum in SOURCE's entry: the seal fails."""
    tvmlite.build(tvmlite.parse(SOURCE))
    tvmlite.build(tvmlite.parse(OTHER))
    lib, meta_path = _entry(cache_dir, SOURCE)
    other_lib, _ = _entry(cache_dir, OTHER)
    lib.write_bytes(other_lib.read_bytes())
    meta = json.loads(meta_path.read_text())
    meta["sha256"] = hashlib.sha256(lib.read_bytes()).hexdigest()
    meta_path.write_text(json.dumps(meta))
    rebuilt = tvmlite.build(tvmlite.parse(SOURCE))
    assert isinstance(rebuilt, Executable)
    assert _call(rebuilt) == [0, 1, 4, 9]  # x * y, not OTHER's x + y
    assert _call(tvmlite.build(tvmlite.parse(SOURCE))) == [0, 1, 4, 9]  # repaired


@pytest.mark.parametrize("mac", ["absent", "forged"])
def test_planted_entry_never_runs(cache_dir, planted_library, mac):
    """An entry written in advance under the computable key, with a consistent
    checksum: without the user's secret its seal cannot be made."""
    tvmlite.build(tvmlite.parse(OTHER))  # creates the directory and its secret
    planted, marker = planted_library(None)
    lib, meta_path = _entry(cache_dir, SOURCE)
    lib.write_bytes(planted.read_bytes())
    meta = {
        "format": cache.FORMAT,
        "tvmlite": tvmlite.__version__,
        "key": lib.stem,
        "sha256": hashlib.sha256(lib.read_bytes()).hexdigest(),
        "llvm_ir": "",
    }
    if mac == "forged":
        meta["mac"] = hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()
    meta_path.write_text(json.dumps(meta))
    built = tvmlite.build(tvmlite.parse(SOURCE))
    assert isinstance(built, Executable) and _call(built) == [0, 1, 4, 9]
    assert not marker.exists()


def test_symlinked_entry_is_refused(cache_dir, tmp_path):
    tvmlite.build(tvmlite.parse(SOURCE))
    lib, _ = _entry(cache_dir, SOURCE)
    elsewhere = tmp_path / "elsewhere.so"
    lib.rename(elsewhere)
    lib.symlink_to(elsewhere)
    assert isinstance(tvmlite.build(tvmlite.parse(SOURCE)), Executable)
    assert not lib.is_symlink()  # the rebuild replaced the link with a real entry


def test_entries_of_another_user_are_refused(cache_dir, monkeypatch):
    """st_uid against the effective uid: pretend to be someone else."""
    tvmlite.build(tvmlite.parse(SOURCE))
    root = cache_dir_module.open_root(create=False)
    assert root is not None and root.read(_entry(cache_dir, SOURCE)[0].name) is not None
    me = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: me + 1)
    assert root.read(_entry(cache_dir, SOURCE)[0].name) is None  # the file check
    with pytest.warns(UserWarning, match="belongs to another user"):  # the directory check
        assert isinstance(tvmlite.build(tvmlite.parse(SOURCE)), Executable)


@pytest.mark.parametrize(
    "layout, trusted",
    [
        ("cache 0o777", False),  # the directory itself writable by others
        ("cache 0o750", True),
        ("parent 0o777", False),  # others can rename the directory away
        ("parent 0o1777", True),  # sticky, as /tmp: they cannot
        ("symlink", False),
    ],
)
def test_directory_others_can_write_is_refused(tmp_path, monkeypatch, layout, trusted):
    parent = tmp_path / "shared"
    root = parent / "cache"
    monkeypatch.setenv("TVMLITE_CACHE_DIR", str(root))
    monkeypatch.delenv("TVMLITE_NO_CACHE", raising=False)
    tvmlite.build(tvmlite.parse(SOURCE))  # a valid entry
    what, _, mode = layout.partition(" ")
    if what == "symlink":
        real = tmp_path / "real"
        root.rename(real)
        root.symlink_to(real)
    else:
        (root if what == "cache" else parent).chmod(int(mode, 8))
    if trusted:
        assert "cache" in tvmlite.build(tvmlite.parse(SOURCE)).timings
    else:
        with pytest.warns(UserWarning, match="not using the compile cache"):
            assert isinstance(tvmlite.build(tvmlite.parse(SOURCE)), Executable)


def test_key_covers_the_sources(tmp_path, monkeypatch):
    """Editing any source file of tvmlite changes the key (a digest of them)."""
    package = tmp_path / "fakepkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "rules.py").write_text("A = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cache, "SOURCE_PACKAGES", ("fakepkg",))
    before = cache.source_digest.__wrapped__()
    (package / "sub" / "rules.py").write_text("A = 2\n")
    assert cache.source_digest.__wrapped__() != before
    from tvmlite.lowering.target import Target

    key = cache.cache_key(tvmlite.parse(SOURCE), Target("llvm"), None)
    monkeypatch.setattr(cache, "source_digest", lambda: "an edited checkout")
    assert cache.cache_key(tvmlite.parse(SOURCE), Target("llvm"), None) != key


def test_source_packages_are_the_mapped_folders():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(cache.SOURCE_PACKAGES) == set(config["package-dir"]) - {"tvmlite.frontend"}
