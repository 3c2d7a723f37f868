"""TIR-to-TIR lowering: blocks to loops, buffers to flat pointers, composite
intrinsics to primitive ones, as passes (see `pipeline.py` for the order)."""

from tvmlite.lowering.tir.check_static_bounds import CheckStaticBounds
from tvmlite.lowering.tir.compact_buffers import CompactBuffers
from tvmlite.lowering.tir.flatten_buffers import FlattenBuffers
from tvmlite.lowering.tir.instrument_bound_checkers import InstrumentBoundCheckers
from tvmlite.lowering.tir.lower_blocks import LowerBlocks
from tvmlite.lowering.tir.lower_intrinsics import LowerIntrinsics
from tvmlite.lowering.tir.pipeline import LowerTIR
from tvmlite.lowering.tir.signature import kernel_signature
from tvmlite.lowering.tir.simplify import Simplify
from tvmlite.lowering.tir.simplify_indices import SimplifyIndices

__all__ = [
    "CheckStaticBounds",
    "CompactBuffers",
    "FlattenBuffers",
    "InstrumentBoundCheckers",
    "LowerBlocks",
    "LowerIntrinsics",
    "LowerTIR",
    "Simplify",
    "SimplifyIndices",
    "kernel_signature",
]
