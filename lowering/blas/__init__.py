"""The `blas` target kind: matmuls (2-D and batched, float32 and float64, with an
optional bias add) run in the OpenBLAS NumPy ships.

    ex = tvmlite.build(mod, target="llvm -libs=blas")   # or target="blas"

Registered like any user's kind (no central code knows it): a
PartitionForCompiler pass at "before_legalize" cuts supported chains out into
`Compiler="blas"` functions, so legalization and fusion leave them alone, and
the `relax_to_tir` hook replaces their calls with native packed calls into
cblas gemm. See docs/extending.md.
"""

from tvmlite.lowering.blas.library import blas_available, find_gemm
from tvmlite.lowering.blas.lower import COMPILER, PATTERNS, LowerToBlas, supported
from tvmlite.lowering.passes.partition_for_compiler import PartitionForCompiler
from tvmlite.lowering.target import Target, register_target_kind
from tvmlite.lowering.transform import Pass


def partition_for_blas(target: Target | None = None) -> Pass:
    """The chains BLAS runs, cut out into `Compiler="blas"` functions."""
    return PartitionForCompiler(COMPILER, PATTERNS, supported)


def relax_to_tir(target: Target | None = None) -> Pass:
    return LowerToBlas()


register_target_kind(
    COMPILER, passes={"before_legalize": (partition_for_blas,)}, relax_to_tir=relax_to_tir
)

__all__ = [
    "LowerToBlas",
    "blas_available",
    "find_gemm",
    "partition_for_blas",
    "relax_to_tir",
    "supported",
]
