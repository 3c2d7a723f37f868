"""Linking an exported library: the build's optimized code (kernels, host
entries, fast-call wrappers, support helpers) as objects emitted by llvmlite,
the bytes of its constants as an object of data (`constant_data.py`), plus a
few lines of C glue (the manifest, binding packed functions by name), linked
by the system C compiler into one self-contained shared library. It
needs libc and libm at run time, nothing else: no Python, no LLVM, no tvmlite.

A build for another triple (`-mtriple=aarch64-linux-gnu`) is linked by that
machine's cross compiler: `<triple>-gcc` on the PATH (Debian's
`gcc-aarch64-linux-gnu` installs `aarch64-linux-gnu-gcc`).

The symbols a library exports (entries, tables, manifest, the C API) carry its
prefix and every other symbol is hidden (`objects.py`), so two libraries linked
into one program, or loaded into one process, never bind each other's code.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.codegen.constant_data import ConstantData
from tvmlite.lowering.codegen.objects import emit_assembly, library_objects
from tvmlite.lowering.codegen.target import HOST, MachineOptions, runs_here, triple_of
from tvmlite.lowering.transform import stage
from tvmlite.runtime.abi import exported_symbols
from tvmlite.runtime.export import atomic_path

# The C glue: the manifest as data and binding packed functions by name (`${p}`
# is the library's prefix).
GLUE_SOURCE = Template(r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>
extern const int32_t ${p}packed_count;
extern const char* const ${p}packed_names[];
extern void* ${p}packed_funcs[];

const char ${p}manifest[] = {${manifest}};

int32_t ${p}bind_packed(const char* name, void* fn) {
  int32_t found = -1;
  for (int32_t i = 0; i < ${p}packed_count; ++i) {
    if (strcmp(${p}packed_names[i], name) == 0) { ${p}packed_funcs[i] = fn; found = 0; }
  }
  return found;
}

const char* ${p}missing_packed(void) {
  for (int32_t i = 0; i < ${p}packed_count; ++i) {
    if (${p}packed_funcs[i] == NULL) return ${p}packed_names[i];
  }
  return NULL;
}
""")


def find_compiler(machine: MachineOptions = HOST) -> list[str]:
    """The C compiler command for `machine`: `$CC`, else `cc`, `gcc` or `clang`
    on the PATH; for another triple, `<triple>-gcc` (with and without the vendor:
    `aarch64-linux-gnu-gcc` for `aarch64-unknown-linux-gnu`; `$CC` is the host's)."""
    env = os.environ.get("CC", "").strip()
    if env and runs_here(machine):
        return shlex.split(env)
    if runs_here(machine):
        names = ["cc", "gcc", "clang"]
    else:
        triple = triple_of(machine)
        parts = triple.split("-")
        bare = "-".join(p for k, p in enumerate(parts) if not (k == 1 and p in ("unknown", "pc")))
        names = list(dict.fromkeys(f"{t}-{cc}" for t in (triple, bare) for cc in ("gcc", "cc")))
    for name in names:
        found = shutil.which(name)
        if found:
            return [found]
    if not runs_here(machine):
        raise TVMLiteError(
            f"no C compiler for {triple_of(machine)} found to link the shared library "
            f"(looked for {', '.join(names)} on the PATH): install one (Debian: "
            f"gcc-{names[-1].rsplit('-', 1)[0]})"
        )
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


def glue_source(manifest: dict[str, Any], prefix: str) -> str:
    """The glue of a library with `manifest` (NUL-terminated JSON, as bytes)."""
    data = json.dumps(manifest).encode() + b"\0"
    return GLUE_SOURCE.substitute(p=prefix, manifest=",".join(map(str, data)))


