"""Lowering: passes over IRModules, legalization, TIR lowering and code generation."""

from tvmlite.lowering.legalize import op_info

__all__ = ["op_info"]
