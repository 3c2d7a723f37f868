"""Relax struct-info rules as TVM states them, one small case for each class of rule:
layouts convert to the plain layout a rule is written in (packed `NCHW4c` ones
included), windows, dtypes of two operands, and TVM's refusals (a located error).

Expected results are worked out from TVM's rule by hand (see tools/tvm_shape_rules.py,
which sweeps the rules against TVM itself)."""

from __future__ import annotations

import re

import pytest

from tvmlite import ParseError, VerifyError, parse


def source(params: str, call: str) -> str:
    """A function of `params` (symbolic dims quoted: `("n", 4)`) binding `lv = <call>`."""
    return f"@R.function\ndef main({params}):\n    lv = {call}\n    return lv\n"


def infer(params: str, call: str) -> str:
    """The annotation tvmlite prints for `lv = <call>` in a function of `params`."""
    text = source(params, call)
    printed = parse(text, "t.tvms", check_well_formed=False).script()
    found = re.search(r"lv: (.*?) = R\.", printed)
    assert found, printed
    return found[1]


def refused(params: str, call: str) -> str:
    text = source(params, call)
    with pytest.raises(ParseError) as info:
        parse(text, "t.tvms")
    assert info.value.span is not None and "lv = " in text.splitlines()[info.value.span.line - 1]
    return info.value.message


def t(shape: str, dtype: str = "float32") -> str:
    return f'R.Tensor({shape}, dtype="{dtype}")'


# ---------------------------------------------------------------- layouts


def test_conv_packed_layouts_move_through_the_plain_layout():
    # NCHW4c data of 4 channels, OIHW4o weight of 8 outputs: NCHW4c out of 8 // 4 blocks
    params = f"x: {t('(2, 1, 10, 10, 4)')}, w: {t('(2, 4, 3, 3, 4)')}"
    call = 'R.nn.conv2d(x, w, data_layout="NCHW4c", kernel_layout="OIHW4o")'
    assert infer(params, call) == t("(2, 2, 8, 8, 4)")


def test_conv_out_layout_packs_and_rounds_up():
    params = f"x: {t('(2, 4, 10, 10)')}, w: {t('(6, 4, 3, 3)')}"
    assert infer(params, 'R.nn.conv2d(x, w, out_layout="NCHW4c")') == t("(2, 2, 8, 8, 4)")
    assert infer(params, 'R.nn.conv2d(x, w, out_layout="NHWC")') == t("(2, 8, 8, 6)")


def test_unknown_shape_keeps_the_rank_of_the_out_layout():
    params = f"x: {t('ndim=5')}, w: {t('(2, 4, 3, 3, 4)')}"
    call = 'R.nn.conv2d(x, w, data_layout="NCHW4c", kernel_layout="OIHW4o")'
    assert infer(params, call) == 'R.Tensor(dtype="float32", ndim=5)'
    params = f"x: {t('ndim=4')}"
    call = 'R.nn.max_pool2d(x, layout="NCHW", out_layout="NCHW8c")'
    assert infer(params, call) == 'R.Tensor(dtype="float32", ndim=5)'


def test_pool_and_resize_take_any_convertible_layout():
    params = f"x: {t('(2, 10, 9, 3)')}"
    assert infer(params, 'R.nn.max_pool2d(x, [2, 2], [2, 2], layout="NHWC")') == t("(2, 5, 4, 3)")
    params = f"x: {t('(2, 1, 10, 9, 4)')}"
    call = 'R.image.resize2d(x, R.shape([5, 5]), layout="NCHW4c")'
    assert infer(params, call) == t("(2, 1, 5, 5, 4)")


@pytest.mark.parametrize(
    "layout",
    ["NCH", "NCHWW", "NCHW4x", "NCHW4c2c", "nchw", "", "NCHW0c"],
)
def test_layouts_tvm_rejects_are_refused(layout):
    params = f"x: {t('(2, 4, 10, 10)')}, w: {t('(6, 4, 3, 3)')}"
    message = refused(params, f'R.nn.conv2d(x, w, data_layout="{layout}")')
    assert "not convertible from NCHW" in message


def test_rank_must_match_the_layout():
    params = f"x: {t('(2, 4, 10, 10)')}, w: {t('(6, 4, 3, 3)')}"
    message = refused(params, 'R.nn.conv2d(x, w, data_layout="NCHW4c")')
    assert "rank 5" in message


def test_a_sub_axis_dim_must_be_its_factor():
    params = f"x: {t('(2, 1, 10, 10, 3)')}, w: {t('(2, 4, 3, 3, 4)')}"
    message = refused(params, 'R.nn.conv2d(x, w, data_layout="NCHW4c", kernel_layout="OIHW4o")')
    assert "sub-axis 4c" in message


# ---------------------------------------------------------------- windows


def test_ceil_mode_drops_a_window_that_starts_in_the_padding():
    # 5 wide, window 2, stride 2, padding 1: ceil gives 4 windows, the 4th starts at 6,
    # past the data and left padding (5 + 1): TVM and PyTorch keep 3
    params = f"x: {t('(1, 1, 5)')}"
    call = "R.nn.max_pool1d(x, [2], [2], [1, 1], ceil_mode=True)"
    assert infer(params, call) == t("(1, 1, 3)")
    call = "R.nn.max_pool1d(x, [2], [2], [0, 0], ceil_mode=True)"
    assert infer(params, call) == t("(1, 1, 3)")


