"""Writing an exported library's files: atomically (written next to the
target, then `os.replace`d, so a concurrent reader sees the old file or the new
one, never half of one), with the header beside the library (`path` with the
suffix `.h`), and never over a header tvmlite did not write. Linking the
library itself is the compiler's (`lowering/codegen/link.py`).

Every symbol a library exports starts with its prefix (`mlp_entry_main`,
`mlp_manifest`; by default the file's name: `mlp_` for `mlp.so` or
`libmlp.so`) and everything else is hidden, so several libraries link into one
program (docs/abi.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime.c_header import HEADER_MARK


def write_atomic(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Write a temporary file next to `path`, flush it to disk and rename it over
    `path`: readers, and `path` after a crash, hold the old bytes or the new ones.
    `mode` gives the permission bits (default 0o755 for a library, else 0o644)."""
    payload = data.encode() if isinstance(data, str) else data
    write_atomic_with(path, lambda f: f.write(payload), mode)


def write_atomic_with(
    path: Path, write: Callable[[BinaryIO], object], mode: int | None = None
) -> None:
    """`write_atomic` for contents that `write` streams into the open file."""
    with atomic_path(path, mode) as tmp, open(tmp, "wb") as f:
        write(f)


@contextlib.contextmanager
def atomic_path(path: Path, mode: int | None = None) -> Iterator[Path]:
    """A temporary name next to `path`, for whoever makes the file by name (a
    linker); once the block ends the file is flushed to disk and renamed over
    `path` (removed instead if the block fails). `mode` as for `write_atomic`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        if mode is None:
            mode = 0o755 if path.suffix == ".so" else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def header_path(path: Path) -> Path:
    return path.with_suffix(".h")


def check_header_is_ours(header: Path) -> None:
    """Refuse to replace a header someone wrote by hand (say, `out.h` next to
    `-o out.so`); one a previous export wrote is rewritten."""
    try:
        with open(header, encoding="utf-8", errors="replace") as f:
            first = f.readline().rstrip("\n")
    except FileNotFoundError:
        return
    except OSError as err:
        raise TVMLiteError(f"{header}: cannot read: {err.strerror or err}") from None
    if not first.endswith(HEADER_MARK):
        raise TVMLiteError(
            f"{header} exists and was not written by tvmlite: the library's header "
            "would replace it; move it or choose another library name"
        )


def guard_of(path: Path) -> str:
    return "TVMLITE_" + re.sub(r"[^A-Za-z0-9]", "_", path.stem).upper() + "_H"


def library_prefix(path: Path) -> str:
    """The default prefix of a library's symbols: its file name without a leading
    `lib` and its suffix (`.so` with any version numbers after it), as a C
    identifier, then `_` (`libmlp-2.so.1`: `mlp_2_`)."""
    stem = re.sub(r"(\.so(\.[0-9]+)*|\.[^.]*)$", "", path.name)
    if stem.startswith("lib") and len(stem) > 3:
        stem = stem[3:]
    stem = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    if not stem or stem[0].isdigit():
        stem = "m" + stem
    return stem + "_"


def check_prefix(prefix: object) -> str:
    if not isinstance(prefix, str) or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", prefix) is None:
        raise TVMLiteError(
            f"export_library: prefix={prefix!r} is not the start of a C identifier "
            "(letters, digits and _, not starting with a digit)"
        )
    return prefix
