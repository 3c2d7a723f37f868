"""Outputs sized at run time (nonzero, unique, dynamic_strided_slice): the
count -> `R.tensor_to_shape` -> `R.match_cast` -> fill pattern LegalizeOps emits,
the sharper var later operators see, and `R.tensor_to_shape` in host code."""

from __future__ import annotations

import numpy as np
import pytest
from relax_text import dataflow_main

import tvmlite
from tvmlite.dsl import relax
from tvmlite.transform import LegalizeOps

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"


def _module(params: str, body: str, ret: str = 'R.Tensor(dtype="int64", ndim=2)') -> str:
    return dataflow_main(params, ret, body, HEADER)


NONZERO_THEN_ADD = _module(
    'x: R.Tensor((2, 3), dtype="float32")',
    "nz = R.nonzero(x)\ngv = R.add(nz, nz)\nR.output(gv)",
)


def test_nonzero_binds_its_count_with_match_cast() -> None:
    main = LegalizeOps()(tvmlite.parse(NONZERO_THEN_ADD)).functions["main"]
    bindings = [b for block in main.body.blocks for b in block.bindings]
    (cast,) = [b for b in bindings if isinstance(b, relax.MatchCast)]
    (dim,) = cast.struct_info.values
    assert dim.name == "num_nonzero"
    ops = [b.value.op.name for b in bindings if isinstance(b.value, relax.Call)]
    assert ops == ["relax.call_tir", "relax.tensor_to_shape", "relax.call_tir", "relax.call_tir"]
    # The nonzero var is re-bound with the run-time shape, so `R.add` was legalized.
    nz = bindings[3].var
    assert nz.name == "nz" and nz.struct_info.shape[1] is dim
    assert bindings[4].value.args[1].fields == (nz, nz)


def test_nonzero_result_feeds_later_operators() -> None:
    ex = tvmlite.build(tvmlite.parse(NONZERO_THEN_ADD))
    x = np.array([[0, 1, 0], [2, 0, 3]], "float32")
    np.testing.assert_array_equal(ex["main"](x), 2 * np.stack(np.nonzero(x)))
    assert ex["main"](np.zeros((2, 3), "float32")).shape == (2, 0)


def test_legalized_nonzero_prints_and_parses_back() -> None:
    mod = LegalizeOps()(tvmlite.parse(NONZERO_THEN_ADD))
    text = mod.script()
    assert "R.match_cast(" in text and "R.tensor_to_shape(" in text
    assert tvmlite.structural_equal(tvmlite.parse(text), mod)


TO_SHAPE = """\
@I.ir_module
class Module:
    @R.function
    def main(t: R.Tensor((2,), dtype="int64")) -> R.Tensor(dtype="float32", ndim=2):
        a = T.int64()
        b = T.int64()
        s = R.tensor_to_shape(t)
        s2 = R.match_cast(s, R.Shape([a, b]))
        z = R.zeros(s2, "float32")
        return z
"""


def test_tensor_to_shape_sizes_an_allocation() -> None:
    ex = tvmlite.build(tvmlite.parse(HEADER + TO_SHAPE))
    assert ex["main"](np.array([2, 3])).shape == (2, 3)
    assert ex["main"](np.array([0, 4])).shape == (0, 4)
    with pytest.raises(tvmlite.TVMLiteError, match="negative"):
        ex["main"](np.array([2, -3]))
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 't': expected dtype int64"):
        ex["main"](np.array([2, 3], "int32"))


@pytest.mark.parametrize(
    ("sig", "message"),
    [
        ('R.Tensor((2,), dtype="float32")', "input must have dtype int64"),
        ('R.Tensor((2, 2), dtype="int64")', "input must be 1-d"),
    ],
)
def test_tensor_to_shape_rejects_what_is_no_shape(sig: str, message: str) -> None:
    src = HEADER + TO_SHAPE.replace('R.Tensor((2,), dtype="int64")', sig)
    with pytest.raises(tvmlite.ParseError, match=message):
        tvmlite.parse(src)


def test_tensor_to_shape_needs_a_known_length() -> None:
    src = HEADER + TO_SHAPE.replace('R.Tensor((2,), dtype="int64")', 'R.Tensor(("n",), "int64")')
    with pytest.raises(tvmlite.TVMLiteError, match="1-d tensor of known length"):
        tvmlite.build(tvmlite.parse(src))


