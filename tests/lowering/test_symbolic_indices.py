"""Reshapes over symbolic sizes in fused kernels: AnnotateTIROpPattern calls
them injective (they fuse), and SimplifySymbolicIndices takes their divisions
by the sizes apart with the blocks' ranges, so the fused kernel reads its
operands at plain indices (lowering/tir/symbolic_indices.py)."""

from __future__ import annotations

import numpy as np

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.analysis import loads
from tvmlite.dsl.ops import OpPatternKind
from tvmlite.dsl.walk import walk
from tvmlite.lowering.analysis.op_pattern import analyze_op_pattern
from tvmlite.lowering.tir.symbolic_indices import SimplifySymbolicIndices
from tvmlite.transform import PassContext

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"

# What legalization makes of R.reshape (8, s, s) -> (1, 8, s, s), then an add:
# the source is read through the flat position.
RESHAPE_ADD = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    s = T.int64()
    A = T.match_buffer(a, (T.int64(8), s, s))
    B = T.match_buffer(b, (T.int64(1), T.int64(8), s, s))
    C = T.match_buffer(c, (T.int64(1), T.int64(8), s, s))
    for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(8), s, s):
        with T.block("C"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            C[v0, v1, v2, v3] = A[(((v0 * T.int64(8) + v1) * s + v2) * s + v3) // s // s % T.int64(8), (((v0 * T.int64(8) + v1) * s + v2) * s + v3) // s % s, (((v0 * T.int64(8) + v1) * s + v2) * s + v3) % s] + B[v0, v1, v2, v3]
"""


def divisions(func: tir.PrimFunc) -> list[tir.BinaryOp]:
    """The floordiv / floormod nodes of the function's buffer indices."""
    return [
        node
        for load in loads(func.body)
        for index in load.indices
        for node in walk(index)
        if isinstance(node, tir.BinaryOp) and node.kind in ("floordiv", "floormod")
    ]


def test_a_reshape_over_a_symbolic_size_is_injective() -> None:
    """TVM calls it opaque (the load reads `s`, which no store index is), which
    kept every reshape of a dynamic model out of fusion."""
    assert analyze_op_pattern(tvmlite.parse(RESHAPE_ADD)) == OpPatternKind.kInjective


def test_divisions_by_the_size_go_away_with_the_ranges() -> None:
    func = SimplifySymbolicIndices().transform(tvmlite.parse(RESHAPE_ADD))
    (load,) = [x for x in loads(func.body) if x.buffer.name == "A"]
    assert [getattr(i, "name", None) for i in load.indices] == ["v1", "v2", "v3"]
    assert divisions(func) == []


def test_a_division_the_ranges_do_not_decide_stays() -> None:
    """v3 runs to 2s: (v2 * s + v3) // s is v2 or v2 + 1, and stays a division;
    a negative term leaves the remainder unproven too."""
    for index in ("(v2 * s + v3) // s", "(v2 * s - v3) % s"):
        text = (
            RESHAPE_ADD.replace("T.grid(T.int64(1), T.int64(8), s, s)", "T.grid(1, 8, s, s * 2)")
            .replace("(T.int64(1), T.int64(8), s, s))", "(T.int64(1), T.int64(8), s, s * 2))")
            .replace("v3 = T.axis.remap", "v3 = T.axis.remap")
        )
        text = text.replace(
            "A[(((v0 * T.int64(8) + v1) * s + v2) * s + v3) // s // s % T.int64(8), "
            "(((v0 * T.int64(8) + v1) * s + v2) * s + v3) // s % s, "
            "(((v0 * T.int64(8) + v1) * s + v2) * s + v3) % s]",
            f"A[v1, v2, {index}]",
        )
        func = SimplifySymbolicIndices().transform(tvmlite.parse(text))
        assert len(divisions(func)) == 1, index


def test_static_kernels_are_left_as_they_are() -> None:
    """Indices that divide by constants only are the canonical simplifier's:
    this pass leaves them (and so every static kernel) as they are."""
    text = RESHAPE_ADD.replace("    s = T.int64()\n", "").replace(" s", " T.int64(6)")
    text = text.replace("(s ", "(T.int64(6) ").replace(", s)", ", T.int64(6))")
    func = tvmlite.parse(text)
    assert divisions(func) and "s" not in {
        v.name for v in walk(func.body) if isinstance(v, tir.Var)
    }
    assert tvmlite.structural_equal(SimplifySymbolicIndices().transform(func), func)


def test_a_dynamic_attention_mask_fuses_and_matches_numpy() -> None:
    """`where(mask) + reshape(scores)` over a symbolic sequence, as a dynamic
    export of a transformer has it: one fused kernel, its reads at plain
    indices, NumPy's numbers at every length."""
    text = HEADER + (
        "@I.ir_module\nclass Module:\n    @R.function\n"
        '    def main(a: R.Tensor((8, "s", "s"), "float32"), m: R.Tensor((1, 1, "s", "s"), "bool")):\n'
        "        s = T.int64()\n"
        "        with R.dataflow():\n"
        "            r = R.reshape(a, R.shape([1, 8, s, s]))\n"
        '            w = R.where(m, R.const(0, "float32"), R.const(-1e9, "float32"))\n'
        "            gv = R.add(r, w)\n"
        "            R.output(gv)\n"
        "        return gv\n"
    )
    text = text.replace(HEADER, HEADER.replace("\n\n", "\n# from tvm.script import tirx as T\n\n"))
    mod = tvmlite.parse(text)
    with PassContext(disabled_pass=["LowerTIR"]):
        low = tvmlite.lower(mod)
    (kernel,) = [f for f in low.functions.values() if isinstance(f, tir.PrimFunc)]
    (read,) = [
        x for x in loads(SimplifySymbolicIndices().transform(kernel).body) if len(x.indices) == 3
    ]
    assert all(isinstance(i, tir.Var) for i in read.indices)
    ex = tvmlite.build(mod, cache=False)
    rng = np.random.default_rng(0)
    for s in (1, 7, 33):
        a = rng.standard_normal((8, s, s)).astype("float32")
        m = rng.random((1, 1, s, s)) > 0.5
        want = a.reshape(1, 8, s, s) + np.where(m, 0, -1e9).astype("float32")
        np.testing.assert_allclose(ex["main"](a, m), want, rtol=1e-6)