def test_conv_transpose_output_padding_must_be_below_strides():
    params = f"x: {t('(1, 4, 5, 5)')}, w: {t('(4, 2, 3, 3)')}"
    message = refused(params, "R.nn.conv2d_transpose(x, w, output_padding=[1, 1])")
    assert "output_padding" in message
    call = "R.nn.conv2d_transpose(x, w, strides=[2, 2], output_padding=[1, 1])"
    assert infer(params, call) == t("(1, 2, 12, 12)")


def test_conv_output_channels_must_divide_by_groups():
    params = f"x: {t('(1, 4, 5, 5)')}, w: {t('(3, 2, 3, 3)')}"
    assert "groups" in refused(params, "R.nn.conv2d(x, w, groups=2)")


# ---------------------------------------------------------------- dtypes


def test_conv_dtype_follows_the_binary_rule():
    # an operand of unknown dtype makes the result's unknown
    params = f"x: R.Tensor((1, 4, 5, 5)), w: {t('(6, 4, 3, 3)')}"
    assert infer(params, "R.nn.conv2d(x, w)") == "R.Tensor((1, 6, 3, 3))"
    params = f"x: {t('(1, 4, 5, 5)')}, w: {t('(6, 4, 3, 3)', 'float16')}"
    assert "same dtype" in refused(params, "R.nn.conv2d(x, w)")
    assert infer(params, 'R.nn.conv2d(x, w, out_dtype="float32")') == t("(1, 6, 3, 3)")


def test_arithmetic_against_bool_takes_the_first_dtype():
    params = f"x: {t('(2, 3)')}, m: {t('(3,)', 'bool')}"
    assert infer(params, "R.add(x, m)") == t("(2, 3)")
    assert infer(params, "R.equal(x, m)") == t("(2, 3)", "bool")
    # the build (and the well-formed check) refuses it: TVM's kernel computes in the
    # promoted dtype
    with pytest.raises(VerifyError, match="cast first"):
        parse(source(params, "R.add(x, m)"))


# ---------------------------------------------------------------- symbolic forms


def test_symbolic_windows_simplify_as_tvms_analyzer():
    params = "x: " + t('("n", "c", "h")')
    assert infer(params, "R.nn.max_pool1d(x, [2], [2])") == t("(n, c, h // 2)")
    # ceil mode: the last window never starts in the padding here, so no select remains
    call = "R.nn.max_pool1d(x, [2], [2], ceil_mode=True)"
    assert infer(params, call) == t("(n, c, (h - 1) // 2 + 1)")
    params = "x: " + t('("n", 4, "h")') + ", w: " + t("(4, 6, 3)")
    call = "R.nn.conv1d_transpose(x, w, strides=[2], padding=[1, 1])"
    assert infer(params, call) == t("(n, 6, h * 2 - 1)")


def test_flattened_scan_multiplies_dims_in_order():
    params = "x: " + t('("n", 3, "m")', "int32")
    assert infer(params, "R.cumsum(x)") == t("(n * 3 * m,)", "int32")


# ---------------------------------------------------------------- ranks


@pytest.mark.parametrize("op", ["sum", "max", "argmin"])
def test_reducing_every_axis_of_a_known_rank_gives_a_shape(op):
    dtype = "int64" if op.startswith("arg") else "float32"
    params = f"x: {t('ndim=3')}"
    assert infer(params, f"R.{op}(x)") == t("()", dtype)
    assert infer(params, f"R.{op}(x, keepdims=True)") == t("(1, 1, 1)", dtype)


def test_median_pairs_indices_only_with_one_axis():
    params = f"x: {t('(2, 3, 4)')}"
    assert infer(params, "R.median(x, axis=[0, 2])") == t("(3,)")
    assert infer(params, "R.median(x, axis=[1])") == (
        f"R.Tuple({t('(2, 4)')}, {t('(2, 4)', 'int64')})"
    )


def test_matmul_with_undecided_batch_dims_keeps_the_rank_only():
    # batch dims b and 7 cannot be decided: TVM stops there, before the reduction lengths
    params = "x: " + t('("b", 3, 4)') + ", y: " + t("(7, 5, 6)")
    assert infer(params, "R.matmul(x, y)") == 'R.Tensor(dtype="float32", ndim=3)'
    params = f"x: {t('(2, 3, 4)')}, y: {t('(2, 5, 6)')}"
    assert "inner dimensions differ" in refused(params, "R.matmul(x, y)")
    params = f"x: R.Tensor((3, 4)), y: {t('(4, 5)')}"
    assert infer(params, "R.matmul(x, y)") == "R.Tensor((3, 5))"


def test_permute_dims_with_axes_needs_a_known_rank():
    params = 'x: R.Tensor(dtype="float32")'
    assert "known rank" in refused(params, "R.permute_dims(x, axes=[1, 0])")
    assert infer(params, "R.permute_dims(x)") == 'R.Tensor(dtype="float32")'


def test_comparison_of_two_dtypes_compares_the_promoted_operands():
    import numpy as np

    from tvmlite import build

    params = f"x: {t('(2, 3)')}, m: {t('(3,)', 'bool')}, h: {t('(2, 3)', 'float16')}"
    text = source(params, "R.greater(m, x)").replace(
        "    return lv", "    lv2 = R.less_equal(x, h)\n    return (lv, lv2)"
    )
    ex = build(parse(text), target="llvm")
    x = np.array([[-1.0, 0.5, 2.0], [0.0, 1.0, 0.25]], "float32")
    m = np.array([True, False, True])
    h = (x + np.float32(0.1)).astype("float16")
    gt, le = ex["main"](x, m, h)
    np.testing.assert_array_equal(gt, m.astype("float32") > x)
    np.testing.assert_array_equal(le, x <= h.astype("float32"))
