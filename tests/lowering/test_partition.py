"""PartitionForCompiler: matched operator chains become module-level functions
tagged Compiler and global_symbol, which every other pass leaves alone."""

from __future__ import annotations

import tvmlite
from tvmlite.dsl import relax
from tvmlite.lowering.passes.partition_for_compiler import PartitionForCompiler
from tvmlite.transform import (
    AnnotateTIROpPattern,
    DeadCodeElimination,
    FuseOps,
    FuseTIR,
    LegalizeOps,
    Sequential,
)

HEADER = "from tvm.script import ir as I\nfrom tvm.script import relax as R\n\n"


def mlp(extra_use: bool = False) -> str:
    tail = "            gv = R.add(lv1, lv)\n" if extra_use else "            gv = R.nn.relu(lv1)\n"
    return (
        HEADER
        + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 8), dtype="float32"), w: R.Tensor((8, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
"""
        + tail
        + """            R.output(gv)
        return gv
"""
    )


def ops_of(func: relax.Function) -> list[str]:
    return [b.value.op.name for blk in func.body.blocks for b in blk.bindings]


def test_chain_is_lifted_with_compiler_and_global_symbol() -> None:
    mod = PartitionForCompiler("ext", [["relax.matmul", "relax.add"]])(tvmlite.parse(mlp()))
    func = mod["ext_matmul_add"]
    assert func.attr("Compiler") == "ext" and func.attr("global_symbol") == "ext_matmul_add"
    assert ops_of(func) == ["relax.matmul", "relax.add"]
    assert [p.name for p in func.params] == ["x", "w", "b"]
    main = mod["main"].body.blocks[0].bindings
    assert (
        isinstance(main[0].value.op, relax.GlobalVar) and main[0].value.op.name == "ext_matmul_add"
    )
    assert [b.var.name for b in main] == ["lv1", "gv"]
    again = tvmlite.parse(mod.script())
    assert tvmlite.structural_equal(again, mod)
    assert again["ext_matmul_add"].attr("Compiler") == "ext"


def test_longest_pattern_wins_and_shorter_ones_still_match() -> None:
    patterns = [["relax.matmul"], ["relax.matmul", "relax.add"]]
    mod = PartitionForCompiler("ext", patterns)(tvmlite.parse(mlp()))
    assert "ext_matmul_add" in mod.functions and "ext_matmul" not in mod.functions
    # An inner result read twice cannot be absorbed: only the matmul is cut out.
    shared = PartitionForCompiler("ext", patterns)(tvmlite.parse(mlp(extra_use=True)))
    assert ops_of(shared["ext_matmul"]) == ["relax.matmul"]
    assert "ext_matmul_add" not in shared.functions


def test_check_can_refuse_a_match_and_nothing_changes() -> None:
    mod = tvmlite.parse(mlp())
    out = PartitionForCompiler("ext", ["relax.matmul"], check=lambda bindings: False)(mod)
    assert out is mod


def test_compiler_functions_keep_their_ops_through_every_pass() -> None:
    mod = PartitionForCompiler("ext", [["relax.matmul", "relax.add"]])(tvmlite.parse(mlp()))
    passes = [LegalizeOps(), AnnotateTIROpPattern(), FuseOps(), FuseTIR(), DeadCodeElimination()]
    out = Sequential(passes)(mod)
    assert out["ext_matmul_add"] is mod["ext_matmul_add"]
    assert ops_of(out["ext_matmul_add"]) == ["relax.matmul", "relax.add"]
    # ...while the rest of main was legalized.
    rest = [b.value.op.name for b in out["main"].body.blocks[0].bindings]
    assert rest[-1] == "relax.call_tir"


def test_identical_matches_share_one_function() -> None:
    src = (
        HEADER
        + """@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 2), dtype="float32"), y: R.Tensor((2, 2), dtype="float32")) -> R.Tensor((2, 2), dtype="float32"):
        with R.dataflow():
            lv = R.matmul(x, y)
            lv1 = R.matmul(lv, y)
            R.output(lv1)
        return lv1
"""
    )
    mod = PartitionForCompiler("ext", ["relax.matmul"])(tvmlite.parse(src))
    lifted = [
        n for n, f in mod.functions.items() if isinstance(f, relax.Function) and f.attr("Compiler")
    ]
    assert lifted == ["ext_matmul"]
    calls = [b.value.op.name for b in mod["main"].body.blocks[0].bindings]
    assert calls == ["ext_matmul", "ext_matmul"]
