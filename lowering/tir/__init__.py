"""TIR-to-TIR lowering: blocks to loops, buffers to flat pointers, composite
intrinsics to primitive ones (see `pipeline.py` for the order)."""

from tvmlite.lowering.tir.pipeline import LowerTIR, lower_prim_func
from tvmlite.lowering.tir.signature import KernelSignature, Param, kernel_signature

__all__ = ["KernelSignature", "LowerTIR", "Param", "kernel_signature", "lower_prim_func"]
