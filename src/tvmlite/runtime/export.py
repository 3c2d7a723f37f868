"""`Executable.export_library(path)`: one self-contained shared library and its
C header.

The library is the build's object code (kernels and host entries: the object
its JIT loaded), the support helpers' object, and a few lines of C glue
(binding packed functions by name), linked by the system C compiler. It needs libc and
libm at run time, nothing else: no Python, no LLVM, no tvmlite. The header
(`path` with the suffix `.h`) declares the DLPack structs, the status codes,
the packed-function table and every entry (docs/abi.md).

Files appear atomically (written next to the target, then `os.replace`d), so a
concurrent reader sees the old library or the new one, never half of one.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime.c_header import GLUE_SOURCE, HEADER_MARK, render_header


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
        "no C compiler found to link the shared library: install cc (gcc or clang) or set $CC"
    )


def _run(cmd: list[str], what: str) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as err:
        raise TVMLiteError(f"cannot run the C compiler {cmd[0]!r}: {err}") from None
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise TVMLiteError(f"{what} with {cmd[0]} failed: " + " / ".join(detail))


@functools.cache
def _glue_object(compiler: tuple[str, ...]) -> bytes:
    """The C glue compiled once per process (and compiler)."""
    with tempfile.TemporaryDirectory(prefix="tvmlite-glue-") as tmp:
        source, obj = Path(tmp) / "glue.c", Path(tmp) / "glue.o"
        source.write_text(GLUE_SOURCE)
        _run([*compiler, "-c", "-fPIC", "-O2", "-o", str(obj), str(source)], "compiling the glue")
        return obj.read_bytes()


def link_shared(objects: list[bytes], out: Path) -> None:
    """Link `objects` and the C glue into the shared library `out` (atomically)."""
    compiler = tuple(find_compiler())
    glue = _glue_object(compiler)
    with tempfile.TemporaryDirectory(prefix="tvmlite-link-") as tmp:
        paths = []
        for k, data in enumerate([*objects, glue]):
            paths.append(Path(tmp) / f"part{k}.o")
            paths[-1].write_bytes(data)
        built = Path(tmp) / "module.so"
        cmd = [*compiler, "-shared", "-o", str(built), *map(str, paths), "-lm"]
        _run(cmd, f"linking {out.name}")
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


def link_library(code: bytes, out: Path, machine: Any = None) -> None:
    """Link a build's object code and the support helpers into `out` (no header).
    `machine` is the build's MachineOptions (None: the host's)."""
    from tvmlite.lowering.codegen.objects import support_object
    from tvmlite.lowering.codegen.target import HOST

    link_shared([code, support_object(machine or HOST)], out)


def export_library(
    code: bytes, manifest: dict[str, Any], path: str | os.PathLike, machine: Any = None
) -> Path:
    """Write the library `path` of a build's object `code` and its header; returns
    the library's path. `machine` is the build's MachineOptions (None: the
    host's). A header of the same name that tvmlite did not write is never
    overwritten."""
    out = Path(path)
    if out.suffix in ("", ".h"):
        raise TVMLiteError(f"{out}: give the library a suffix such as .so")
    _check_header_is_ours(header_path(out))
    link_library(code, out, machine)
    write_atomic(header_path(out), render_header(manifest, out.name, guard_of(out)))
    return out


def _check_header_is_ours(header: Path) -> None:
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
