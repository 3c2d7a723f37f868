"""The Relax constructs of the wider TVMScript surface (issue 12) that compute on a
CPU build and run; their texts are the goldens in tests/golden/relax_surface (printed
by TVM 0.27), the expected values what TVM 0.27 computes for them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl.verify.relax import verify_module
from tvmlite.runtime.registry import remove_global_func

GOLDEN = Path(__file__).parents[1] / "golden" / "relax_surface"


def _build(name: str) -> tvmlite.Executable:
    return tvmlite.build(tvmlite.parse((GOLDEN / name).read_text()))


@pytest.fixture
def packed_funcs():  # noqa: ANN201 - a fixture generator
    seen: list[np.ndarray] = []
    tvmlite.register_func("my_reshape", lambda x, s: x.reshape(tuple(s)) * 2, override=True)
    tvmlite.register_func("my_log", lambda y: seen.append(y.copy()), override=True)
    yield seen
    remove_global_func("my_reshape")
    remove_global_func("my_log")


def test_call_packed_without_ty_args_takes_the_binding_annotation(packed_funcs) -> None:
    x = np.arange(6, dtype="float32").reshape(2, 3)
    out = _build("call_packed_untyped.tvms")["main"](x)
    np.testing.assert_array_equal(out, x.reshape(6) * 2)
    assert len(packed_funcs) == 1  # the R.Any-typed call ran for its effect
    np.testing.assert_array_equal(packed_funcs[0], x.reshape(6) * 2)


def test_vdevice_annotated_module_runs_on_the_cpu() -> None:
    a = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(_build("global_infos_vdevice.tvms")["main"](a, a), a + a)


@pytest.mark.parametrize("pipeline", ["minimal", "default"])
def test_gradient_checkpoint_marks_compute_the_identity(pipeline: str) -> None:
    x = np.arange(9, dtype="float32").reshape(3, 3)
    mod = tvmlite.parse((GOLDEN / "grad_checkpoint.tvms").read_text())
    out = tvmlite.build(mod, pipeline=pipeline)["main"](x)
    np.testing.assert_array_equal(out, x * x + x)  # TVM 0.27: [[0, 2, 6], [12, 20, 30], ...]


def test_closure_build_names_the_local_function() -> None:
    # TVM 0.27 rejects it too (VMShapeLower runs only after LambdaLift)
    with pytest.raises(tvmlite.TVMLiteError, match=r"local function \(closure\) 'scale'"):
        _build("closure.tvms")


def test_closure_of_a_module_function_stops_the_build_by_name() -> None:
    # TVM 0.27 runs it ([[1, 2, 3], [4, 5, 6]] and [[1, 3, 5], [7, 9, 11]] for x = arange,
    # y = ones); host code has no closure values yet
    with pytest.raises(tvmlite.TVMLiteError, match=r"operator R\.make_closure \(bound to 'clo'\)"):
        _build("closure_global.tvms")


def test_symbolic_comparisons_branch_and_assert_at_run_time() -> None:
    main = _build("compare_symbolic.tvms")["main"]
    x = np.arange(6, dtype="float32") + 1
    np.testing.assert_array_equal(main(x[:2]), x[:2] + x[:2])  # n < 4
    np.testing.assert_array_equal(main(x), x * x)
    with pytest.raises(tvmlite.TVMLiteError, match="main: n must be even"):  # TVM's message
        main(np.ones(3, "float32"))


ASSERT_WITH_VALUES = """
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        R.assert_op(n < 3, R.prim_value(n), format=R.str("{} is too long (100%)"))
        return x
"""


def test_assert_op_fills_its_format_from_integer_scalars() -> None:
    main = tvmlite.build(tvmlite.parse(ASSERT_WITH_VALUES))["main"]
    np.testing.assert_array_equal(main(np.ones(2, "float32")), np.ones(2, "float32"))
    with pytest.raises(tvmlite.TVMLiteError, match=r"main: 5 is too long \(100%\)"):
        main(np.ones(5, "float32"))


def test_comparing_relax_tensors_points_at_the_ops() -> None:
    text = ASSERT_WITH_VALUES.replace("n < 3", "x < x")
    with pytest.raises(tvmlite.ParseError, match="compare Relax values with R.equal"):
        tvmlite.parse(text)


def test_unit_statement_binds_the_empty_tuple() -> None:
    y, unit = _build("unit_statement.tvms")["main"](np.ones(2, "float32"))
    np.testing.assert_array_equal(y, [2.0, 2.0])  # TVM 0.27: (float32[2], ())
    assert unit == ()


def test_take_with_a_scalar_index_drops_the_axis() -> None:
    a = np.arange(12, dtype="float32").reshape(3, 4)
    out = _build("take_scalar_index.tvms")["main"](a)
    np.testing.assert_array_equal(out, a[1] + a[2])  # TVM 0.27: [12, 14, 16, 18]


def test_take_scalar_index_on_1d_data_gives_a_scalar_tensor() -> None:
    text = """
