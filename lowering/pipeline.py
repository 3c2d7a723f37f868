"""Named compilation pipelines: what `build(mod, pipeline="name")` runs between
the target kinds' relax_to_tir hooks and their "after_legalize" passes; and the schedule point
(`schedule`), which `lower` runs between fusion and TIR lowering whatever the
pipeline.

A pipeline is registered as a function `(target) -> Pass` under a name, so a
target or a user adds one without touching `build`:

    @register_pipeline("mine")
    def mine(target: Target) -> Pass:
        return Sequential([LegalizeOps(), MyPass()], name="mine")

Built in: "fast", `build`'s default: the fastest correct build tvmlite knows
(graph rewrites that make fusion pay, then "default"'s fusion); "minimal", only
what running needs (LegalizeOps, TVM's default build); "default", minimal plus
the graph-level optimizations of TVM's pipeline (AnnotateTIROpPattern, FuseOps,
FuseTIR, DeadCodeElimination); TVM's names "zero" (= "default") and
"default_build" (= "minimal") too. All leave an already-lowered module as it
is, so a module a user optimized by hand (the seed's workflow 1) and one built
straight from operators (workflow 2) both work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tvmlite.diagnostics import TVMLiteError, did_you_mean
from tvmlite.lowering.tir.check_static_bounds import CheckStaticBounds
from tvmlite.lowering.transform import Pass, Sequential

if TYPE_CHECKING:
    from tvmlite.dsl.module import IRModule
    from tvmlite.lowering.target import Target

PipelineFn = Callable[["Target"], Pass]


def minimal(target: Target | None = None) -> Pass:
    """Only what is needed to run: legalize the operators."""
    from tvmlite.lowering.passes import LegalizeOps

    return Sequential([LegalizeOps()], name="minimal")


def default(target: Target | None = None) -> Pass:
    """Minimal, then fusion: kernels deduce their pattern, groups fuse into one
    kernel each, and what fusion left unused goes away."""
    from tvmlite.lowering.passes import (
        AnnotateTIROpPattern,
        DeadCodeElimination,
        FuseOps,
        FuseTIR,
        LegalizeOps,
    )

    passes = [LegalizeOps(), AnnotateTIROpPattern(), FuseOps(), FuseTIR()]
    return Sequential([*passes, DeadCodeElimination()], name="default")


def fast(target: Target | None = None) -> Pass:
    """`build`'s default: the fastest correct build tvmlite knows. Default, with
    the graph rewrites that make fusion pay first: a matmul reads a broadcast
    operand unbroadcast (ElideMatmulBroadcast) and a transposed one in place
    (FuseTransposeMatmul), batch_norm becomes a per-channel multiply-add that
    fuses after its convolution (DecomposeOpsForInference)."""
    from tvmlite.lowering.passes import (
        AnnotateTIROpPattern,
        DeadCodeElimination,
        DecomposeOpsForInference,
        ElideMatmulBroadcast,
        FuseOps,
        FuseTIR,
        FuseTransposeMatmul,
        LegalizeOps,
    )

    # What the rewrites leave unused (transposes, batch_norm's tuple) goes before
    # FuseOps, for which an extra reader ends a fusion group.
    rewrites = [
        ElideMatmulBroadcast(),
        FuseTransposeMatmul(),
        DecomposeOpsForInference(),
        DeadCodeElimination(),
    ]
    fusion = [LegalizeOps(), AnnotateTIROpPattern(), FuseOps(), FuseTIR(), DeadCodeElimination()]
    return Sequential([*rewrites, *fusion], name="fast")


# TVM's names are registered with TVM's contents: "zero" fuses (tvmlite's "default"),
# "default_build" only legalizes (tvmlite's "minimal"). TVM's "default" is the
# target's default pipeline ("default_build" on a CPU), which tvmlite's `pipeline=`
# spells "minimal" (its None is "fast"): `relax_pipeline=` reads names as TVM does
# (`relax_pipeline_of`).
PIPELINES: dict[str, PipelineFn] = {
    "minimal": minimal,
    "default": default,
    "fast": fast,
    "zero": default,
    "default_build": minimal,
}
NOT_GIVEN: Any = type("NotGiven", (), {"__repr__": lambda self: "NOT_GIVEN"})()


def relax_pipeline_of(pipeline: Any, relax_pipeline: Any, target: Target) -> Any:
    """What to run, from tvmlite's `pipeline=` (tvmlite's names, None meaning the
    target's default: "fast" unless its kind names one) or TVM's `relax_pipeline=`
    (TVM's names: "default" is TVM's default build, "default_build", legalization
    only, unless the kind names one; None means no pipeline: the module as it is,
    with what is left legalized by `lower`)."""
    if relax_pipeline is NOT_GIVEN:
        return target.default_pipeline if pipeline is None else pipeline
    if pipeline is not None:
        raise TVMLiteError("give pipeline= (tvmlite's names) or relax_pipeline= (TVM's), not both")
    if relax_pipeline is None:
        return []
    if relax_pipeline == "default":
        return target.named_pipeline or "default_build"  # TVM's for the host: no fusion
    return relax_pipeline


# TVM's TIR pipeline names; both are its block-lowering pipeline, tvmlite's LowerTIR.
TIR_PIPELINES = ("default", "s_tir")


def tir_pipeline_of(tir_pipeline: Any) -> Any:
    """TVM's `tir_pipeline=`: "default" for a TVM name or None (the target's
    default, LowerTIR here), else the pass or passes to run instead."""
    if tir_pipeline is None or tir_pipeline in TIR_PIPELINES:
        return "default"
    if isinstance(tir_pipeline, str):
        known = ", ".join(TIR_PIPELINES)
        hint = did_you_mean(tir_pipeline, TIR_PIPELINES, quote=True)
        raise TVMLiteError(f"unknown tir_pipeline '{tir_pipeline}'{hint} (known: {known})")
    return tir_pipeline


def schedule(target: Target, seen: Callable[[IRModule], None] | None = None) -> Pass:
    """The schedule point of the flow: what `lower` runs after fusion and the
    target hooks and before TIR lowering, whichever pipeline ran (docs/extending.md).

    It sees the prim functions LLVM will compile, block-style (other kinds took
    theirs at TIRToRuntime). A pass here gives a function its loop structure
    (split, reorder, parallel, vectorize...) and sets `tir.is_scheduled`; a
    function a pass before it (or its author) marked so is left alone. What it
    returns is lowered like any other prim function. It runs the passes each kind
    of `target` registers at "schedule", then DefaultCPUSchedule: kinds schedule
    first and the default schedule completes what they left; then the weight
    copies the schedules made are done at build time for constant weights
    (FoldConstantPacks). `seen` is shown the module as scheduled, before the
    copies are folded (the lowered-function cache keeps what it needs of it:
    lowering/incremental.py)."""
    from tvmlite.lowering.passes import DefaultCPUSchedule, FoldConstantPacks

    schedules = [*target.passes_at("schedule"), DefaultCPUSchedule(target)]
    return _SchedulePoint([*schedules, FoldConstantPacks()], name="schedule", seen=seen)


class _SchedulePoint(Sequential):
    """The schedule step's passes; a failing one is named, with what it should do
    instead: a schedule that does not fit a function leaves it as it is (it is
    then compiled with the loops it has, serial and correct)."""

    seen: Callable[[IRModule], None] | None = None

    def __init__(
        self, passes: list[Pass], name: str, seen: Callable[[IRModule], None] | None = None
    ) -> None:
        super().__init__(passes, name)
        object.__setattr__(self, "seen", seen)

    def run(self, mod: IRModule) -> IRModule:
        # Accesses certain to be out of bounds are refused as written, before a
        # schedule's guards and fused indices hide them from the check.
        mod = CheckStaticBounds()(mod)
        for p in self.passes:
            if p is self.passes[-1] and self.seen is not None:
                self.seen(mod)  # scheduled, the weight copies not folded yet
            try:
                mod = p(mod)
            except TVMLiteError as e:
                raise TVMLiteError(
                    f"schedule pass '{p.info.name}' failed: {e} (a schedule pass should "
                    "leave a function it cannot schedule unscheduled: it then runs as written)"
                ) from e
        return mod


def register_pipeline(
    name: str, make: PipelineFn | None = None, override: bool = False
) -> Callable[[PipelineFn], PipelineFn] | PipelineFn:
    """Make `build(mod, pipeline=name)` run `make(target)`; a decorator when `make`
    is omitted."""

    def register(fn: PipelineFn) -> PipelineFn:
        if name in PIPELINES and not override:
            raise TVMLiteError(f"pipeline '{name}' already exists (override=True replaces it)")
        PIPELINES[name] = fn
        return fn

    return register if make is None else register(make)


def get_pipeline(name: str, target: Target | str | None = None) -> Pass:
    """A fresh pass for pipeline `name` (for `target`, default the host)."""
    from tvmlite.lowering.target import Target

    make = PIPELINES.get(name)
    if make is None:
        known = ", ".join(sorted(PIPELINES))
        hint = did_you_mean(name, PIPELINES, quote=True)
        raise TVMLiteError(f"unknown pipeline '{name}'{hint} (known: {known})")
    result = make(Target.of(target))
    if not isinstance(result, Pass):
        raise TVMLiteError(f"pipeline '{name}' made a {type(result).__name__}, not a pass")
    return result


def list_pipelines() -> list[str]:
    return sorted(PIPELINES)
