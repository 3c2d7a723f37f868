"""Inputs the CLI tests share."""

from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mlp.tvms"
GOOD = """# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        for i in range(4):
            B[i] = A[i] + T.float32(1.0)
"""
