"""Incremental lowering: a cached build schedules and lowers only the prim
functions the compile cache does not already hold lowered
(`lowering/cache/functions.py`), so a model rebuilt after an edit of one
operator re-schedules and re-lowers the kernels that changed, not the model.

`lower` (lowering/build.py) runs it around the schedule point and LowerTIR:

    module = cached.restore(module)                    # known functions: cached forms
    module = schedule(target, cached.seen)(module)     # schedules the others
    module = cached.lower(module, LowerTIR())          # lowers the others
    ...                                                # code generation
    cached.commit()                                    # success: store the new ones

An entry holds what the schedule point and LowerTIR make of a function: its
lowered form, and its scheduled form when FoldConstantPacks may take a weight
copy out of it for a constant weight (the copy is gone from the lowered form).
`restore` puts in each known function's place its lowered form, already marked
scheduled when a schedule applied (the schedule point leaves it alone), or its
scheduled form when the entry keeps one. `lower` takes every function still
holding a form `restore` put, by identity, for its lowered form; a function the
schedule point made (FoldConstantPacks' variant of a kernel without its copy)
is looked up by its own key; LowerTIR runs on a module of the rest alone. A
function whose every call FoldConstantPacks gave a variant is stored
scheduled only (it is not lowered). New entries are stored once the whole build
has succeeded, so a function whose code generation fails is never cached
without the spans its error points at.
"""

from __future__ import annotations

from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.cache.functions import CachedFunction, FunctionCache
from tvmlite.lowering.passes.fold_constant_packs import has_foldable_copies
from tvmlite.lowering.transform import Pass


class CachedLowering:
    """One build's use of the lowered-function cache: what it found, what it
    will store. `counts` says how many prim functions the build had at the
    schedule point, how many of them it found in the cache, and how many
    functions it lowered itself."""

    def __init__(self, cache: FunctionCache) -> None:
        self.cache = cache
        # id of a form `restore` put -> (that form, its lowered form if the entry
        # has it, the entry's key)
        self._known: dict[int, tuple[tir.PrimFunc, tir.PrimFunc | None, str]] = {}
        # id of each lowered function `lower` returned -> (it, its entry's key)
        self._lowered: dict[int, tuple[tir.PrimFunc, str]] = {}
        self._keys: dict[str, str] = {}  # name -> key, of functions not found lowered
        self._scheduled: dict[str, tir.PrimFunc] = {}  # their scheduled forms, by name
        self._pending: list[tuple[str, CachedFunction]] = []
        self.counts = {"functions": 0, "cached": 0, "lowered": 0}

    def restore(self, mod: IRModule) -> IRModule:
        """`mod` with every prim function the cache holds replaced by its cached
        form (above)."""
        functions = dict(mod.functions)
        for name, func in mod.functions.items():
            if not isinstance(func, tir.PrimFunc):
                continue
            key = self.cache.key(func)
            found = self.cache.load(key)
            self.counts["functions"] += 1
            if found is None or found.lowered is None:
                self._keys[name] = key
            if found is None:
                continue
            form = found.lowered if found.scheduled is None else found.scheduled
            self._known[id(form)] = (form, found.lowered, key)
            functions[name] = form
            self.counts["cached"] += 1
        return mod.with_functions(functions)

    def seen(self, mod: IRModule) -> None:
        """Keep the scheduled forms of the functions to store (the schedule
        point shows them before FoldConstantPacks)."""
        for name in self._keys:
            func = mod.functions.get(name)
            if isinstance(func, tir.PrimFunc):
                self._scheduled[name] = func

    def lower(self, mod: IRModule, lower_tir: Pass) -> IRModule:
        """`mod` (past the schedule point) with every prim function lowered: the
        known ones from the cache, the rest by `lower_tir`."""
        known: dict[str, tir.PrimFunc] = {}
        rest: dict[str, tir.PrimFunc] = {}
        keys: dict[str, str] = {}  # name in `rest` -> the key to store its forms under
        for name, func in mod.functions.items():
            if not isinstance(func, tir.PrimFunc):
                continue
            hit = self._known.get(id(func))
            if hit is not None and hit[0] is func and hit[1] is not None:
                known[name] = hit[1]
                self._lowered[id(hit[1])] = (hit[1], hit[2])
                continue
            if name in self._keys and self._scheduled.get(name) is func:
                keys[name] = self._keys[name]
            elif hit is None:  # made by the schedule point: a variant
                keys[name] = self.cache.key(func)
                found = self.cache.load(keys[name])
                if found is not None and found.lowered is not None:
                    known[name] = found.lowered
                    self._lowered[id(found.lowered)] = (found.lowered, keys[name])
                    continue
            else:
                keys[name] = hit[2]
            rest[name] = func
        lowered = dict(lower_tir(mod.replace(functions=rest)).functions) if rest else {}
        self.counts["lowered"] = len(lowered)
        for name, key in keys.items():
            if name in lowered:
                keep = rest[name] if has_foldable_copies(rest[name]) else None
                self._pending.append((key, CachedFunction(keep, lowered[name])))
                self._lowered[id(lowered[name])] = (lowered[name], key)
        for name, scheduled in self._scheduled.items():
            if name not in mod.functions:  # every call folded: kept scheduled only
                self._pending.append((self._keys[name], CachedFunction(scheduled, None)))
        functions = dict(mod.functions)
        functions.update(known)
        functions.update(lowered)
        return mod.with_functions(functions)

    def content_keys(self, mod: IRModule) -> dict[str, str]:
        """The key of each prim function of `mod` that `lower` returned as it is:
        equal keys, equal functions (names included), so the kernel units of
        lowered functions can be found by key (`kernel_build.compile_kernels`)."""
        keys = {}
        for name, func in mod.functions.items():
            found = self._lowered.get(id(func))
            if found is not None and found[0] is func:
                keys[name] = found[1]
        return keys

    def commit(self) -> None:
        """Store the functions this build lowered (call once it has succeeded)."""
        for key, cached in self._pending:
            self.cache.save(key, cached)
        self._pending = []
