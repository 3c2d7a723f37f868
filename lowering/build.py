"""`build(mod, target="llvm", pipeline=None, cache=True, checked=False) -> Executable`.

The steps (docs/extending.md): accept a module or a lone function; run the
target's "before_legalize" passes, the pipeline ("minimal" by default: only
LegalizeOps; or a registered name, a pass, a list of passes), LegalizeOps on
whatever is left (a no-op after a legalizing pipeline; off when the PassContext
config `relax.transform.apply_legalize_ops` is False), the "after_legalize"
passes, each kind's `relax_to_tir` hook, the "before_codegen" passes, each
kind's `tir_to_runtime` hook; then compile every remaining prim function to a
kernel and every graph function to native host code in one LLVM module, for
the target's machine (see `runtime/executable.py`). `checked=True` builds under
the PassContext config `tir.instrument_bound_checkers`, so the TIR lowering
instruments every buffer access (`tir/instrument_bound_checkers.py`); the config
is part of the compile-cache key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering import pipeline as pipelines
from tvmlite.lowering import target as targets
from tvmlite.lowering.passes.default_cpu_schedule import DefaultCPUSchedule
from tvmlite.lowering.target import Target
from tvmlite.lowering.tir.instrument_bound_checkers import CHECKED_KEY
from tvmlite.lowering.transform import Pass, PassContext, Sequential

LEGALIZE_KEY = pipelines.LEGALIZE_KEY


def build(
    mod: Any, target: Any = "llvm", pipeline: Any = None, cache: bool = True, checked: bool = False
) -> Any:
    """Compile `mod` (an IRModule, a PrimFunc or a Relax function) for `target`
    (a `Target` or its text, "llvm -mcpu=... -libs=blas"); an identical earlier
    build is loaded from the compile cache (runtime/cache.py) unless `cache=False`.
    `checked=True` (or the PassContext config `tir.instrument_bound_checkers`)
    makes every out-of-bounds buffer access raise TVMLiteError."""
    from tvmlite.runtime.cache import through_cache

    if not isinstance(checked, bool):
        raise TVMLiteError(f"build(): 'checked' must be True or False, got {checked!r}")
    ctx = PassContext.current()
    if checked and ctx.get(CHECKED_KEY) is not True:
        with ctx.with_config({CHECKED_KEY: True}):
            return build(mod, target, pipeline, cache)
    tgt, module = Target.of(target), as_module(mod)
    return through_cache(module, tgt, pipeline, cache, lambda: _compile(module, tgt, pipeline))


def _compile(mod: IRModule, tgt: Target, pipeline: Any) -> Any:
    from tvmlite.lowering.codegen.target import machine_options
    from tvmlite.runtime.executable import Executable

    module = lower(mod, tgt, pipeline)
    with machine_options(tgt.machine_options()):
        return Executable(module)


def lower(mod: IRModule, target: Target, pipeline: Any = None) -> IRModule:
    """Every step of `build` before code generation, with the target's hooks."""
    mod = _at(mod, target, "before_legalize")
    mod = run_pipeline(mod, pipeline, target)
    mod = pipelines.LegalizeIfEnabled()(mod)
    mod = _at(mod, target, "after_legalize")
    mod = targets.run_relax_to_tir(mod, target)
    mod = _at(mod, target, "before_codegen")
    mod = targets.run_tir_to_runtime(mod, target)
    return DefaultCPUSchedule()(mod)  # between fusion and TIR lowering


def _at(mod: IRModule, target: Target, point: str) -> IRModule:
    passes = target.passes_at(point)
    return Sequential(passes, name=point)(mod) if passes else mod


def as_module(mod: Any) -> IRModule:
    """An IRModule for a module or a lone function (named "main", as TVM does)."""
    if isinstance(mod, IRModule):
        return mod
    if isinstance(mod, tir.PrimFunc | relax.Function):
        name = mod.attr("global_symbol") or "main"
        return IRModule({name: mod})
    raise TVMLiteError(f"build() takes an IRModule or a function, got {type(mod).__name__}")


def run_pipeline(mod: IRModule, pipeline: Any, target: Target | None = None) -> IRModule:
    """Run `pipeline` (None: "minimal", which legalizes unless the current
    PassContext says not to; a pass; a list of passes; or a registered name)."""
    return as_pass("minimal" if pipeline is None else pipeline, target)(mod)


def as_pass(pipeline: Any, target: Target | None = None) -> Pass:
    if isinstance(pipeline, str):
        return pipelines.get_pipeline(pipeline, target)
    if isinstance(pipeline, Pass):
        return pipeline
    if isinstance(pipeline, Sequence) and all(isinstance(p, Pass) for p in pipeline):
        return Sequential(list(pipeline), name="pipeline")
    if callable(pipeline):
        return _Callable(pipeline)
    kind = type(pipeline).__name__
    raise TVMLiteError(f"pipeline must be a pass, a list of passes or a name, got {kind}")


class _Callable(Pass):
    """A plain `(mod) -> mod` function used as a pipeline."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "pipeline")

    def run(self, mod: IRModule) -> IRModule:
        result = self.fn(mod)
        if not isinstance(result, IRModule):
            raise TVMLiteError(
                f"pipeline {self.name} returned {type(result).__name__}, not an IRModule"
            )
        return result
