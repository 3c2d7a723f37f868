"""`lower(mod, target, pipeline) -> IRModule` and `build(...) -> Executable`.

`lower` runs every pass of the flow (docs/extending.md), each under the current
PassContext, and returns the module code generation consumes: graph functions
calling lowered prim functions (no blocks, flat buffers). `build` is code
generation applied to `lower`'s result, through the compile cache. Both read
top to bottom as the flow they run.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tvmlite.diagnostics import TVMLiteError, VerifyError
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.relax_functor import ExprVisitor
from tvmlite.dsl.verify.relax import verify_module
from tvmlite.dsl.walk import walk
from tvmlite.lowering import pipeline as pipelines
from tvmlite.lowering.cache import cache_key, configured_dir, lookup, store
from tvmlite.lowering.cache.functions import function_cache
from tvmlite.lowering.cache.kernels import kernel_cache
from tvmlite.lowering.codegen.generate import compile_llvm, generate_llvm, link, link_cross
from tvmlite.lowering.codegen.kernel_build import prestart
from tvmlite.lowering.codegen.llvm_host_support import support_library
from tvmlite.lowering.codegen.llvm_profile import PROFILE_KEY
from tvmlite.lowering.codegen.target import current_options, machine_options, runs_here
from tvmlite.lowering.incremental import CachedLowering
from tvmlite.lowering.passes.bind_params import BindParams
from tvmlite.lowering.passes.legalize_ops import LegalizeOps
from tvmlite.lowering.pipeline import NOT_GIVEN, relax_pipeline_of, tir_pipeline_of
from tvmlite.lowering.target import RelaxToTIR, Target, TIRToRuntime
from tvmlite.lowering.tir.instrument_bound_checkers import CHECKED_KEY
from tvmlite.lowering.tir.pipeline import LowerTIR
from tvmlite.lowering.transform import Pass, PassContext, Sequential
from tvmlite.runtime.executable import CrossExecutable, Executable


def lower(
    mod: Any,
    target: Any = "llvm",
    pipeline: Any = None,
    *,
    relax_pipeline: Any = NOT_GIVEN,
    tir_pipeline: Any = "default",
) -> IRModule:
    """Every step of `build` before code generation: the target's hooks, the
    pipeline, legalization, the schedule point and TIR lowering. `mod` is an IRModule or a lone
    function; `target` a `Target` or its text; the pipelines as for `build`."""
    tgt, module = Target.of(target), as_module(mod)
    pipeline = relax_pipeline_of(pipeline, relax_pipeline, tgt)
    return _lower(module, tgt, pipeline, tir_pipeline_of(tir_pipeline))


def _lower(
    module: IRModule,
    tgt: Target,
    pipeline: Any,
    tir_pipeline: Any,
    cached: CachedLowering | None = None,
) -> IRModule:
    """`lower`, the prim functions `cached` holds lowered taken from it
    (lowering/incremental.py)."""
    verify_module(module)  # parsing lets annotations disagree with their values, as TVM
    for func in module.functions.values():
        if isinstance(func, relax.Function):
            _OneDevice().visit_expr(func)
        elif isinstance(func, tir.PrimFunc):
            _no_negative_dims(func)
    module = _at(module, tgt, "before_legalize")
    module = RelaxToTIR(tgt)(module)  # Compiler="kind" functions, by their kind (RFC: first)
    module = as_pass(pipeline, tgt)(module)
    module = LegalizeOps()(module)  # what the pipeline (or a relax_to_tir hook) left
    module = _at(module, tgt, "after_legalize")
    module = TIRToRuntime(tgt)(module)  # prim functions other kinds compile
    if cached is not None:
        module = cached.restore(module)
    seen = None if cached is None else cached.seen
    module = pipelines.schedule(tgt, seen)(module)  # the schedule point: loops for LLVM's prims
    if tir_pipeline == "default":  # blocks, bound checks, the kinds' passes, buffers, intrinsics
        lower_tir = LowerTIR(tuple(tgt.passes_at("lower_tir")))
        module = lower_tir(module) if cached is None else cached.lower(module, lower_tir)
    else:
        module = as_pass(tir_pipeline, what="tir_pipeline")(module)
    return _at(module, tgt, "before_codegen")


def build(
    mod: Any,
    target: Any = "llvm",
    pipeline: Any = None,
    cache: bool = True,
    checked: bool = False,
    *,
    relax_pipeline: Any = NOT_GIVEN,
    tir_pipeline: Any = "default",
    params: Any = None,
) -> Any:
    """Compile `mod` (an IRModule, a PrimFunc or a Relax function) for `target`
    (a `Target` or its text, "llvm -mcpu=... -libs=blas"). `pipeline` takes
    tvmlite's pipeline names (None: the target's default, "fast"),
    `relax_pipeline` TVM's ("default" only legalizes, "zero" fuses, None runs
    none); `tir_pipeline` is "default" (or None: LowerTIR) or passes run instead.
    An identical earlier build is loaded from the compile cache (lowering/cache/)
    unless `cache=False`. For another machine's triple (`-mtriple`) the code is
    cross-compiled: a `CrossExecutable`, exported or shown, never run here.
    `checked=True` (or the PassContext config `tir.instrument_bound_checkers`)
    makes every out-of-bounds buffer access raise TVMLiteError; the config is
    part of the cache key. `params` (a mapping from parameter name to array, or an
    `.npz` file of them) are bound to "main" first (`BindParams`): the build's
    entry then takes only the other parameters."""
    if not isinstance(checked, bool):
        raise TVMLiteError(f"build(): 'checked' must be True or False, got {checked!r}")
    ctx = PassContext.current()
    if checked and ctx.get(CHECKED_KEY) is not True:
        with ctx.with_config({CHECKED_KEY: True}):
            return build(
                mod,
                target,
                pipeline,
                cache,
                relax_pipeline=relax_pipeline,
                tir_pipeline=tir_pipeline,
                params=params,
            )
    tgt, module = Target.of(target), as_module(mod)
    if params is not None:
        module = BindParams("main", params)(module)
    pipeline = relax_pipeline_of(pipeline, relax_pipeline, tgt)
    tir_pipeline = tir_pipeline_of(tir_pipeline)
    with collector_paused():
        return _compile(module, tgt, pipeline, tir_pipeline, cache)


def _compile(
    module: IRModule, tgt: Target, pipeline: Any, tir_pipeline: Any, cache: bool
) -> Executable | CrossExecutable:
    machine = tgt.machine_options()
    cross = not runs_here(machine)  # another triple: cross-compiled, never loaded here
    key = None
    if cache and configured_dir() is not None and not cross:
        key = cache_key(module, tgt, pipeline, tir_pipeline)
    executable: Executable | CrossExecutable | None = None
    if key is not None:
        support_library(kernel_cache())  # the support helpers' object from the cache
        executable = lookup(key, tgt, module)
    if executable is None:
        if key is None:  # cached builds may compile few kernels: no workers ahead of need
            prestart(module)  # kernel workers start while the module is lowered
        cached = None if key is None else _cached_lowering(tgt, tir_pipeline)
        lowered = _lower(module, tgt, pipeline, tir_pipeline, cached)
        with machine_options(machine):
            # Kernel units (each compiled once, cached when the build is), host code
            kernels = kernel_cache() if key is not None else None
            keys = None if cached is None else cached.content_keys(lowered)
            code = generate_llvm(lowered, store=kernels, keys=keys)
            if cross:
                executable = link_cross(code, machine)
            else:
                jit = compile_llvm(code)  # the host's LLVM optimization, machine code
                executable = link(jit, code)  # tables filled, callables made
        if cached is not None:
            cached.commit()
            executable.function_counts = cached.counts
        if key is not None and isinstance(executable, Executable):
            store(key, executable, module)
    executable.source = source_name(module)
    ctx = PassContext.current()
    if ctx.get(PROFILE_KEY) is not True:  # `ex.profile` builds again, with profiling
        executable.profiled_build = functools.partial(
            _profiled, module, tgt, pipeline, tir_pipeline, cache, ctx
        )
    return executable


def _cached_lowering(tgt: Target, tir_pipeline: Any) -> CachedLowering | None:
    """The lowered-function cache for a cached build, when its lowering is a
    function of each prim function alone: the default TIR pipeline, and no kind
    of the target with passes that see the whole module at the schedule point
    or in LowerTIR."""
    if tir_pipeline != "default" or tgt.passes_at("schedule") or tgt.passes_at("lower_tir"):
        return None
    cache = function_cache(tgt)
    return None if cache is None else CachedLowering(cache)


def _profiled(
    module: IRModule, tgt: Target, pipeline: Any, tir_pipeline: Any, cache: bool, ctx: PassContext
) -> Executable | CrossExecutable:
    """The build `ctx` made of `module`, with profiling (`Executable.profile`); the
    instruments of that context are not run again."""
    profiled = PassContext(
        opt_level=ctx.opt_level,
        config={**ctx.config, PROFILE_KEY: True},
        required_pass=ctx.required_pass,
        disabled_pass=ctx.disabled_pass,
    )
    with profiled, collector_paused():
        return _compile(module, tgt, pipeline, tir_pipeline, cache)


def source_name(module: IRModule) -> str | None:
    """The file `module` was parsed from (for messages about what was built from it)."""
    spans = [module.span, *(getattr(f, "span", None) for f in module.functions.values())]
    span = next((s for s in spans if s is not None), None)
    name = span.source.filename if span is not None else None
    return None if name is None or name.startswith("<") else name


class _CollectorPause:
    """Python's cyclic garbage collector off while any build runs (if it was on).

    A build makes millions of short-lived objects (IR nodes, llvmlite values)
    while it holds hundreds of thousands: each collection walks all of those,
    about a quarter of a large build's time, and finds next to nothing (a
    build's objects die with it, by reference counts). Builds in several
    threads share one pause; the collector is back on once the last ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.builds = 0
        self.was_enabled = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self.lock:
            if self.builds == 0:
                self.was_enabled = gc.isenabled()
                gc.disable()
            self.builds += 1
        try:
            yield
        finally:
            with self.lock:
                self.builds -= 1
                if self.builds == 0 and self.was_enabled:
                    gc.enable()


