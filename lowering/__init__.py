"""Lowering: passes over IRModules, legalization, TIR lowering and code generation,
targets with their hooks, and the named pipelines `build` runs."""

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
    "get_pipeline",
    "get_target_kind",
    "list_pipelines",
    "list_target_kinds",
    "op_info",
    "register_pipeline",
    "register_target_kind",
    "unregister_target_kind",
]
