"""The TIR lowering pipeline: from what the parser (or a schedule) produces to the
flat form codegen consumes.

Lowered form: no blocks; every buffer access has one int64 index into a 1-D
buffer; allocations are `AllocBuffer` of 1-D buffers; intrinsics are the ones
codegen maps directly. Each step is one file in this package. A checked build
(PassContext config `tir.instrument_bound_checkers`, which `build(...,
checked=True)` sets) adds InstrumentBoundCheckers right after LowerBlocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import tir
from tvmlite.dsl.arith import Simplify
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.tir.compact_buffers import compact_buffers
from tvmlite.lowering.tir.flatten_buffers import flatten_buffers
from tvmlite.lowering.tir.instrument_bound_checkers import (
    bound_checks_enabled,
    instrument_bound_checkers,
)
from tvmlite.lowering.tir.lower_blocks import lower_blocks
from tvmlite.lowering.tir.lower_intrinsics import lower_intrinsics
from tvmlite.lowering.tir.simplify_indices import simplify_indices

STEPS = (lower_blocks, compact_buffers, simplify_indices, flatten_buffers, lower_intrinsics)
CHECKED_STEPS = (
    lower_blocks,
    compact_buffers,
    instrument_bound_checkers,  # before simplify_indices: messages show the indices as written
    simplify_indices,
    flatten_buffers,
    lower_intrinsics,
)


def lower_prim_func(func: tir.PrimFunc) -> tir.PrimFunc:
    """Run every TIR lowering step on one function; `buffer_map` is kept as is."""
    for step in CHECKED_STEPS if bound_checks_enabled() else STEPS:
        func = step(func)
    return Simplify().visit_prim_func(func)


@dataclass(frozen=True)
class LowerTIR:
    """Module pass: lower every PrimFunc, leave other functions alone."""

    name: str = "LowerTIR"

    def run(self, mod: IRModule) -> IRModule:
        functions = {
            key: lower_prim_func(f) if isinstance(f, tir.PrimFunc) else f
            for key, f in mod.functions.items()
        }
        return IRModule(
            functions, dict(mod.attrs), dict(mod.global_infos), dict(mod.metadata), mod.dialect
        )
