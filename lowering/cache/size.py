"""The compile cache's size: a cap enforced after every store by removing the
least recently used entries, and what `tvms cache info` and `tvms cache clear`
report and do.

    TVMLITE_CACHE_SIZE=500M    (bytes, or with K, M, G: powers of 1024; default 1G)

"Recently used" is the modification time of an entry's metadata file: a store
writes it and a hit sets it to now. Access times would say the same without a
write, but most file systems are mounted `relatime` or `noatime` and do not keep
them. Only files named like entries (`<40 hex>.so`, `.o` or `.tir`, `<40 hex>.json`) and
temporary files a crashed process left behind (`.<name>.*`, an hour old) are
ever removed, and only from a directory `directory.untrusted` accepts; the
secret stays, so later entries keep verifying.
"""

from __future__ import annotations

import os
import re
import stat
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.cache.directory import configured_dir, untrusted

SIZE_ENV = "TVMLITE_CACHE_SIZE"
DEFAULT_CAP = 1 << 30
STALE_TEMP_SECONDS = 3600
_ENTRY = re.compile(r"([0-9a-f]{40})\.(so|o|tir|json)")
_TEMP = re.compile(r"\.[0-9a-f]{40}\..+")  # mkstemp names of cache.store and write_atomic
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass
class Entry:
    key: str
    files: list[Path] = field(default_factory=list)
    size: int = 0
    used: float = 0.0  # mtime of the metadata file

    @property
    def kernel(self) -> bool:
        """A compiled kernel's entry (`kernels.py`), not a build's."""
        return any(f.suffix == ".o" for f in self.files)

    @property
    def lowered(self) -> bool:
        """A lowered function's entry (`functions.py`), not a build's."""
        return any(f.suffix == ".tir" for f in self.files)


def size_cap() -> int:
    """The cap in bytes: $TVMLITE_CACHE_SIZE, else DEFAULT_CAP."""
    return size_from_env(SIZE_ENV, DEFAULT_CAP)


def size_from_env(name: str, default: int) -> int:
    """The size in environment variable `name`, else `default` (a bad value warns
    and keeps the default: a typo must not break builds)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return parse_size(text, name)
    except TVMLiteError as err:
        warnings.warn(f"tvmlite: {err}; using {format_size(default)}", stacklevel=2)
        return default


def parse_size(text: str, name: str = SIZE_ENV) -> int:
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", text.strip(), re.IGNORECASE)
    if found is None:
        raise TVMLiteError(f"{name}={text!r} is not a size such as 500M or 2G")
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


def format_size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def entries(path: Path) -> list[Entry]:
    """The entries in the cache directory `path`, least recently used first."""
    found: dict[str, Entry] = {}
    try:
        listing = list(os.scandir(path))
    except OSError:
        return []
    for item in listing:
        match = _ENTRY.fullmatch(item.name)
        if match is None:
            continue
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        entry = found.setdefault(match.group(1), Entry(match.group(1)))
        entry.files.append(Path(item.path))
        entry.size += st.st_size
        if match.group(2) == "json":
            entry.used = st.st_mtime
    return sorted(found.values(), key=lambda e: (e.used, e.key))


def mark_used(path: Path, key: str) -> None:
    """Record a hit: the entry becomes the most recently used."""
    try:
        os.utime(path / f"{key}.json", follow_symlinks=False)
    except OSError:
        pass  # read-only cache: eviction order is only a heuristic


def evict(path: Path, keep: str, cap: int | None = None) -> None:
    """Remove least recently used entries (never `keep`, the one just stored)
    until the directory holds at most `cap` bytes; and stale temporary files."""
    cap = size_cap() if cap is None else cap
    _remove_stale_temps(path)
    listed = entries(path)
    total = sum(e.size for e in listed)
    for entry in listed:
        if total <= cap:
            break
        if entry.key != keep:
            _remove(entry)
            total -= entry.size


def _remove(entry: Entry) -> None:
    # The metadata first: a reader that finds the library without it rebuilds.
    for file in sorted(entry.files, key=lambda p: p.suffix != ".json"):
        try:
            os.unlink(file)  # a symbolic link is removed, never followed
        except FileNotFoundError:
            pass


def _remove_stale_temps(path: Path) -> None:
    cutoff = time.time() - STALE_TEMP_SECONDS
    try:
        listing = list(os.scandir(path))
    except OSError:
        return
    for item in listing:
        if not _TEMP.fullmatch(item.name):
            continue  # not one of ours
        try:
            st = item.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                os.unlink(item.path)
        except OSError:
            continue


@dataclass
class CacheInfo:
    """What `tvms cache info` prints."""

    path: Path | None  # None: caching is off
    refusal: str | None = None  # why the directory is not used
    entries: int = 0  # builds
    kernels: int = 0  # compiled kernels (counted in `size` too)
    functions: int = 0  # lowered functions (likewise)
    size: int = 0
    cap: int = DEFAULT_CAP


def cache_info() -> CacheInfo:
    path = configured_dir()
    if path is None:
        return CacheInfo(None)
    info = CacheInfo(path, cap=size_cap())
    if not os.path.lexists(path):
        return info
    info.refusal = untrusted(path)
    if info.refusal is None:
        listed = entries(path)
        info.kernels = sum(e.kernel for e in listed)
        info.functions = sum(e.lowered for e in listed)
        info.entries = len(listed) - info.kernels - info.functions
        info.size = sum(e.size for e in listed)
    return info


def clear_cache() -> CacheInfo:
    """Remove every entry; returns what was there. The directory must be one the
    cache would use (not another user's, not a symbolic link)."""
    info = cache_info()
    if info.path is None or not os.path.lexists(info.path):
        return info
    if info.refusal is not None:
        raise TVMLiteError(f"not clearing {info.path}: {info.refusal}")
    for entry in entries(info.path):
        _remove(entry)
    return info
