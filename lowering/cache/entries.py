"""The on-disk compile cache: a build of the same module, for the same target,
with the same options, pipeline and tvmlite sources, loads the library a
previous build exported instead of compiling again. Where entries live and why
they can be trusted (owner-only directory, HMAC-sealed metadata):
`directory.py` and `sealed.py`.

An entry is `<key>.so` (the exported library, manifest inside) and `<key>.json`
(format, tvmlite version, key, SHA-256 of the library, the optimized LLVM IR,
the digest of each constant it keeps apart, and the HMAC of all of it). The
library keeps the module's constants apart (codegen/constant_data.py): the key
covers their digests, so a hit binds the module's own arrays to the library,
and a model's weights are neither copied into the entry nor read again from it.
Constants the build made itself (a folded weight) are in the library. Each
file is written to a temporary name and renamed, the library first, so a
reader sees whole files only; an entry whose metadata does not match (another
format or version, a checksum or seal that differs: a torn, swapped or planted
entry) is rebuilt, never loaded. Two
processes building the same module both write the same entry; the later
rename wins.

The directory is kept under a size cap ($TVMLITE_CACHE_SIZE, default 1 GiB) by
removing the least recently used entries after each store (`size.py`).

The key covers the module, its names, the target and machine, the pipeline and
PassContext, and a digest of the installed tvmlite's own sources, so an edited
checkout never reuses native code an older compiler made. Builds that cannot
be described by a key are not cached: a pipeline given as a Python callable, a
PassContext with instruments (`--time-passes` wants the passes to run),
modules with public prim functions (a library exports graph functions only).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
import time
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_functor import ExprVisitor
from tvmlite.lowering.cache.directory import open_root
from tvmlite.lowering.cache.sealed import FORMAT, read_metadata, write_metadata
from tvmlite.lowering.cache.size import evict, mark_used
from tvmlite.lowering.codegen.constant_data import readable_array
from tvmlite.lowering.codegen.link import OptimizedIR
from tvmlite.lowering.codegen.llvm_host_support import use_block_cache
from tvmlite.runtime.abi import PREFIX
from tvmlite.runtime.executable import Executable
from tvmlite.runtime.loader import open_library

# The import packages pyproject maps to their own folders (package-dir): together
# they hold every source file a build runs (tests/unit/test_packaging.py checks).
# The importer (tvmlite.frontend) is left out: it writes text, and a build reads none
# of it, so editing it is no reason to compile again.
SOURCE_PACKAGES = (
    "tvmlite",
    "tvmlite.grammar",
    "tvmlite.dsl",
    "tvmlite.printer",
    "tvmlite.lowering",
)


def cache_key(
    mod: IRModule, target: Any, pipeline: Any, tir_pipeline: Any = "default"
) -> str | None:
    """The entry name of a build, or None when the build cannot be cached; the
    pipelines as `build` takes them (None: the target's default pipeline)."""
    from tvmlite import __version__
    from tvmlite.dsl.structural import structural_hash
    from tvmlite.lowering.codegen.target import host_triple
    from tvmlite.lowering.pipeline import NOT_GIVEN, relax_pipeline_of, tir_pipeline_of
    from tvmlite.lowering.transform import PassContext

    if any(isinstance(f, tir.PrimFunc) and f.attr("global_symbol") for f in mod.functions.values()):
        return None
    ctx = PassContext.current()
    if ctx.instruments:
        return None
    if any(kind.tir_to_runtime is not None for kind in target.kinds):
        return None  # code a kind's own compiler made lives in this process only
    steps = _describe_pipeline(relax_pipeline_of(pipeline, NOT_GIVEN, target))
    tir_pipeline = tir_pipeline_of(tir_pipeline)
    tir_steps = "default" if tir_pipeline == "default" else _describe_pipeline(tir_pipeline)
    if steps is None or tir_steps is None:
        return None
    names = [
        (name, [p.name for p in f.params] if isinstance(f, relax.Function) else [])
        for name, f in sorted(mod.functions.items())
    ]
    parts = {
        "format": FORMAT,
        "tvmlite": __version__,
        "sources": source_digest(),
        "module": structural_hash(mod),
        "names": names,
        "target": str(target),
        "hooks": [describe_hooks(target)],
        "machine": [host_triple(), str(target.machine_options()), _host_cpu()],
        "pipeline": steps,
        "tir_pipeline": tir_steps,
        "context": [ctx.opt_level, sorted(map(repr, ctx.config.items()))],
        "passes": [sorted(ctx.required_pass), sorted(ctx.disabled_pass)],
    }
    text = json.dumps(parts, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:40]


@functools.cache
def compiler_digest() -> str:
    """What, besides its input, decides the code a build makes: tvmlite's version
    and sources, the host CPU, llvmlite and LLVM."""
    from tvmlite import __version__

    return f"{__version__} {source_digest()} {_host_cpu()}"


def _host_cpu() -> str:
    import llvmlite
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features().flatten()
    return f"{llvm.get_host_cpu_name()} {features} {llvmlite.__version__}"


@functools.cache
def source_digest() -> str:
    """SHA-256 over the path and bytes of every source file of the running
    tvmlite (Python and grammar), once per process."""
    names: dict[Path, str] = {}  # a regular install nests the packages: count each file once
    for package in SOURCE_PACKAGES:
        spec = importlib.util.find_spec(package)
        for root in (spec.submodule_search_locations or []) if spec else []:
            base = Path(root).resolve()
            for path in base.rglob("*"):
                if path.suffix in (".py", ".lark") and "__pycache__" not in path.parts:
                    names.setdefault(path, f"{package}/{path.relative_to(base).as_posix()}")
    digest = hashlib.sha256()
    for path, name in sorted(names.items(), key=lambda item: item[1]):
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _describe_pipeline(pipeline: Any) -> Any:
    """A stable description of `pipeline`, or None when it has none."""
    from tvmlite.lowering import pipeline as pipelines

    if isinstance(pipeline, str):
        make = pipelines.PIPELINES.get(pipeline)
        return ["named", pipeline, _qualname(make)] if make is not None else None
    items = list(pipeline) if isinstance(pipeline, list | tuple) else [pipeline]
    described = [_describe_pass(p) for p in items]
    return None if any(d is None for d in described) else ["passes", described]


def _describe_pass(p: Any) -> Any:
    if not is_dataclass(p) or isinstance(p, type):
        return None
    return [_qualname(type(p)), [[f.name, repr(getattr(p, f.name))] for f in fields(p)]]


def describe_hooks(target: Any) -> list[Any]:
    out = []
    for kind in target.kinds:
        passes = {point: [_qualname(m) for m in makes] for point, makes in kind.passes.items()}
        out.append(
            [kind.name, passes, _qualname(kind.relax_to_tir), _qualname(kind.tir_to_runtime)]
        )
    return out


def _qualname(obj: Any) -> str | None:
    if obj is None:
        return None
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def module_constants(mod: IRModule) -> dict[str, np.ndarray]:
    """The arrays of `mod`'s tensor constants by digest (hex), as codegen reads them
    (C-contiguous, aligned, native byte order)."""
    found = _Constants()
    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            found.visit_expr(func)
    return found.arrays


class _Constants(ExprVisitor):
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def visit_Constant(self, e: relax.Constant) -> None:
        digest = e.digest.hex()
        if digest not in self.arrays:
            self.arrays[digest] = readable_array(e.data)


def lookup(key: str, target: Any, mod: IRModule) -> Executable | None:
    """The cached library of `key` (built for `target` from `mod`), or None if
    absent, invalid or possibly written by someone else. The library's constants
    are `mod`'s own arrays (the key covers their digests)."""
    from tvmlite import __version__

    start = time.perf_counter()
    root = open_root(create=False)
    if root is None:
        return None
    fields = {"tvmlite": str, "llvm_ir": str, "constants": list}
    meta = read_metadata(root, key, None, fields, root.digest(f"{key}.so"))
    if meta is None or meta["tvmlite"] != __version__:
        return None
    arrays = module_constants(mod)
    constants = [None if d is None else arrays.get(d) for d in meta["constants"]]
    if any(d is not None and a is None for d, a in zip(meta["constants"], constants, strict=True)):
        return None
    try:
        listing = OptimizedIR(meta["llvm_ir"], target.machine_options())
        image, manifest = open_library(root.path / f"{key}.so", listing, constants)
    except (TVMLiteError, OSError):
        return None  # e.g. a packed function not registered: build normally, fail there
    executable = Executable(image, manifest, prefix=image.prefix)
    use_block_cache(executable)  # results recycled as a JIT build's are (docs/memory.md)
    mark_used(root.path, key)
    executable.timings = {"cache": (time.perf_counter() - start) * 1e3}
    return executable


def store(key: str, executable: Executable, mod: IRModule) -> None:
    """Export `executable` (built from `mod`) as the entry of `key`: its constants
    that are `mod`'s are kept apart (a hit binds the module's own, `lookup`),
    those the build made are in the library. A cache that cannot be written
    (read-only, full disk, no C compiler) or trusted is skipped."""
    from tvmlite import __version__

    given = module_constants(mod)
    digests = [d.hex() for d in executable.image.constants.digests()]
    apart = [d in given for d in digests]
    kept = [d if a else None for d, a in zip(digests, apart, strict=True)]
    try:
        root = open_root(create=True)
        if root is None:
            return
        fd, name = tempfile.mkstemp(prefix=f".{key}.", suffix=".so", dir=root.path)
        os.close(fd)
        temp = Path(name)
        try:
            executable.image.write_library(temp, executable.manifest, PREFIX, keep_apart=apart)
            # The digest of the bytes renamed below, whoever renames last.
            with open(temp, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            os.replace(temp, root.path / f"{key}.so")
        finally:
            temp.unlink(missing_ok=True)
        fields = {"tvmlite": __version__, "llvm_ir": executable.llvm_ir(), "constants": kept}
        write_metadata(root, key, None, digest, fields)
        evict(root.path, keep=key)
    except (OSError, TVMLiteError):
        return