def link_shared(
    objects: list[bytes],
    glue: str,
    out: Path,
    constants: ConstantData | None = None,
    embed: Sequence[bool] = (),
    machine: MachineOptions = HOST,
) -> None:
    """Link `objects`, the C source `glue` and the object of `constants` (the
    bytes of those `embed` marks) into the shared library `out` for `machine`
    (atomically: linked beside it, then renamed)."""
    compiler = find_compiler(machine)
    with tempfile.TemporaryDirectory(prefix="tvmlite-link-") as tmp:
        paths = []
        for k, data in enumerate(objects):
            paths.append(Path(tmp) / f"part{k}.o")
            paths[-1].write_bytes(data)
        if constants is not None and constants.arrays:
            paths.append(Path(tmp) / "constants.o")
            constants.write_object(paths[-1], triple_of(machine), embed)
        source = Path(tmp) / "glue.c"
        source.write_text(glue)
        # -pthread: the thread pool's pthread calls (in libc itself since glibc 2.34).
        flags = ["-shared", "-fPIC", "-O2", "-pthread"]
        with atomic_path(out) as built:
            cmd = [*compiler, *flags, "-o", str(built), str(source), *map(str, paths), "-lm"]
            _run(cmd, f"linking {out.name}")


def link_object(
    code: bytes, constants: Sequence[np.ndarray], out: Path, machine: MachineOptions = HOST
) -> None:
    """The relocatable object `out`: the build's code (`code`, an object for
    `machine`) with the bytes of its constants (`ld -r` of the two)."""
    compiler = find_compiler(machine)
    with tempfile.TemporaryDirectory(prefix="tvmlite-link-") as tmp:
        paths = [Path(tmp) / "code.o", Path(tmp) / "constants.o"]
        paths[0].write_bytes(code)
        ConstantData(arrays=tuple(constants)).write_object(
            paths[1], triple_of(machine), [True] * len(constants)
        )
        with atomic_path(out, mode=0o644) as built:
            cmd = [*compiler, "-r", "-nostdlib", "-o", str(built), *map(str, paths)]
            _run(cmd, f"linking {out.name}")


def link_library(
    optimized_ir: str,
    out: Path,
    machine: MachineOptions,
    manifest: dict[str, Any],
    prefix: str,
    constants: ConstantData,
    keep_apart: Sequence[bool] = (),
    kernel_objects: Sequence[bytes] = (),
) -> None:
    """Emit the objects of a build for `machine` (`optimized_ir`, and
    `kernel_objects`, compiled already) and link them into `out`, a library
    with `manifest` whose exported symbols start with `prefix`, holding the
    bytes of `constants` but those `keep_apart` marks (the compile cache's
    libraries), which are bound to arrays when it is loaded (`constant_data.py`)."""
    exports = exported_symbols(manifest["functions"], prefix)
    embed = [not (k < len(keep_apart) and keep_apart[k]) for k in range(len(constants.arrays))]
    records = manifest.get("constants", [])
    if len(records) != len(embed):
        raise TVMLiteError(f"the manifest lists {len(records)} constants, the code {len(embed)}")
    records = [{**r, "embedded": e} for r, e in zip(records, embed, strict=True)]
    manifest = {**manifest, "constants": records}
    with stage("object code"):
        objects = [*library_objects(optimized_ir, machine, exports), *kernel_objects]
    with stage("link (C compiler)"):
        link_shared(objects, glue_source(manifest, prefix), out, constants, embed, machine)


class OptimizedIR:
    """The text of a library's optimized LLVM IR, kept by the compile cache: the
    `llvm_ir()` and `assembly()` a loaded library offers (runtime/loader.py), and
    what it is linked from again for another prefix (with the arrays of its
    constants, which the loaded library holds)."""

    def __init__(self, text: str, machine: MachineOptions = HOST) -> None:
        self.text = text
        self.machine = machine

    def llvm_ir(self) -> str:
        return self.text

    def assembly(self) -> str:
        return emit_assembly(self.text, self.machine)

    def write_library(
        self,
        path: Path,
        manifest: dict[str, Any],
        prefix: str,
        constants: Sequence[np.ndarray] = (),
        keep_apart: Sequence[bool] = (),
    ) -> None:
        data = ConstantData(arrays=tuple(constants))
        link_library(self.text, path, self.machine, manifest, prefix, data, keep_apart)