def _slice_module(bounds: str = 'R.Tensor((2,), "int64")') -> str:
    params = f'x: R.Tensor((8, 9), "float32"), b: {bounds}, e: {bounds}, s: {bounds}'
    body = "gv = R.dynamic_strided_slice(x, b, e, s)\nR.output(gv)"
    return _module(params, body, 'R.Tensor(dtype="float32", ndim=2)')


def test_dynamic_strided_slice_binds_one_dim_per_axis() -> None:
    main = LegalizeOps()(tvmlite.parse(_slice_module())).functions["main"]
    bindings = [b for block in main.body.blocks for b in block.bindings]
    (cast,) = [b for b in bindings if isinstance(b, relax.MatchCast)]
    dims = cast.struct_info.values
    assert len(dims) == 2 and dims[0] is not dims[1]
    assert bindings[-1].var.struct_info.shape == dims


def test_dynamic_strided_slice_with_symbolic_input_and_computed_bounds() -> None:
    params = 'x: R.Tensor(("n", 9), "float32"), b: R.Tensor((2,), "int64")'
    body = (
        "e = R.add(b, R.const(3, 'int64'))\ngv = R.dynamic_strided_slice(x, b, e, b)\nR.output(gv)"
    )
    ex = tvmlite.build(tvmlite.parse(_module(params, body, 'R.Tensor(dtype="float32", ndim=2)')))
    x = np.arange(54, dtype="float32").reshape(6, 9)
    b = np.array([1, 2])
    np.testing.assert_array_equal(ex["main"](x, b), x[1:4:1, 2:5:2])


@pytest.mark.parametrize("strides", [[0, 1], [2, 0]])
def test_dynamic_strided_slice_rejects_a_zero_stride(strides: list[int]) -> None:
    ex = tvmlite.build(tvmlite.parse(_slice_module()))
    x, b, e = np.zeros((8, 9), "float32"), np.array([0, 0]), np.array([8, 9])
    axis = strides.index(0)
    with pytest.raises(tvmlite.TVMLiteError, match=f"strides must not be zero, axis {axis}"):
        ex["main"](x, b, e, np.array(strides))


def test_dynamic_strided_slice_checks_bounds_of_unknown_length() -> None:
    ex = tvmlite.build(tvmlite.parse(_slice_module('R.Tensor(("k",), "int64")')))
    x = np.arange(72, dtype="float32").reshape(8, 9)
    one = np.array([1, 1])
    np.testing.assert_array_equal(ex["main"](x, one * 0, one * 5, one), x[:5, :5])
    with pytest.raises(tvmlite.TVMLiteError, match="begin needs 2 entries, one per axis"):
        ex["main"](x, one[:1] * 0, one[:1] * 5, one[:1])


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ('R.Tensor((3,), "int64")', "begin needs one entry per axis"),
        ('R.Tensor((2,), "float32")', "begin must have dtype int64, got float32"),
        ('R.Tensor((2,), "int32")', "begin must have dtype int64, got int32"),
        ('R.Tensor((2, 1), "int64")', "begin must be 1-d, got rank 2"),
    ],
)
def test_dynamic_strided_slice_rejects_bad_bounds(bounds: str, message: str) -> None:
    with pytest.raises(tvmlite.ParseError, match=message):
        tvmlite.parse(_slice_module(bounds))


UNIQUE_COUNTS = _module(
    'x: R.Tensor((3, 4), "int32")',
    "u = R.unique(x, sorted=False, return_counts=True, axis=1)\n"
    "c = u[1]\ngv = R.multiply(c, c)\nR.output(gv)",
    'R.Tensor(dtype="int64", ndim=1)',
)


