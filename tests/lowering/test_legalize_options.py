"""LegalizeOps with TVM's parameters (issue 14 item 7): customize_legalize_map,
skip_ops, enable_warning; op_info reads TVM's `operator_name` too."""

from __future__ import annotations

import warnings

import pytest

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.lowering import op_info
from tvmlite.transform import LegalizeOps

SRC = """from tvm.script import relax as R

@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    with R.dataflow():
        a = R.add(x, x)
        b = R.nn.relu(a)
        R.output(b)
    return b
"""


def ops_left(mod: tvmlite.IRModule) -> list[str]:
    return [b.value.op.name for blk in mod["main"].body.blocks for b in blk.bindings]


def mod() -> tvmlite.IRModule:
    return tvmlite.IRModule({"main": tvmlite.parse(SRC)})


def test_skip_ops_leaves_those_operators() -> None:
    out = LegalizeOps(skip_ops=["relax.add"])(mod())
    assert ops_left(out) == ["relax.add", "relax.call_tir"]
    assert ops_left(LegalizeOps()(mod())) == ["relax.call_tir", "relax.call_tir"]


def test_customize_legalize_map_is_tvms_keyword_and_first_parameter() -> None:
    seen: list[str] = []

    def mine(ctx: object) -> None:
        seen.append("called")
        return None  # declines: the built-in rule is not tried, the call stays

    out = LegalizeOps({"relax.nn.relu": mine})(mod())
    out2 = LegalizeOps(customize_legalize_map={"relax.nn.relu": mine})(mod())
    assert seen == ["called", "called"]
    assert ops_left(out) == ops_left(out2) == ["relax.call_tir", "relax.nn.relu"]


def test_enable_warning_names_operators_without_legalization() -> None:
    src = SRC.replace("b = R.nn.relu(a)", "b = R.nn.relu(a)\n        s = R.shape_of(b)")
    module = tvmlite.IRModule({"main": tvmlite.parse(src)})
    with pytest.warns(UserWarning, match="LegalizeOps: no legalization for relax.shape_of"):
        LegalizeOps(enable_warning=True)(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LegalizeOps()(module)  # off by default, as in TVM
        LegalizeOps(enable_warning=True)(LegalizeOps()(mod()))  # call_tir: nothing to say


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"skip_ops": ["relax.ad"]}, "skip_ops names unknown operator 'relax.ad'"),
        ({"skip_ops": "relax.add"}, "skip_ops must be a list of operator names"),
        ({"customize_legalize_map": {"relax.add": 3}}, "customize_legalize_map must map"),
        ({"enable_warning": "yes"}, "enable_warning must be True or False"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        LegalizeOps(**kwargs)


def test_op_info_reads_tvms_operator_name() -> None:
    src = """from tvm.script import tir as T

@T.prim_func
def add(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
    T.func_attr({"operator_name": "relax.add"})
    for i in range(4):
        with T.block("c"):
            vi = T.axis.spatial(4, i)
            c[vi] = a[vi] + b[vi]
"""
    kernel = tvmlite.parse(src)
    assert isinstance(kernel, tir.PrimFunc)
    info = op_info(kernel)
    legalized = LegalizeOps()(mod())
    kernels = [f for f in legalized.functions.values() if not isinstance(f, relax.Function)]
    ours = {op_info(k)["name"]: op_info(k) for k in kernels}
    assert set(ours) == {"relax.add", "relax.nn.relu"}
    # TVM's kernel names the operator only: the kind is the one ours carries.
    assert info == {"name": "relax.add", "kind": ours["relax.add"]["kind"], "attrs": {}}
    assert info["kind"] == "broadcast"
