"""Linking an exported library: the build's optimized code (kernels, host
entries, fast-call wrappers, support helpers) as objects emitted by llvmlite,
plus a few lines of C glue (binding packed functions by name), linked by the
system C compiler into one self-contained shared library. It needs libc and
libm at run time, nothing else: no Python, no LLVM, no tvmlite.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.codegen.objects import emit_objects
from tvmlite.lowering.codegen.target import MachineOptions
from tvmlite.lowering.transform import stage
from tvmlite.runtime.export import write_atomic

GLUE_SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>
extern const int32_t tvmlite_packed_count;
extern const char* const tvmlite_packed_names[];
extern void* tvmlite_packed_funcs[];

int32_t tvmlite_bind_packed(const char* name, void* fn) {
  int32_t found = -1;
  for (int32_t i = 0; i < tvmlite_packed_count; ++i) {
    if (strcmp(tvmlite_packed_names[i], name) == 0) { tvmlite_packed_funcs[i] = fn; found = 0; }
  }
  return found;
}

const char* tvmlite_missing_packed(void) {
  for (int32_t i = 0; i < tvmlite_packed_count; ++i) {
    if (tvmlite_packed_funcs[i] == NULL) return tvmlite_packed_names[i];
  }
  return NULL;
}
"""


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
        # -pthread: the thread pool's pthread calls (in libc itself since glibc 2.34).
        cmd = [*compiler, "-shared", "-pthread", "-o", str(built), *map(str, paths), "-lm"]
        _run(cmd, f"linking {out.name}")
        write_atomic(out, built.read_bytes())


def link_library(optimized_ir: str, out: Path, machine: MachineOptions) -> None:
    """Emit the objects of a build for `machine` and link them into `out`."""
    with stage("object code"):
        objects = emit_objects(optimized_ir, machine)
    with stage("link (C compiler)"):
        link_shared(objects, out)
