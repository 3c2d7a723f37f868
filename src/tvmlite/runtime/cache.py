"""The on-disk compile cache: a build of the same module, for the same target,
with the same options, pipeline and tvmlite, loads the library a previous build
exported instead of compiling again.

    $TVMLITE_CACHE_DIR, else $XDG_CACHE_HOME/tvmlite, else ~/.cache/tvmlite
    TVMLITE_NO_CACHE=1, build(..., cache=False) or `tvms build --no-cache`: off

An entry is `<key>.so` (the exported library, manifest inside) and `<key>.json`
(format, tvmlite version, key, SHA-256 of the library, the optimized LLVM IR).
Each file is written to a temporary name and renamed, the library first, so a
reader sees whole files only; an entry whose metadata does not match (another
format or version, a checksum that differs: a torn or foreign entry) is
rebuilt, never loaded. Two processes building the same module both write the
same entry; the later rename wins.

Builds that cannot be described by a key are not cached: a pipeline given as a
Python callable, a PassContext with instruments (`--time-passes` wants the
passes to run), modules with public prim functions (a library exports graph
functions only).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule

FORMAT = 1


def cache_dir() -> Path | None:
    """Where entries live, or None when caching is off."""
    if os.environ.get("TVMLITE_NO_CACHE", "").strip() not in ("", "0"):
        return None
    configured = os.environ.get("TVMLITE_CACHE_DIR", "").strip()
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tvmlite"


def cache_key(mod: IRModule, target: Any, pipeline: Any) -> str | None:
    """The entry name of a build, or None when the build cannot be cached."""
    from tvmlite import __version__
    from tvmlite.dsl.structural import structural_hash
    from tvmlite.lowering.codegen.target import host_triple
    from tvmlite.lowering.transform import PassContext

    if any(isinstance(f, tir.PrimFunc) and f.attr("global_symbol") for f in mod.functions.values()):
        return None
    ctx = PassContext.current()
    if ctx.instruments:
        return None
    steps = _describe_pipeline(pipeline)
    if steps is None:
        return None
    names = [
        (name, [p.name for p in f.params] if isinstance(f, relax.Function) else [])
        for name, f in sorted(mod.functions.items())
    ]
    parts = {
        "format": FORMAT,
        "tvmlite": __version__,
        "module": structural_hash(mod),
        "names": names,
        "target": str(target),
        "hooks": [_describe_hooks(target)],
        "machine": [host_triple(), str(target.machine_options()), _host_cpu()],
        "pipeline": steps,
        "context": [ctx.opt_level, sorted(map(repr, ctx.config.items()))],
        "passes": [sorted(ctx.required_pass), sorted(ctx.disabled_pass)],
    }
    text = json.dumps(parts, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def _host_cpu() -> str:
    import llvmlite
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features().flatten()
    return f"{llvm.get_host_cpu_name()} {features} {llvmlite.__version__}"


def _describe_pipeline(pipeline: Any) -> Any:
    """A stable description of `pipeline`, or None when it has none."""
    from tvmlite.lowering import pipeline as pipelines

    if pipeline is None or isinstance(pipeline, str):
        name = pipeline or "minimal"
        make = pipelines.PIPELINES.get(name)
        return ["named", name, _qualname(make)] if make is not None else None
    items = list(pipeline) if isinstance(pipeline, list | tuple) else [pipeline]
    described = [_describe_pass(p) for p in items]
    return None if any(d is None for d in described) else ["passes", described]


def _describe_pass(p: Any) -> Any:
    if not is_dataclass(p) or isinstance(p, type):
        return None
    return [_qualname(type(p)), [[f.name, repr(getattr(p, f.name))] for f in fields(p)]]


def _describe_hooks(target: Any) -> list[Any]:
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


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lookup(key: str) -> Any:
    """The cached library of `key` (a `Library`), or None if absent or invalid."""
    from tvmlite import __version__
    from tvmlite.runtime.loader import Library

    root = cache_dir()
    if root is None:
        return None
    meta_path, lib_path = root / f"{key}.json", root / f"{key}.so"
    start = time.perf_counter()
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        valid = (
            isinstance(meta, dict)
            and meta.get("format") == FORMAT
            and meta.get("tvmlite") == __version__
            and meta.get("key") == key
            and meta.get("sha256") == _digest(lib_path)
        )
    except (OSError, ValueError):
        return None
    if not valid:
        return None
    try:
        library = Library(lib_path, llvm_ir_text=meta.get("llvm_ir"))
    except TVMLiteError:
        return None  # e.g. a packed function not registered: build normally, fail there
    library.timings = {"cache": (time.perf_counter() - start) * 1e3}
    return library


def store(key: str, executable: Any) -> None:
    """Export `executable` as the entry of `key`; a cache that cannot be written
    (read-only, full disk, no C compiler) is skipped silently."""
    from tvmlite import __version__
    from tvmlite.runtime.export import link_library, write_atomic

    root = cache_dir()
    if root is None:
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{key}.", suffix=".so", dir=root)
        os.close(fd)
        temp = Path(name)
        try:
            link_library(executable.llvm_ir(), temp, executable.jit.machine)
            digest = _digest(temp)  # of the bytes renamed below, whoever renames last
            os.replace(temp, root / f"{key}.so")
        finally:
            temp.unlink(missing_ok=True)
        meta = {
            "format": FORMAT,
            "tvmlite": __version__,
            "key": key,
            "sha256": digest,
            "llvm_ir": executable.llvm_ir(),
        }
        write_atomic(root / f"{key}.json", json.dumps(meta))
    except (OSError, TVMLiteError):
        return


def through_cache(
    mod: IRModule, target: Any, pipeline: Any, enabled: bool, compile: Callable[[], Any]
) -> Any:
    """`compile()`'s result, or the cached library of the same build."""
    key = cache_key(mod, target, pipeline) if enabled and cache_dir() is not None else None
    if key is not None:
        found = lookup(key)
        if found is not None:
            return found
    result = compile()
    if key is not None:
        store(key, result)
    return result
