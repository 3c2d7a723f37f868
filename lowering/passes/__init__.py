"""The passes over IRModules, one per file."""

from tvmlite.lowering.passes.legalize_ops import LegalizeOps

__all__ = ["LegalizeOps"]
