"""Lowering: passes over IRModules, legalization, TIR lowering and code generation,
targets with their hooks, and the named pipelines `build` runs."""

# The built-in kinds register themselves on import, like any user's would.
from tvmlite.lowering import blas  # noqa: F401
from tvmlite.lowering.build import build, compile_prim_funcs, lower
from tvmlite.lowering.legalize import op_info
from tvmlite.lowering.pipeline import get_pipeline, list_pipelines, register_pipeline
from tvmlite.lowering.target import (
    POINTS,
    Target,
    TargetKind,
    get_target_kind,
    list_target_kinds,
    register_target_kind,
    unregister_target_kind,
)

__all__ = [
    "POINTS",
    "Target",
    "TargetKind",
    "build",
    "compile_prim_funcs",
    "get_pipeline",
    "get_target_kind",
    "list_pipelines",
    "list_target_kinds",
    "lower",
    "op_info",
    "register_pipeline",
    "register_target_kind",
    "unregister_target_kind",
]
