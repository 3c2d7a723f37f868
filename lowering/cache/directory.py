"""The compile cache's directory, and why what is in it can be trusted.

    $TVMLITE_CACHE_DIR, else $XDG_CACHE_HOME/tvmlite, else ~/.cache/tvmlite
    TVMLITE_NO_CACHE=1, build(..., cache=False) or `tvms build --no-cache`: off

Loading a cached library runs its code, so an entry is used only if nobody but
the user could have written it:
- the directory is created owner-only (0700); an existing one must be a real
  directory (not a symbolic link) owned by the user and not writable by group
  or others, and every directory above it must belong to the user or root and
  be writable by nobody else unless sticky (as /tmp is). Otherwise the cache is
  off for the process, with a warning saying why;
- entry files are opened without following symbolic links and must be regular
  files of the user, writable by nobody else;
- each entry's metadata carries an HMAC-SHA256, keyed by a random per-user
  secret kept in the directory (`secret`, 0600), over its key, its library's
  SHA-256 and the rest of its metadata: a library swapped in with a matching
  checksum, or an entry planted under a predictable key, fails it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

SECRET = "secret"
SECRET_BYTES = 32
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def configured_dir() -> Path | None:
    """Where entries live, or None when caching is off."""
    if os.environ.get("TVMLITE_NO_CACHE", "").strip() not in ("", "0"):
        return None
    configured = os.environ.get("TVMLITE_CACHE_DIR", "").strip()
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tvmlite"


class CacheRoot:
    """A checked cache directory and its secret."""

    def __init__(self, path: Path, secret: bytes) -> None:
        self.path = path
        self._secret = secret

    def seal(self, data: bytes) -> str:
        """The HMAC of `data` under this user's secret."""
        return hmac.new(self._secret, data, hashlib.sha256).hexdigest()

    def verify(self, data: bytes, mac: object) -> bool:
        return isinstance(mac, str) and hmac.compare_digest(self.seal(data), mac)

    def read(self, name: str) -> bytes | None:
        """The bytes of the entry file `name`, or None when it is absent or could
        have been written by someone else."""
        with open_private(self.path / name, OTHERS_WRITE) as f:
            return None if f is None else f.read()

    def digest(self, name: str) -> str | None:
        """The SHA-256 of the entry file `name` (read in pieces: a library holding
        a model's weights is never in memory whole), or None as for `read`."""
        with open_private(self.path / name, OTHERS_WRITE) as f:
            return None if f is None else hashlib.file_digest(f, "sha256").hexdigest()


def open_root(create: bool) -> CacheRoot | None:
    """The cache directory, checked (created with its secret when `create`), or
    None when caching is off, the directory is absent, or it cannot be trusted."""
    path = configured_dir()
    if path is None:
        return None
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return None  # read-only or full: build without the cache
    elif not os.path.lexists(path):
        return None
    refusal = untrusted(path)
    secret = None if refusal is not None else _secret(path, create)
    if secret is None and refusal is None and os.path.lexists(path / SECRET):
        refusal = f"{path / SECRET} is not a private file of this user"
    if refusal is not None:
        # Once per directory and reason (the warnings registry dedups the text).
        warnings.warn(f"tvmlite: not using the compile cache {path}: {refusal}", stacklevel=1)
    return None if secret is None else CacheRoot(path, secret)


def untrusted(path: Path) -> str | None:
    """Why entries in the directory `path` could come from someone else, or None."""
    uid = os.geteuid()
    try:
        st = os.lstat(path)
    except OSError as err:
        return f"cannot inspect it ({err.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != uid:
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & OTHERS_WRITE:
        return "other users can write to it (chmod 700 it)"
    parent = Path(os.path.realpath(path.parent))
    for folder in (parent, *parent.parents):
        try:
            st = os.stat(folder)
        except OSError as err:
            return f"cannot inspect {folder} ({err.strerror})"
        if st.st_uid not in (0, uid):
            return f"{folder} belongs to another user (uid {st.st_uid})"
        if st.st_mode & OTHERS_WRITE and not st.st_mode & stat.S_ISVTX:
            return f"other users can write to {folder}, so they can replace the cache"
    return None


def read_private(path: Path, forbidden: int) -> bytes | None:
    """The bytes of `path` if it is a regular file (not a symbolic link) of this
    user with none of the `forbidden` permission bits; else None."""
    with open_private(path, forbidden) as f:
        return None if f is None else f.read()


@contextlib.contextmanager
def open_private(path: Path, forbidden: int) -> Iterator[BinaryIO | None]:
    """`path` open for reading if it is a file `read_private` would read, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        yield None  # absent, or a symbolic link (ELOOP)
        return
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        trusted = (
            stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & forbidden
        )
        yield f if trusted else None


def _secret(root: Path, create: bool) -> bytes | None:
    """The user's secret; made on first use. Two processes making it at once
    both link their candidate to the same name: the first link wins, the other
    process reads it."""
    path = root / SECRET
    if create and not os.path.lexists(path):
        fd, temp = tempfile.mkstemp(prefix=".secret.", dir=root)  # 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(SECRET_BYTES))
            os.link(temp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(temp)
    found = read_private(path, stat.S_IRWXG | stat.S_IRWXO)
    return found if found is not None and len(found) == SECRET_BYTES else None
