"""Public pass API: `tvmlite.transform.LegalizeOps()(mod)`, the TIR lowering
passes, pass contexts and sequences, and decorators and bases to write passes
of your own."""

from tvmlite.lowering.legalize import op_info, register_legalize
from tvmlite.lowering.passes import (
    AnnotateTIROpPattern,
    BindParams,
    DeadCodeElimination,
    DecomposeOpsForInference,
    DefaultCPUSchedule,
    FuseOps,
    FuseTIR,
    FuseTransposeMatmul,
    LegalizeOps,
)
from tvmlite.lowering.passes.convert_layout import ConvertLayout
from tvmlite.lowering.passes.partition_for_compiler import PartitionForCompiler
from tvmlite.lowering.tir import (
    CheckStaticBounds,
    CompactBuffers,
    FlattenBuffers,
    InstrumentBoundCheckers,
    LowerBlocks,
    LowerIntrinsics,
    LowerTIR,
    Simplify,
    SimplifyIndices,
)
from tvmlite.lowering.transform import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PassInstrument,
    PassTimingInstrument,
    PrimFuncPass,
    PrintAfterAll,
    Sequential,
    function_pass,
    module_pass,
    register_config_option,
)

__all__ = [
    "AnnotateTIROpPattern",
    "BindParams",
    "CheckStaticBounds",
    "CompactBuffers",
    "ConvertLayout",
    "DeadCodeElimination",
    "DecomposeOpsForInference",
    "DefaultCPUSchedule",
    "FuseOps",
    "FuseTIR",
    "FuseTransposeMatmul",
    "FlattenBuffers",
    "FunctionPass",
    "InstrumentBoundCheckers",
    "LegalizeOps",
    "LowerBlocks",
    "LowerIntrinsics",
    "LowerTIR",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PartitionForCompiler",
    "PassTimingInstrument",
    "PrimFuncPass",
    "PrintAfterAll",
    "Sequential",
    "Simplify",
    "SimplifyIndices",
    "function_pass",
    "module_pass",
    "op_info",
    "register_config_option",
    "register_legalize",
]
