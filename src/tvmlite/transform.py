"""Public pass API: `tvmlite.transform.LegalizeOps()(mod)`, pass contexts and
sequences, and decorators to write passes of your own."""

from tvmlite.lowering.legalize import op_info, register_legalize
from tvmlite.lowering.passes import (
    AnnotateTIROpPattern,
    DeadCodeElimination,
    FuseOps,
    FuseTIR,
    LegalizeOps,
)
from tvmlite.lowering.passes.convert_layout import ConvertLayout
from tvmlite.lowering.passes.partition_for_compiler import PartitionForCompiler
from tvmlite.lowering.transform import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PassInstrument,
    PassTimingInstrument,
    PrintAfterAll,
    Sequential,
    function_pass,
    module_pass,
)

__all__ = [
    "AnnotateTIROpPattern",
    "ConvertLayout",
    "DeadCodeElimination",
    "FuseOps",
    "FuseTIR",
    "FunctionPass",
    "LegalizeOps",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PartitionForCompiler",
    "PassTimingInstrument",
    "PrintAfterAll",
    "Sequential",
    "function_pass",
    "module_pass",
    "op_info",
    "register_legalize",
]
