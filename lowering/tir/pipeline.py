"""LowerTIR: from what the parser (or a schedule) produces to the flat form
codegen consumes, as a sequence of passes (one file each in this package).

Lowered form: no blocks; every buffer access has one int64 index into a 1-D
buffer; allocations are `AllocBuffer` of 1-D buffers; intrinsics are the ones
codegen maps directly; `buffer_map` and the function's attributes are kept as
they were (they are the calling convention). A checked build (PassContext
config `tir.instrument_bound_checkers`, which `build(..., checked=True)` sets)
adds InstrumentBoundCheckers right after LowerBlocks and CompactBuffers, while
buffers still have their dims; every build runs CheckStaticBounds right after
LowerBlocks, which refuses an access that is out of bounds on every call, and
the passes of `inside` (a target kind's "lower_tir" passes) run after them,
buffers still with their dims. Lowering a lowered module changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tvmlite.dsl.module import IRModule
from tvmlite.lowering.tir.check_static_bounds import CheckStaticBounds
from tvmlite.lowering.tir.compact_buffers import CompactBuffers
from tvmlite.lowering.tir.flatten_buffers import FlattenBuffers
from tvmlite.lowering.tir.instrument_bound_checkers import (
    InstrumentBoundCheckers,
    bound_checks_enabled,
)
from tvmlite.lowering.tir.lower_blocks import LowerBlocks
from tvmlite.lowering.tir.lower_intrinsics import LowerIntrinsics
from tvmlite.lowering.tir.partition_loops import PartitionLoops
from tvmlite.lowering.tir.simplify import Simplify
from tvmlite.lowering.tir.simplify_indices import SimplifyIndices
from tvmlite.lowering.tir.symbolic_indices import SimplifySymbolicIndices
from tvmlite.lowering.transform import Pass


@dataclass(frozen=True)
class LowerTIR(Pass):
    """Lower every prim function of the module; other functions are left alone.
    Each step runs as a pass of its own under the current PassContext, so
    instruments, `disabled_pass` and `verify` see it."""

    inside: tuple[Pass, ...] = field(default=(), compare=False)
    name: str = "LowerTIR"

    def run(self, mod: IRModule) -> IRModule:
        checks = [InstrumentBoundCheckers()] if bound_checks_enabled() else []
        steps = [
            SimplifySymbolicIndices(),  # needs the blocks' iteration ranges
            LowerBlocks(),
            CheckStaticBounds(),  # on the accesses as written
            CompactBuffers(),
            *checks,  # before SimplifyIndices: messages show the indices as written
            *self.inside,
            PartitionLoops(),  # guarded tails apart from the whole vectors
            SimplifyIndices(),
            FlattenBuffers(),
            LowerIntrinsics(),
            Simplify(),
        ]
        for step in steps:
            mod = step(mod)
        return mod
