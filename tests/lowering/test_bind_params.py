"""Parameters bound by name: `transform.BindParams(func, params)` (TVM's pass) and
`build(mod, params=...)`, from a dict or an `.npz` file, checked against the
signature with located errors; the entry then takes only the data inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite import transform
from tvmlite.lowering.cache import entries as cache
from tvmlite.lowering.target import Target

MODELS = Path(__file__).resolve().parents[2] / "examples"  # conv_bn.*: examples/make_conv_bn.py
LINEAR = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((4, "m"), dtype="float32"), b: R.Tensor(("m",), dtype="float32")) -> R.Tensor(("n", "m"), dtype="float32"):
        R.func_attr({"num_input": 1})
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.add(y, b)
            R.output(z)
        return z
"""
RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 6)).astype("float32")
B = RNG.standard_normal(6).astype("float32")
X = RNG.standard_normal((3, 4)).astype("float32")


def _linear() -> tvmlite.IRModule:
    return tvmlite.parse(LINEAR, "linear.tvms")


def test_bound_function_takes_the_data_inputs():
    bound = transform.BindParams("main", {"w": W, "b": B})(_linear())
    main = bound["main"]
    assert [p.name for p in main.params] == ["x"]
    assert main.attr("num_input") == 1
    assert "m = T.int64()" not in bound.script()  # every use of m is 6 now
    assert 'R.Tensor((n, 6), dtype="float32")' in bound.script()
    np.testing.assert_allclose(tvmlite.build(bound)["main"](X), X @ W + B, rtol=1e-5)
    np.testing.assert_allclose(
        tvmlite.build(_linear(), params={"w": W, "b": B})["main"](X), X @ W + B, rtol=1e-5
    )


def test_params_from_a_file_and_by_var(tmp_path):
    path = tmp_path / "weights.npz"
    np.savez(path, w=W, b=B)
    ex = tvmlite.build(_linear(), params=path)
    np.testing.assert_allclose(ex["main"](X), X @ W + B, rtol=1e-5)
    mod = _linear()
    w_var = mod["main"].params[1]
    bound = transform.BindParams("main", {w_var: W})(mod)
    assert [p.name for p in bound["main"].params] == ["x", "b"]
    np.testing.assert_allclose(tvmlite.build(bound)["main"](X, B), X @ W + B, rtol=1e-5)


def test_binding_data_inputs_lowers_num_input():
    bound = transform.BindParams("main", {"x": X})(_linear())
    assert [p.name for p in bound["main"].params] == ["w", "b"]
    assert bound["main"].attr("num_input") == 0


def test_tvm_printed_model_with_weights_from_a_file():
    """TVM's print of a PyTorch conv + BatchNorm (its BatchNorm statistics are constants
    from the constants file beside it) against PyTorch's output."""
    mod = tvmlite.parse_file(MODELS / "conv_bn.tvms")
    io = np.load(MODELS / "conv_bn.io.npz")
    ex = tvmlite.build(mod, params=MODELS / "conv_bn.params.npz")
    (out,) = ex["main"](io["x"])
    np.testing.assert_allclose(out, io["out"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("params", "why"),
    [
        (
            {"w": W[:3]},
            "parameter 'w' of 'main' has 4 at axis 0, bound to an array of dtype float32 and shape (3, 6)",
        ),
        (
            {"w": W.astype("float64")},
            "parameter 'w' of 'main' is declared float32, bound to an array of dtype float64",
        ),
        ({"w": W[None]}, "parameter 'w' of 'main' is declared of rank 2"),
        (
            {"w": W, "b": B[:5]},
            "parameter 'b' of 'main' has m = 5 at axis 0 (an array of dtype float32 and shape (5,)), but another bound parameter has m = 6",
        ),
    ],
)
def test_a_mismatch_is_located_at_the_parameter(params, why):
    with pytest.raises(tvmlite.VerifyError) as info:
        transform.BindParams("main", params)(_linear())
    assert why in info.value.message
    name = why.split("'")[1]
    line = LINEAR.splitlines()[info.value.span.line - 1]
    assert line[info.value.span.column - 1 :].startswith(f"{name}: R.Tensor(")
    assert str(info.value).startswith("linear.tvms:5:")


def test_wrong_names_and_values():
    mod = _linear()
    with pytest.raises(
        tvmlite.TVMLiteError, match=r"no parameter named 'q' \(its parameters: x, w, b\)"
    ):
        transform.BindParams("main", {"q": W})(mod)
    with pytest.raises(tvmlite.TVMLiteError, match="no graph function 'forward'"):
        transform.BindParams("forward", {"w": W})(mod)
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'w' of 'main' is bound twice"):
        transform.BindParams("main", {"w": W, mod["main"].params[1]: W})(mod)
    with pytest.raises(tvmlite.TVMLiteError, match="parameter 'w': an array of dtype <U3"):
        transform.BindParams("main", {"w": "abc"})
    with pytest.raises(tvmlite.TVMLiteError, match="params must map parameter names to arrays"):
        tvmlite.build(mod, params=[W, B])


def test_only_tensors_are_bound():
    text = LINEAR.replace(
        'b: R.Tensor(("m",), dtype="float32")', 'b: R.Tuple(R.Tensor(("m",), dtype="float32"))'
    ).replace("R.add(y, b)", "R.add(y, b[0])")
    with pytest.raises(tvmlite.VerifyError, match="parameter 'b' of 'main' is not a tensor"):
        transform.BindParams("main", {"b": B})(tvmlite.parse(text))


def test_the_cache_key_tells_weights_apart():
    target = Target("llvm")
    one = transform.BindParams("main", {"w": W, "b": B})(_linear())
    same = transform.BindParams("main", {"w": W.copy(), "b": B.copy()})(_linear())
    other = W.copy()
    other[3, 5] += 1.0
    changed = transform.BindParams("main", {"w": other, "b": B})(_linear())
    key = cache.cache_key(one, target, None)
    assert key == cache.cache_key(same, target, None)
    assert key != cache.cache_key(changed, target, None)
    in_pipeline = [transform.BindParams("main", {"w": W})]
    described = cache.cache_key(_linear(), target, in_pipeline)
    assert described is not None and "abc" not in repr(in_pipeline[0].params)
    moved = [transform.BindParams("main", {"w": other})]
    assert described != cache.cache_key(_linear(), target, moved)
