"""`Executable.export_library(path)`: one self-contained shared library and its
C header.

The library is the build's optimized code (kernels, host entries, support
helpers) as one object emitted by llvmlite, plus a few lines of C glue (binding
packed functions by name), linked by the system C compiler. It needs libc and
libm at run time, nothing else: no Python, no LLVM, no tvmlite. The header
(`path` with the suffix `.h`) declares the DLPack structs, the status codes,
the packed-function table and every entry (docs/abi.md).

Files appear atomically (written next to the target, then `os.replace`d), so a
concurrent reader sees the old library or the new one, never half of one.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime.c_header import GLUE_SOURCE, render_header


def find_compiler() -> list[str]:
    """The C compiler command: `$CC`, else `cc`, `gcc` or `clang` on the PATH."""
    env = os.environ.get("CC", "").strip()
    if env:
        return shlex.split(env)
    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return [found]
    raise TVMLiteError(
        "no C compiler found to link the shared library: install cc (gcc or clang) "
        "or set $CC"
    )


def link_shared(obj: bytes, out: Path) -> None:
    """Link `obj` and the C glue into the shared library `out` (atomically)."""
    compiler = find_compiler()
    with tempfile.TemporaryDirectory(prefix="tvmlite-link-") as tmp:
        obj_path = Path(tmp) / "module.o"
        obj_path.write_bytes(obj)
        glue = Path(tmp) / "glue.c"
        glue.write_text(GLUE_SOURCE)
        built = Path(tmp) / "module.so"
        cmd = [*compiler, "-shared", "-fPIC", "-O2", "-o", str(built), str(obj_path), str(glue)]
        cmd.append("-lm")
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        except OSError as err:
            raise TVMLiteError(f"cannot run the C compiler {compiler[0]!r}: {err}") from None
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise TVMLiteError(
                f"linking {out.name} with {compiler[0]} failed: " + " / ".join(detail)
            )
        write_atomic(out, built.read_bytes())


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write a temporary file next to `path` and rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, 0o755 if path.suffix == ".so" else 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def header_path(path: Path) -> Path:
    return path.with_suffix(".h")


def export_library(optimized_ir: str, manifest: dict[str, Any], path: str | os.PathLike) -> Path:
    """Emit, link and write `path` and its header; returns the library's path."""
    from tvmlite.lowering.codegen.objects import emit_object

    out = Path(path)
    if out.suffix in ("", ".h"):
        raise TVMLiteError(f"{out}: give the library a suffix such as .so")
    link_shared(emit_object(optimized_ir), out)
    write_atomic(header_path(out), render_header(manifest, out.name, guard_of(out)))
    return out


def guard_of(path: Path) -> str:
    return "TVMLITE_" + re.sub(r"[^A-Za-z0-9]", "_", path.stem).upper() + "_H"
