"""Lowered prim functions in the compile cache: what the schedule point and
LowerTIR made of a prim function, so that a build whose module changed in a few
functions schedules and lowers only those (`lowering/incremental.py` uses it).

An entry is `<key>.tir` (a pickle of the function's lowered form, and of its
scheduled form when that holds a weight copy FoldConstantPacks may take out;
the scheduled form alone when the build folded every call of the function)
and `<key>.json` (its sealed metadata, `sealed.py`: kind "lowered", the
pickle's SHA-256), trusted as a build's entry is (a pickle runs code when it is
loaded, as a cached library does: both are read only from the user's own
directory, only when sealed by the user's secret), evicted by the same size cap.

The key is a digest of the function as it reaches the schedule point, names
included (`structural_key`: the cached forms print and fail alike), and of
everything else that decides its lowering: the compiler (`compiler_digest`),
the target, its hooks and machine, the machine's traits the schedule rules read,
and the PassContext's options (`options_digest`). Spans are not stored (a span
holds its source's whole text): entries are stored once their build has
succeeded (`CachedLowering.commit`), so no error is left for them to locate.
"""

from __future__ import annotations

import copyreg
import hashlib
import io
import json
import pickle
from dataclasses import dataclass
from typing import Any

from tvmlite.diagnostics import Span, TVMLiteError
from tvmlite.dsl import tir
from tvmlite.dsl.structural import structural_key
from tvmlite.lowering.cache.directory import CacheRoot, open_root
from tvmlite.lowering.cache.entries import compiler_digest, describe_hooks
from tvmlite.lowering.cache.sealed import load_data, save_data
from tvmlite.lowering.cache.size import mark_used

KIND = "lowered"
SUFFIX = ".tir"


@dataclass(frozen=True)
class CachedFunction:
    """A prim function as the schedule point left it, when FoldConstantPacks may
    still rewrite it (None otherwise), and as LowerTIR lowered it (None when the
    build that stored it folded every call of it into a variant)."""

    scheduled: tir.PrimFunc | None
    lowered: tir.PrimFunc | None


class FunctionCache:
    """The lowered functions of one cache directory, for the builds of one
    target and context (`options`, from `options_digest`)."""

    def __init__(self, root: CacheRoot, options: str) -> None:
        self.root = root
        self.options = options

    def key(self, func: tir.PrimFunc) -> str:
        digest = hashlib.sha256(f"{KIND}\0{self.options}\0".encode())
        digest.update(structural_key(func).encode())
        return digest.hexdigest()[:40]

    def load(self, key: str) -> CachedFunction | None:
        found = load_data(self.root, key, SUFFIX, KIND, {})
        if found is None:
            return None
        try:
            cached = pickle.loads(found[0])
        except Exception:  # noqa: BLE001 - an entry of another layout: built again
            return None
        if not isinstance(cached, CachedFunction):
            return None
        mark_used(self.root.path, key)
        return cached

    def save(self, key: str, cached: CachedFunction) -> None:
        """Store `cached` under `key`; a cache that cannot be written is skipped."""
        try:
            data = _pickled(cached)
        except (RecursionError, pickle.PicklingError, TypeError):
            return  # IR nested deeper than the pickler goes: lowered again next time
        try:
            save_data(self.root, key, SUFFIX, KIND, data, {})
        except (OSError, TVMLiteError):
            return


def _none() -> None:
    return None


def _drop_span(span: Span) -> tuple[Any, tuple[()]]:
    return _none, ()


def _pickled(value: Any) -> bytes:
    """`value` pickled with every span left out (a span holds its whole source
    text): a span is rebuilt as None."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, Span: _drop_span}
    pickler.dump(value)
    return out.getvalue()


def options_digest(target: Any) -> str:
    """What, besides the function, decides its scheduled and lowered forms (the
    number of build workers does not: their output is the same)."""
    from tvmlite.lowering.codegen.kernel_build import WORKERS_KEY
    from tvmlite.lowering.transform import PassContext

    ctx = PassContext.current()
    config = sorted(repr(item) for item in ctx.config.items() if item[0] != WORKERS_KEY)
    parts = [
        compiler_digest(),
        str(target),
        describe_hooks(target),
        str(target.machine_options()),
        repr(target.traits),
        [ctx.opt_level, config],
        [sorted(ctx.required_pass), sorted(ctx.disabled_pass)],
    ]
    return hashlib.sha256(json.dumps(parts, default=repr).encode()).hexdigest()


def function_cache(target: Any) -> FunctionCache | None:
    """The lowered functions of the configured cache directory for builds for
    `target` in the current context (None: caching off, or a directory that
    cannot be written or trusted)."""
    root = open_root(create=True)
    return None if root is None else FunctionCache(root, options_digest(target))