def test_unique_sizes_its_outputs_by_the_counted_runs() -> None:
    mod = LegalizeOps()(tvmlite.parse(UNIQUE_COUNTS))
    assert {"unique_order", "unique", "multiply"} <= set(mod.functions)
    main = mod.functions["main"]
    bindings = [b for block in main.body.blocks for b in block.bindings]
    (cast,) = [b for b in bindings if isinstance(b, relax.MatchCast)]
    (dim,) = cast.struct_info.values
    u = next(b.var for b in bindings if b.var.name == "u")
    values, counts = u.struct_info.fields
    assert values.shape[1] is dim and counts.shape == (dim,)
    x = np.array([[1, 0, 1, 2], [3, 0, 3, 2], [1, 1, 1, 1]], "int32")
    got = tvmlite.build(tvmlite.parse(UNIQUE_COUNTS))["main"](x)
    np.testing.assert_array_equal(got, [4, 1, 1])  # columns 0 and 2 are equal


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("R.unique(x, axis=2)", "axis 2 is out of range for a tensor of rank 2"),
        ("R.unique(x, axis=-3)", "axis -3 is out of range"),
    ],
)
def test_unique_rejects_a_bad_axis(call: str, message: str) -> None:
    src = _module('x: R.Tensor((3, 4), "int32")', f"gv = {call}\nR.output(gv)", "R.Tensor")
    with pytest.raises(tvmlite.ParseError, match=message):
        tvmlite.parse(src)


def _var_len_module(q: str = "(1, 6, 2, 4)", starts: str = '(3,), "int32"', attrs: str = "") -> str:
    params = (
        f'q: R.Tensor({q}, "float32"), k: R.Tensor((1, 5, 2, 4), "float32"), '
        f'v: R.Tensor((1, 5, 2, 3), "float32"), sq: R.Tensor({starts}), '
        f'sk: R.Tensor({starts}), m: R.Tensor((), "int32")'
    )
    body = f"gv = R.nn.attention_var_len(q, k, v, sq, m, sk, m{attrs})\nR.output(gv)"
    return _module(params, body, 'R.Tensor(dtype="float32", ndim=4)')


@pytest.mark.parametrize(
    ("starts_q", "starts_k", "message"),
    [
        ([0, 4, 3], [0, 2, 5], "seqstart_q must be offsets rising within \\[0, 6\\]"),
        ([0, 3, 7], [0, 2, 5], "seqstart_q must be offsets rising within \\[0, 6\\]"),
        ([-1, 3, 6], [0, 2, 5], "seqstart_q must be offsets rising"),
        ([0, 3, 6], [0, 6, 5], "seqstart_k must be offsets rising within \\[0, 5\\]"),
    ],
)
def test_attention_var_len_checks_its_offsets(
    starts_q: list[int], starts_k: list[int], message: str
) -> None:
    ex = tvmlite.build(tvmlite.parse(_var_len_module()))
    q, k, v = (
        np.ones((1, 6, 2, 4), "float32"),
        np.ones((1, 5, 2, 4), "float32"),
        np.ones((1, 5, 2, 3), "float32"),
    )
    ok = ex["main"](
        q, k, v, np.array([0, 3, 6], "int32"), np.array([0, 2, 5], "int32"), np.array(3, "int32")
    )
    np.testing.assert_allclose(ok, np.ones((1, 6, 2, 3)), rtol=1e-6)
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        ex["main"](
            q, k, v, np.array(starts_q, "int32"), np.array(starts_k, "int32"), np.array(3, "int32")
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"attrs": ", window_size=2"}, 'window_size needs causal_mask="BottomRight"'),
        ({"attrs": ', causal_mask="TopLeft", window_size=2'}, "window_size needs"),
        ({"q": "(2, 6, 2, 4)"}, "queries must have batch size 1"),
        ({"q": "(1, 6, 3, 4)"}, "query heads \\(3\\) must be a multiple of key heads \\(2\\)"),
        ({"q": "(6, 2, 4)"}, "must be 4-d"),
        ({"starts": '(3,), "float32"'}, "seqstart_q must have an integer dtype"),
        ({"starts": '(3, 1), "int32"'}, "seqstart_q must be 1-d"),
    ],
)
def test_attention_var_len_rejects_bad_calls(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(tvmlite.ParseError, match=message):
        tvmlite.parse(_var_len_module(**kwargs))


def test_attention_var_len_prints_what_reads_back_the_same() -> None:
    """TVM prints the arguments in operator order, which a positional reading of
    its signature misplaces; tvmlite names them from `seqstart_k` on."""
    mod = tvmlite.parse(_var_len_module())
    text = mod.script()
    assert (
        "R.nn.attention_var_len(q, k, v, sq, seqstart_k=sk, max_seqlen_q=m, max_seqlen_k=m" in text
    )
    again = tvmlite.parse(text)
    assert tvmlite.structural_equal(again, mod)
    call = again.functions["main"].body.blocks[0].bindings[0].value
    assert [a.name for a in call.args[3:]] == ["sq", "sk", "m", "m"]
