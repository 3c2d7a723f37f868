"""Analyses that passes share: op patterns of prim functions and the graph
partitioner fusion runs on."""

from tvmlite.lowering.analysis.op_pattern import analyze_op_pattern

__all__ = ["analyze_op_pattern"]
