"""GraphBuilder binds and names as TVM's BlockBuilder does (no torch needed): nested
calls bound depth first, an argument object bound once, lv/gv names from one supply."""

from __future__ import annotations

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.frontend.builder import GraphBuilder, NameSupply

EXPECTED = """\
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")):
        with R.dataflow():
            lv: R.Tensor((2, 3), dtype="float32") = R.exp(x)
            lv1: R.Tensor((2, 3), dtype="float32") = R.multiply(lv, lv)
            lv2: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
            lv3: R.Tensor((2, 3), dtype="float32") = R.add(lv1, lv2)
            lv4: R.Tensor((2, 3), dtype="float32") = R.sigmoid(x)
            lv5: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")) = lv3, lv4
            lv6: R.Tensor((2, 3), dtype="float32") = lv5[1]
            gv: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")) = lv3, lv6
            R.output(gv)
        return gv
"""


def test_bindings_and_names_follow_block_builder():
    x = relax.Var("x", relax.TensorStructInfo((_i(2), _i(3)), "float32", 2))
    bb = GraphBuilder()
    bb.begin_dataflow()
    shared = bb.call("exp", x)
    total = bb.emit(bb.call("add", bb.call("multiply", shared, shared), bb.call("nn.relu", x)))
    pair = bb.emit(relax.Tuple((total, bb.call("sigmoid", x))))
    second = bb.emit(relax.TupleGetItem(pair, 1))
    result = bb.emit_output(relax.Tuple((total, second)))
    bb.end_dataflow()
    func = bb.finish("main", [x], result, {})
    mod = tvmlite.IRModule({"main": func}, dialect="tvm-0.27")
    assert mod.script() == EXPECTED
    assert tvmlite.structural_equal(tvmlite.parse(EXPECTED), mod)


def test_name_supply_counts_and_skips_names_taken():
    names = NameSupply()
    got = [names.fresh(h) for h in ("lv", "lv", "lv1", "lv", "gv", "lv")]
    assert got == ["lv", "lv1", "lv11", "lv2", "gv", "lv3"]


def _i(value: int) -> tir.IntImm:
    return tir.IntImm("int64", value)
