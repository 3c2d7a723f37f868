"""Writing an exported library's files: atomically (written next to the
target, then `os.replace`d, so a concurrent reader sees the old file or the new
one, never half of one), with the header beside the library (`path` with the
suffix `.h`), and never over a header tvmlite did not write. Linking the
library itself is the compiler's (`lowering/codegen/link.py`).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime.c_header import HEADER_MARK


def write_atomic(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Write a temporary file next to `path`, flush it to disk and rename it over
    `path`: readers, and `path` after a crash, hold the old bytes or the new ones.
    `mode` gives the permission bits (default 0o755 for a library, else 0o644)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        if mode is None:
            mode = 0o755 if path.suffix == ".so" else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
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
