"""`build(mod, target="llvm", pipeline=None) -> Executable`.

The steps: accept a module, a lone function or text-parsed input; run the
pipeline (by default LegalizeOps, unless the PassContext config
`relax.transform.apply_legalize_ops` is False; or the passes the caller gives);
then compile every prim function to a kernel and every graph function to
native host code in one LLVM module (see `runtime/executable.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering import pipeline as pipelines
from tvmlite.lowering.transform import Pass, PassContext, Sequential

TARGETS = ("llvm",)
LEGALIZE_KEY = "relax.transform.apply_legalize_ops"


def build(mod: Any, target: Any = "llvm", pipeline: Any = None) -> Any:
    """Compile `mod` (an IRModule, a PrimFunc or a Relax function) for the host."""
    from tvmlite.runtime.executable import Executable

    _check_target(target)
    module = as_module(mod)
    module = run_pipeline(module, pipeline)
    return Executable(module)


def _check_target(target: Any) -> None:
    kind = target if isinstance(target, str) else getattr(target, "kind", None)
    name = str(kind).split()[0] if kind is not None else ""
    if name not in TARGETS:
        raise TVMLiteError(
            f"unsupported target {target!r}: tvmlite builds for 'llvm' (the host CPU)"
        )


def as_module(mod: Any) -> IRModule:
    """An IRModule for a module or a lone function (named "main", as TVM does)."""
    if isinstance(mod, IRModule):
        return mod
    if isinstance(mod, tir.PrimFunc | relax.Function):
        name = mod.attr("global_symbol") or "main"
        return IRModule({name: mod})
    raise TVMLiteError(f"build() takes an IRModule or a function, got {type(mod).__name__}")


def run_pipeline(mod: IRModule, pipeline: Any) -> IRModule:
    """Run `pipeline` (None: the default one, which legalizes unless the current
    PassContext says not to; a pass; a list of passes; or a registered name)."""
    if pipeline is None:
        if not PassContext.current().get(LEGALIZE_KEY, True):
            return mod
        return legalize(mod)
    return as_pass(pipeline)(mod)


def legalize(mod: IRModule) -> IRModule:
    """The one call site of LegalizeOps in build (skipped when nothing is left to
    legalize, so already-legalized modules build without it)."""
    if not any(isinstance(f, relax.Function) for f in mod.functions.values()):
        return mod
    return pipelines.legalize_pass()(mod)


def as_pass(pipeline: Any) -> Pass:
    if isinstance(pipeline, str):
        return pipelines.get_pipeline(pipeline)
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
