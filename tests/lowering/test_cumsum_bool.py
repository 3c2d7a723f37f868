"""`R.cumsum` of bools counts in int64, as PyTorch and NumPy do; TVM 0.27 types it
bool (GPT-2 called without an attention mask has one), which no scan can
accumulate in: such a text is refused where it says so, with the reason."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite

SCAN = """
@R.function
def main(x: R.Tensor((2, 6), "bool")):
    y = R.cumsum(x, axis=1)
    z = R.cumsum(x, axis=1, exclusive=True)
    return (y, z)
"""
MASK = np.array([[True, False, True, True, False, True], [False] * 6])


def test_a_scan_of_bools_counts_in_int64():
    mod = tvmlite.parse(SCAN)
    assert 'R.Tensor((2, 6), dtype="int64") = R.cumsum(x, axis=1' in mod.script()
    counts, before = tvmlite.build(mod)["main"](MASK)
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts, np.cumsum(MASK, axis=1))
    np.testing.assert_array_equal(before, np.cumsum(MASK, axis=1) - MASK)


def test_tvm_typed_bool_scan_is_refused_with_the_reason():
    text = """
@R.function
def main(x: R.Tensor((1, 4), "bool")) -> R.Tensor((1, 4), "bool"):
    with R.dataflow():
        lv: R.Tensor((1, 4), dtype="bool") = R.cumsum(x, axis=-1, dtype=None, exclusive=False)
        R.output(lv)
    return lv
"""
    with pytest.raises(tvmlite.VerifyError) as info:
        tvmlite.build(tvmlite.parse(text, "gpt2.tvms"))
    assert str(info.value).startswith("gpt2.tvms:5:9: error: lv is annotated R.Tensor((1, 4), ")
    assert "cumsum of bools runs in int64, as in PyTorch and NumPy" in info.value.message
    asked = text.replace("dtype=None", 'dtype="bool"').replace(
        'lv: R.Tensor((1, 4), dtype="bool") =', "lv ="
    )
    with pytest.raises(tvmlite.TVMLiteError, match=r"R.cumsum .* \(cumsum accumulating in bool\)"):
        tvmlite.build(tvmlite.parse(asked, "gpt2.tvms"))
