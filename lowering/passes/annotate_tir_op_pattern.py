"""AnnotateTIROpPattern: give every prim function an `op_pattern` attribute.

This pass owns the one place where a kernel's fusion pattern is decided. The
kind is deduced from the kernel's own loops, blocks and indices (see
`lowering/analysis/op_pattern.py`), not copied from the operator it came from,
so hand-written kernels fuse as well as legalized ones. The value is TVM's
integer (`0` elementwise ... `8` opaque) so modules round-trip through TVM;
`pattern_name` turns it back into the `op_kind` spelling. Functions that
already carry `op_pattern` keep it, so the pass is idempotent and users can
override the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.analysis.op_pattern import analyze_op_pattern
from tvmlite.lowering.transform import Pass

OP_PATTERN = "op_pattern"


@dataclass(frozen=True)
class AnnotateTIROpPattern(Pass):
    """Add `op_pattern` (TVM's `OpPatternKind` as an int) to every prim function."""

    name: str = "AnnotateTIROpPattern"

    def run(self, mod: IRModule) -> IRModule:
        functions: dict[str, Any] = {}
        for gname, func in mod.functions.items():
            if isinstance(func, tir.PrimFunc) and func.attr(OP_PATTERN) is None:
                kind = int(analyze_op_pattern(func))
                # Sorted like the printer writes them, so text round-trips exactly.
                func = tir.PrimFunc(
                    func.params,
                    func.buffer_map,
                    func.body,
                    func.ret_type,
                    tuple(sorted((*func.attrs, (OP_PATTERN, kind)), key=itemgetter(0))),
                    func.s_tir,
                    func.span,
                )
            functions[gname] = func
        return mod.with_functions(functions)
