"""The compile cache's size cap: least recently used entries go first, the
entry just stored stays, only cache files are touched, and `clear` refuses a
directory the cache would not trust (lowering/cache/size.py)."""

from __future__ import annotations

import os
import time

import pytest

import tvmlite
from tvmlite.lowering.cache import size as cache_size
from tvmlite.lowering.cache.size import clear_cache, entries, evict, parse_size


def _entry(root, key: str, size: int, used: float) -> None:
    (root / f"{key}.so").write_bytes(b"\0" * size)
    (root / f"{key}.json").write_bytes(b"{}")
    os.utime(root / f"{key}.json", (used, used))


def test_least_recently_used_entries_go_first(tmp_path) -> None:
    now = time.time()
    keys = [f"{k:040x}" for k in range(4)]
    for age, key in zip((400, 100, 300, 200), keys, strict=True):
        _entry(tmp_path, key, 1000, now - age)
    (tmp_path / "secret").write_bytes(b"s" * 32)
    (tmp_path / "notes.txt").write_text("mine")
    assert [e.key for e in entries(tmp_path)] == [keys[0], keys[2], keys[3], keys[1]]
    evict(tmp_path, keep=keys[0], cap=2100)  # two entries fit; the oldest is the one kept
    assert sorted(e.key for e in entries(tmp_path)) == [keys[0], keys[1]]
    assert (tmp_path / "secret").exists() and (tmp_path / "notes.txt").exists()


def test_stale_temporary_files_are_removed(tmp_path) -> None:
    old, fresh = tmp_path / f".{'a' * 40}.x1.so", tmp_path / f".{'b' * 40}.json.x2"
    old.write_bytes(b"1")
    fresh.write_bytes(b"2")
    (tmp_path / ".secret.x3").write_bytes(b"3")
    past = time.time() - cache_size.STALE_TEMP_SECONDS - 10
    os.utime(old, (past, past))
    os.utime(tmp_path / ".secret.x3", (past, past))
    evict(tmp_path, keep="", cap=1 << 30)
    assert not old.exists() and fresh.exists() and (tmp_path / ".secret.x3").exists()


@pytest.mark.parametrize(
    ("text", "size"), [("500M", 500 << 20), ("2G", 2 << 30), ("1.5k", 1536), ("4096", 4096)]
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_bad_size_warns_and_keeps_the_default(monkeypatch) -> None:
    monkeypatch.setenv("TVMLITE_CACHE_SIZE", "lots")
    with pytest.warns(UserWarning, match="TVMLITE_CACHE_SIZE='lots' is not a size"):
        assert cache_size.size_cap() == cache_size.DEFAULT_CAP


def test_clear_refuses_a_directory_it_would_not_use(tmp_path, monkeypatch) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    _entry(real, "c" * 40, 10, time.time())
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("TVMLITE_CACHE_DIR", str(tmp_path / "link"))
    monkeypatch.delenv("TVMLITE_NO_CACHE", raising=False)
    with pytest.raises(tvmlite.TVMLiteError, match="not clearing .*symbolic link"):
        clear_cache()
    assert (real / f"{'c' * 40}.so").exists()
