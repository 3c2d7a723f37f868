"""The passes over IRModules, one per file."""

from tvmlite.lowering.passes.annotate_tir_op_pattern import AnnotateTIROpPattern
from tvmlite.lowering.passes.bind_params import BindParams
from tvmlite.lowering.passes.dead_code_elimination import DeadCodeElimination
from tvmlite.lowering.passes.decompose_ops_for_inference import DecomposeOpsForInference
from tvmlite.lowering.passes.default_cpu_schedule import DefaultCPUSchedule
from tvmlite.lowering.passes.elide_matmul_broadcast import ElideMatmulBroadcast
from tvmlite.lowering.passes.fold_constant_packs import FoldConstantPacks
from tvmlite.lowering.passes.fuse_ops import FuseOps
from tvmlite.lowering.passes.fuse_tir import FuseTIR
from tvmlite.lowering.passes.fuse_transpose_matmul import FuseTransposeMatmul
from tvmlite.lowering.passes.legalize_ops import LegalizeOps

__all__ = [
    "AnnotateTIROpPattern",
    "BindParams",
    "DeadCodeElimination",
    "DecomposeOpsForInference",
    "DefaultCPUSchedule",
    "ElideMatmulBroadcast",
    "FoldConstantPacks",
    "FuseOps",
    "FuseTIR",
    "FuseTransposeMatmul",
    "LegalizeOps",
]
