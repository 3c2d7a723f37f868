"""Simplify: fold the arithmetic of every prim function (`dsl/arith.Simplify`).

The last step of TIR lowering: flattening and block lowering leave index
arithmetic over constants and let-bound iteration variables that folds away,
which keeps `--emit tir` readable and the LLVM input small.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmlite.dsl import arith, tir
from tvmlite.lowering.transform import PrimFuncPass


@dataclass(frozen=True)
class Simplify(PrimFuncPass):
    """Constant folding and simplification of every prim function."""

    name: str = "Simplify"

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        return arith.Simplify().visit_prim_func(func)