@I.ir_module
class Module:
    @R.function
    def main(A: R.Tensor((5,), dtype="int32")) -> R.Tensor((), dtype="int32"):
        b: R.Tensor((), dtype="int32") = R.take(A, 3)
        return b
"""
    out = tvmlite.build(tvmlite.parse(text))["main"](np.arange(5, dtype="int32") * 10)
    assert out.shape == () and out == 30


def test_0d_constants_come_back_0d() -> None:
    c, d = _build("const_0d.tvms")["main"]()
    assert c.shape == () and d.shape == ()  # TVM 0.27: array(1.5), array(7)
    assert c.dtype == np.float32 and c == 1.5
    assert d.dtype == np.int32 and d == 7


def test_infinite_constants_compute() -> None:
    x = np.array([1, -2, np.inf], "float32")
    out = _build("const_infinite.tvms")["main"](x)
    np.testing.assert_array_equal(out, x)  # TVM 0.27 on [1, -2, 3]: [1, -2, 3]


def test_shape_of_size_and_null_value_lower_natively() -> None:
    s, k, y = _build("builtins_shape_size_null.tvms")["main"](np.ones((4, 3), "float32"))
    assert tuple(s) == (4, 3)  # TVM 0.27: (4, 3) 12 24.0
    assert k.shape == () and k.dtype == np.int64 and k == 12
    assert y.sum() == 24.0


def test_hint_on_device_is_the_identity_on_the_cpu_and_an_error_elsewhere() -> None:
    mod = tvmlite.parse((GOLDEN / "hint_on_device.tvms").read_text())
    x = np.ones((2, 3), "float32")
    cpu_only = tvmlite.IRModule({"main": mod["main"]})
    np.testing.assert_array_equal(tvmlite.build(cpu_only)["main"](x), x + x)
    with pytest.raises(tvmlite.TVMLiteError, match="R.hint_on_device to device type 2"):
        tvmlite.build(mod)


@pytest.mark.parametrize("name", ["grad_backward_ops.tvms", "grad_pool_backward.tvms"])
def test_gradient_backward_ops_without_a_lowering_stop_the_build_by_name(name: str) -> None:
    mod = tvmlite.parse((GOLDEN / name).read_text())
    with pytest.raises(tvmlite.TVMLiteError, match=r"operator R\.grad\.\w+_backward"):
        tvmlite.build(mod)


def test_distributed_tensors_are_refused_by_a_build_where_written() -> None:
    text = (GOLDEN / "distributed.tvms").read_text()
    mod = tvmlite.parse(text, filename="distributed.tvms")
    with pytest.raises(tvmlite.TVMLiteError) as info:
        tvmlite.build(mod)
    line = next(k for k, s in enumerate(text.splitlines(), 1) if "def main(" in s)
    assert str(info.value).startswith(f"distributed.tvms:{line}:")
    assert "distributed tensors (R.DTensor over 'mesh[0]') cannot be built" in str(info.value)


def test_call_tir_with_grad_stops_the_build_by_name() -> None:
    # TVM 0.27 too: "CodeGenVM cannot emit this Relax operator directly"
    mod = tvmlite.parse((GOLDEN / "call_tir_with_grad.tvms").read_text())
    assert dict(mod["main"].body.blocks[0].bindings[0].value.attrs)["te_grad_kwargs"] == {
        "axis": 1,
        "k": 2.0,
    }
    with pytest.raises(
        tvmlite.TVMLiteError, match=r"operator R\.call_tir_with_grad \(bound to 'y'\)"
    ):
        tvmlite.build(mod)


def test_tensor_inspection_stops_the_build_by_name() -> None:
    mod = tvmlite.parse((GOLDEN / "inspect_fields.tvms").read_text())
    with pytest.raises(tvmlite.TVMLiteError, match=r"operator R\.inspect\.tensor_ndim"):
        tvmlite.build(mod)


def test_pools_in_a_tiled_layout_compute_per_channel_block() -> None:
    """NCHW4c: channel c*4+k lives at [:, c, :, :, k]; the windows slide over H and W
    (TVM 0.27 computes the same values for this module)."""
    x = np.arange(200, dtype="float32").reshape(1, 2, 5, 5, 4) / 7
    y, z, a = _build("pool_tiled_layout.tvms")["main"](x)
    planar = x.transpose(0, 1, 4, 2, 3).reshape(1, 8, 5, 5)  # NCHW with 8 channels
    windows = np.lib.stride_tricks.sliding_window_view(planar, (3, 3), axis=(2, 3))
    expect_max = windows.max(axis=(4, 5))
    expect_avg = planar[:, :, :4, :4].reshape(1, 8, 2, 2, 2, 2).mean(axis=(3, 5))

    def tiled(t: np.ndarray) -> np.ndarray:  # back from NCHW4c to NCHW
        n, c, h, w, k = t.shape
        return t.transpose(0, 1, 4, 2, 3).reshape(n, c * k, h, w)

    np.testing.assert_allclose(tiled(y), expect_max, rtol=1e-6)
    np.testing.assert_allclose(tiled(z), expect_avg, rtol=1e-6)
    np.testing.assert_allclose(tiled(a)[:, :, 0, 0], planar.mean(axis=(2, 3)), rtol=1e-6)


def test_vision_ops_build_except_the_all_class_suppression() -> None:
    """`main` chains valid counts, both suppressions and the ROI ops over a symbolic
    number of regions (TVM 0.27 computes the same values: the per-op numerics are
    tests/lowering/op_cases_vision.py); `detect` stops at the ONNX-style suppression."""
    mod = tvmlite.parse((GOLDEN / "vision_ops.tvms").read_text())
    with pytest.raises(tvmlite.TVMLiteError, match=r"R\.vision\.all_class_non_max_suppression"):
        tvmlite.build(tvmlite.IRModule({"detect": mod["detect"]}))
    main = tvmlite.build(tvmlite.IRModule({"main": mod["main"]}))["main"]
    data = np.random.default_rng(0).uniform(0, 1, (2, 5, 6)).astype("float32")
    x = np.ones((1, 2, 8, 8), "float32")
    rois = np.array([[0, 1, 1, 5, 6], [0, 0, 0, 3, 3], [0, 2, 2, 7, 7]], "float32")
    boxes, (soft, indices, count), aligned, pooled = main(data, x, rois)
    assert boxes.shape == soft.shape == (2, 5, 6) and indices.shape == (2, 5)
    assert count.shape == (2, 1) and 1 <= count.min() and count.max() <= 5
    np.testing.assert_allclose(aligned, np.ones((3, 2, 3, 3)), rtol=1e-6)  # max of ones
    np.testing.assert_array_equal(pooled, np.ones((3, 2, 2, 4)))


def test_a_scalar_parameter_is_the_symbolic_var_of_later_shapes() -> None:
    main = _build("scalar_param_in_shapes.tvms")["main"]
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(main(3, x, (3,)), x + x)  # TVM 0.27: [0, 2, 4, 6]
    with pytest.raises(tvmlite.TVMLiteError, match=r"parameter 'x': expected shape \(n \+ 1,\)"):
        main(2, x, (2,))  # TVM 0.27: shape[0] mismatch (4 vs. 3)


def test_distributed_constants_keep_their_placement() -> None:
    mod = tvmlite.parse((GOLDEN / "dist_const.tvms").read_text())
    (binding,) = mod["main"].body.blocks[0].bindings[:1]
    const = binding.value.args[1]
    assert const.data.shape == () and const.data.dtype == np.float16 and const.data == 0.5
    assert const.struct_info.placement == "R" and const.struct_info.device_mesh == "mesh[0]"
    plain = tvmlite.parse(
        (GOLDEN / "dist_const.tvms")
        .read_text()
        .replace(
            'R.dist.const(0.5, R.DTensor((), "float16", "mesh[0]", "R"))', 'R.const(0.5, "float16")'
        )
    )
    assert not tvmlite.structural_equal(plain, mod)


@pytest.mark.parametrize("pipeline", ["minimal", "default"])
def test_dataflow_blocks_inside_branches_compute(pipeline: str) -> None:
    mod = tvmlite.parse((GOLDEN / "dataflow_in_branch.tvms").read_text())
    main = tvmlite.build(mod, pipeline=pipeline)["main"]
    x = np.array([1, 2, 3], "float32")
    np.testing.assert_array_equal(main(x, np.array(True)), [2, 8, 18])  # TVM 0.27
    np.testing.assert_array_equal(main(x, np.array(False)), [0, 0, 0])


def test_a_dataflow_block_inside_another_is_refused() -> None:
    text = (GOLDEN / "dataflow_in_branch.tvms").read_text()
    nested = text.replace(
        "                R.output(a)\n",
        "                with R.dataflow():\n                    e = R.add(a, a)\n"
        "                    R.output(e)\n                R.output(a)\n",
    )
    with pytest.raises(tvmlite.ParseError, match="a dataflow block cannot be nested in another"):
        tvmlite.parse(nested)


def test_split_points_are_clamped_as_tvm_infers_and_unsorted_ones_are_not_built() -> None:
    mod = tvmlite.parse((GOLDEN / "split_unsorted_points.tvms").read_text())
    verify_module(mod)  # the annotations TVM printed are the inferred sizes: 0, 3, 0, 5, 0
    # TVM 0.27 refuses to build it too ("split_indices must be sorted")
    with pytest.raises(tvmlite.TVMLiteError, match=r"operator R\.split \(bound to 'gv'\)"):
        tvmlite.build(mod)


def test_scalar_arithmetic_is_tir_arithmetic_on_the_bound_vars() -> None:
    main = _build("scalar_arithmetic.tvms")["main"]
    assert int(main(5, 3)) == 13  # TVM 0.27: 13 and -20 (`//` floors)
    assert int(main(-7, 4)) == -20


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("impure_call_in_pure", r"11:46: error: R.call_packed\('my_func'\) has side effects, but "),
        ("renamed", r'15:5: error: function renamed has global_symbol "other_name"'),
        # R.equal of int64 and int32 compares the promoted operands (TVM does too): the
        # build refuses the arithmetic after it
        ("two_dtypes", r"22:22: error: R.subtract: operands must have the same dtype, got int64"),
    ],
)
def test_what_tvm_parses_unchecked_is_refused_by_the_build_where_written(
    function: str, message: str
) -> None:
    text = (GOLDEN / "refused_at_build.tvms").read_text()
    mod = tvmlite.parse(text, filename="m.tvms", check_well_formed=False)
    one = tvmlite.IRModule({function: mod.functions[function]}, dialect=mod.dialect)
    with pytest.raises(tvmlite.TVMLiteError, match="m.tvms:" + message):
        tvmlite.build(one)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("foreign_op", r"T.my_ops.fused_matmul is an operator registered outside Relax"),
        ("missing_callee", r"call of unknown function helper"),
        ("py_func", r"operator R.call_py_func \(bound to 'y'\) cannot be compiled"),
        ("unbound", r"gv is used but nothing binds it"),
    ],
)
def test_what_tvm_only_prints_stops_the_build_by_name(function: str, message: str) -> None:
    mod = tvmlite.parse((GOLDEN / "printed_by_tvm_only.tvms").read_text(), check_well_formed=False)
    one = tvmlite.IRModule({function: mod.functions[function]}, dialect=mod.dialect)
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        tvmlite.build(one)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("greeting", r"struct info StringStructInfo, which compiled code cannot pass"),
        ("shape_of_unknown_rank", r"a shape dimension must not be negative, got -1"),
        ("view_as_float8", r"operator R.memory.view \(bound to 'b'\) cannot be compiled"),
    ],
)
def test_strings_float8_and_negative_dims_stop_the_build_by_name(
    function: str, message: str
) -> None:
    mod = tvmlite.parse((GOLDEN / "string_float8_negative_dim.tvms").read_text())
    one = tvmlite.IRModule({function: mod.functions[function]}, dialect=mod.dialect)
    with pytest.raises(tvmlite.TVMLiteError, match=message):
        tvmlite.build(one)


def test_float8_tensors_parse_and_the_llvm_backend_names_the_dtype() -> None:
    """TVM's generic 8-bit float: parsed and printed; no CPU code for it."""
    text = (
        "from tvm.script import relax as R\n\n@R.function\n"
        'def main(x: R.Tensor((4,), "float8")) -> R.Tensor((4,), "float8"):\n'
        "    y = R.add(x, x)\n    return y\n"
    )
    mod = tvmlite.parse(text)
    assert 'R.Tensor((4,), dtype="float8")' in mod.script()
    with pytest.raises(
        tvmlite.TVMLiteError, match="the LLVM backend does not support dtype float8"
    ):
        tvmlite.build(mod)


def test_collectives_are_refused_where_written() -> None:
    """`R.ccl.*` talk between workers; a build for one device refuses the one it needs,
    at its place in the text."""
    mod = tvmlite.parse((GOLDEN / "collectives.tvms").read_text(), filename="c.tvms")
    with pytest.raises(tvmlite.TVMLiteError, match=r"c.tvms:13:49: .*R.ccl.allgather"):
        tvmlite.build(mod)
