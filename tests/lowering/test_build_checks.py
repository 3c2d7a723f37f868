"""Compiled entry points check every argument and fail with TVMLiteError naming
the parameter, expected and received: never a crash, never garbage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.transform import PassContext

DATA = Path(__file__).parent / "data" / "build"
Error = tvmlite.TVMLiteError


@pytest.fixture(scope="module")
def ex() -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse((DATA / "graph.tvms").read_text()))


def _f32(n: int) -> np.ndarray:
    return np.ones(n, "float32")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((_f32(4),), r"main\(\) takes 2 arguments \(x, y\), got 1"),
        ((_f32(4), 3), r"parameter 'y': expected a tensor .* got int"),
        ((_f32(4), np.ones(4, "float64")), r"parameter 'y': expected dtype float32, got float64"),
        ((_f32(4), np.ones((4, 1), "float32")), r"parameter 'y': expected 1 dimensions, got 2"),
        ((_f32(4), _f32(5)), r"parameter 'y': expected shape \(n,\) = \(4,\), got \(5,\)"),
        ((np.ones(8, "float32")[::2], _f32(4)), r"parameter 'x': expected a compact"),
        (
            (_f32(4), np.ones(4, "complex64")),
            r"parameter 'y': expected dtype float32, got complex64",
        ),
    ],
)
def test_argument_errors(ex: tvmlite.Executable, args: tuple, message: str) -> None:
    with pytest.raises(Error, match=message):
        ex["main"](*args)


def test_tuple_parameter_errors(ex: tvmlite.Executable) -> None:
    with pytest.raises(Error, match=r"parameter 't': expected a tuple of 2, got an array"):
        ex["pair"](_f32(4))
    with pytest.raises(Error, match=r"parameter 't\[1\]': expected shape \(4,\), got \(3,\)"):
        ex["pair"]((_f32(4), _f32(3)))


def test_if_condition_must_be_bool(ex: tvmlite.Executable) -> None:
    with pytest.raises(Error, match=r"parameter 'c': expected dtype bool, got int32"):
        ex["pick"](np.array(1, "int32"), _f32(4))


def test_read_only_and_misaligned_inputs() -> None:
    ex = tvmlite.build(tvmlite.parse((DATA / "graph.tvms").read_text()))
    ro = _f32(4)
    ro.flags.writeable = False
    np.testing.assert_array_equal(ex["pick"](np.array(True), ro), np.full(4, 2.0))
    raw = np.zeros(4 * 4 + 1, "uint8")[1:].view("float32")
    with pytest.raises(Error, match="not aligned"):
        ex["pick"](np.array(True), raw)


def test_private_and_unknown_functions(ex: tvmlite.Executable) -> None:
    with pytest.raises(Error, match="'add' is private"):
        ex["add"]
    with pytest.raises(Error, match="'nope' does not exist"):
        ex["nope"]


def test_unlegalized_operator_is_named() -> None:
    mod = tvmlite.parse((DATA / "unlegalized.tvms").read_text())
    with PassContext(config={"relax.transform.apply_legalize_ops": False}):
        with pytest.raises(
            Error, match=r"operator R\.exp \(bound to 'y'\) cannot be compiled.*config"
        ):
            tvmlite.build(mod)


def test_declining_legalization_gives_its_reason() -> None:
    text = """\
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 8, 8, 3), "float32"), w: R.Tensor((3, 3, 3, 4), "float32")):
        y = R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="HWIO", out_layout="NCHW")
        return y
"""
    mod = tvmlite.parse(text, filename="conv.tvms")
    with pytest.raises(Error, match=r"^conv\.tvms:5:\d+: .*R\.nn\.conv2d.*out_layout other than"):
        tvmlite.build(mod)


def test_kernel_buffer_mismatch_is_refused_where_the_call_is() -> None:
    """TVM's well-formedness check compares a kernel call's arguments with the prim
    function's buffers: the default parse refuses the mismatch, and a build of the
    module parsed with the check off refuses it too."""
    text = (
        (DATA / "graph.tvms")
        .read_text()
        .replace('R.const([1.0, 2.0, 3.0], "float32")', 'R.const([1.0, 2.0, 3.0, 4.0], "float32")')
    )
    message = (
        r"R.call_tir of add: argument 1 is R.Tensor\(\(4,\), dtype=\"float32\"\), but the "
        r"kernel takes R.Tensor\(\(3,\), dtype=\"float32\"\) as B"
    )
    with pytest.raises(Error, match=message):
        tvmlite.parse(text)
    with pytest.raises(Error, match=message):
        tvmlite.build(tvmlite.parse(text, check_well_formed=False))


def test_prim_function_arguments_are_checked() -> None:
    ex = tvmlite.build(tvmlite.parse((DATA / "prim_only.tvms").read_text()))
    with pytest.raises(Error, match=r"parameter 'B': expected shape \(8,\), got \(4,\)"):
        ex["twice"](np.zeros(8, "float32"), np.zeros(4, "float32"))
    with pytest.raises(Error, match="does not fit in int32"):
        ex["fill"](np.zeros(4, "int32"), 1 << 40)
