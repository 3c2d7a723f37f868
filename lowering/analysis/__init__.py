"""Analyses that passes share: op patterns of prim functions and the graph
partitioner fusion runs on."""

from tvmlite.lowering.analysis.op_pattern import (
    KIND_BY_NAME,
    KIND_NAMES,
    OpPatternKind,
    analyze_op_pattern,
    pattern_name,
)

__all__ = ["KIND_BY_NAME", "KIND_NAMES", "OpPatternKind", "analyze_op_pattern", "pattern_name"]