collector_paused = _CollectorPause()


def compile_prim_funcs(funcs: Mapping[str, tir.PrimFunc], *, optimize: bool = True) -> Any:
    """Lower, compile and load `funcs` (name -> PrimFunc) as one Executable whose
    every function is callable (destination-passing: `ex["f"](a, b, out)`);
    without `optimize`, LLVM compiles at level 0."""
    lowered = LowerTIR()(IRModule(dict(funcs)))
    machine = current_options()
    with machine_options(machine if optimize else replace(machine, opt_level=0)):
        code = generate_llvm(lowered, public=frozenset(funcs))
        return link(compile_llvm(code), code)


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


def as_pass(pipeline: Any, target: Target | None = None, what: str = "pipeline") -> Pass:
    """`pipeline` as one pass: a registered name, a pass, a list of passes, or a
    plain `(mod) -> mod` function; `what` names the parameter in errors."""
    if isinstance(pipeline, str):
        return pipelines.get_pipeline(pipeline, target)
    if isinstance(pipeline, Pass):
        return pipeline
    if isinstance(pipeline, Sequence) and all(isinstance(p, Pass) for p in pipeline):
        return Sequential(list(pipeline), name="pipeline")
    if callable(pipeline):
        return _Callable(pipeline)
    kind = type(pipeline).__name__
    raise TVMLiteError(f"{what} must be a pass, a list of passes or a name, got {kind}")


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


def _no_negative_dims(func: tir.PrimFunc) -> None:
    """A buffer of a negative constant dimension (TVM prints `T.alloc_local((-1,))`, and
    tvmlite parses it as written) has no storage to give: refused where it is written."""
    for node in walk(func.body):
        if isinstance(node, tir.Buffer):
            for dim in node.shape:
                if isinstance(dim, tir.IntImm) and dim.value < 0:
                    span = dim.span or node.span
                    raise VerifyError(
                        f"buffer '{node.name}': a shape dimension must not be negative, "
                        f"got {dim.value}",
                        span,
                        span.source.filename if span is not None else None,
                    )


class _OneDevice(ExprVisitor):
    """tvmlite builds for one device: a distributed tensor (`R.DTensor`) is refused
    where it is written."""

    def visit_DTensorStructInfo(self, si: relax.DTensorStructInfo) -> None:
        raise VerifyError(
            f"distributed tensors (R.DTensor over {si.device_mesh!r}) cannot be built: "
            "tvmlite compiles for one CPU",
            si.span,
            si.span.source.filename if si.span is not None else None,
        )
