# ruff: noqa: E501  (TVMScript texts)
"""FuseOps groups, FuseTIR kernels (structure and numerics against NumPy), and
DeadCodeElimination."""

from __future__ import annotations

import numpy as np
from relax_text import dataflow_main

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering import compile_prim_funcs
from tvmlite.lowering.passes.annotate_tir_op_pattern import AnnotateTIROpPattern
from tvmlite.lowering.passes.dead_code_elimination import DeadCodeElimination
from tvmlite.lowering.passes.fuse_ops import FuseOps, group_members
from tvmlite.lowering.passes.fuse_tir import FuseTIR
from tvmlite.lowering.transform import verify
from tvmlite.transform import LegalizeOps

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
F32 = 'dtype="float32"'


def _module(params: str, ret: str, body: str, extra: str = "") -> str:
    return dataflow_main(params, ret, body, HEADER, extra)


def _fuse_ops(text: str) -> IRModule:
    mod = FuseOps()(AnnotateTIROpPattern()(LegalizeOps()(tvmlite.parse(text))))
    verify(mod)
    return mod


def _groups(mod: IRModule) -> dict[str, list[str]]:
    return {
        name: group_members(f)
        for name, f in mod.functions.items()
        if isinstance(f, relax.Function) and f.attr("Primitive")
    }


def _fuse_all(text: str) -> IRModule:
    mod = DeadCodeElimination()(FuseTIR()(_fuse_ops(text)))
    verify(mod)
    return mod


def _main_calls(mod: IRModule) -> list[str]:
    return [
        b.value.args[0].name
        for block in mod["main"].body.blocks
        for b in block.bindings
        if isinstance(b.value, relax.Call) and isinstance(b.value.op, relax.Op)
    ]


ADD_RELU = _module(
    f"x: R.Tensor((4, 8), {F32}), y: R.Tensor((8,), {F32})",
    f"R.Tensor((4, 8), {F32})",
    f"""
a: R.Tensor((4, 8), {F32}) = R.add(x, y)
gv: R.Tensor((4, 8), {F32}) = R.nn.relu(a)
R.output(gv)
""",
)

MATMUL_ADD_RELU = _module(
    f"x: R.Tensor((4, 8), {F32}), w: R.Tensor((8, 6), {F32}), b: R.Tensor((6,), {F32})",
    f"R.Tensor((4, 6), {F32})",
    f"""
a: R.Tensor((4, 6), {F32}) = R.matmul(x, w)
c: R.Tensor((4, 6), {F32}) = R.add(a, b)
gv: R.Tensor((4, 6), {F32}) = R.nn.relu(c)
R.output(gv)
""",
)


def test_add_relu_is_one_group() -> None:
    mod = _fuse_ops(ADD_RELU)
    assert _groups(mod) == {"fused_add_relu": ["add", "relu"]}
    fused = mod["fused_add_relu"]
    assert fused.attr("Primitive") is True and fused.attr("global_symbol") is None


def test_matmul_takes_its_elementwise_epilogue() -> None:
    mod = _fuse_ops(MATMUL_ADD_RELU)
    assert _groups(mod) == {"fused_matmul_add_relu": ["matmul", "add", "relu"]}


def test_reduce_takes_elementwise_producer_but_not_injective() -> None:
    text = _module(
        f"x: R.Tensor((4, 8), {F32})",
        f"R.Tensor((4,), {F32})",
        f"""
e: R.Tensor((4, 8), {F32}) = R.exp(x)
gv: R.Tensor((4,), {F32}) = R.sum(e, axis=[1])
R.output(gv)
""",
    )
    assert _groups(_fuse_ops(text)) == {"fused_tir_exp_sum": ["tir_exp", "sum"]}
    # TVM fuses injective ops only into injective consumers: transpose stays alone.
    text = _module(
        f"x: R.Tensor((8, 4), {F32})",
        f"R.Tensor((4,), {F32})",
        f"""
t: R.Tensor((4, 8), {F32}) = R.permute_dims(x)
gv: R.Tensor((4,), {F32}) = R.sum(t, axis=[1])
R.output(gv)
""",
    )
    assert _groups(_fuse_ops(text)) == {}


DIAMOND = _module(
    f"x: R.Tensor((4, 8), {F32})",
    f"R.Tensor((4, 8), {F32})",
    f"""
e: R.Tensor((4, 8), {F32}) = R.exp(x)
a: R.Tensor((4, 8), {F32}) = R.nn.relu(e)
b: R.Tensor((4, 8), {F32}) = R.multiply(e, e)
gv: R.Tensor((4, 8), {F32}) = R.add(a, b)
R.output(gv)
""",
)


def test_diamond_fuses_at_its_post_dominator() -> None:
    assert _groups(_fuse_ops(DIAMOND)) == {
        "fused_tir_exp_relu_multiply_add": ["tir_exp", "relu", "multiply", "add"]
    }


def test_diamond_through_an_opaque_branch_does_not_fuse_the_source() -> None:
    text = _module(
        f"x: R.Tensor((4, 4), {F32})",
        f"R.Tensor((4, 4), {F32})",
        f"""
e: R.Tensor((4, 4), {F32}) = R.exp(x)
m: R.Tensor((4, 4), {F32}) = R.matmul(e, e)
r: R.Tensor((4, 4), {F32}) = R.nn.relu(e)
gv: R.Tensor((4, 4), {F32}) = R.add(m, r)
R.output(gv)
""",
    )
    groups = _fuse_ops(text)
    assert all("tir_exp" not in members for members in _groups(groups).values())


def test_binding_used_twice_fuses_once() -> None:
    text = _module(
        f"x: R.Tensor((4, 8), {F32})",
        f"R.Tensor((4, 8), {F32})",
        f"""
e: R.Tensor((4, 8), {F32}) = R.exp(x)
gv: R.Tensor((4, 8), {F32}) = R.add(e, e)
R.output(gv)
""",
    )
    mod = _fuse_ops(text)
    assert _groups(mod) == {"fused_tir_exp_add": ["tir_exp", "add"]}
    assert [p.name for p in mod["fused_tir_exp_add"].params] == ["x"]


SPLIT_TUPLE = _module(
    f"x: R.Tensor((4, 6), {F32})",
    f"R.Tensor((4, 3), {F32})",
    f"""
s: R.Tuple(R.Tensor((4, 3), {F32}), R.Tensor((4, 3), {F32})) = R.split(x, indices_or_sections=2, axis=1)
a: R.Tensor((4, 3), {F32}) = s[0]
b: R.Tensor((4, 3), {F32}) = s[1]
gv: R.Tensor((4, 3), {F32}) = R.add(a, b)
R.output(gv)
""",
)


def test_tuple_items_fuse_with_their_producer_and_consumer() -> None:
    assert _groups(_fuse_ops(SPLIT_TUPLE)) == {"fused_split_add": ["split", "add"]}


def test_dataflow_block_boundary_is_respected() -> None:
    text = (
        HEADER
        + f"""@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), {F32})) -> R.Tensor((4,), {F32}):
        with R.dataflow():
            e: R.Tensor((4,), {F32}) = R.exp(x)
            R.output(e)
        with R.dataflow():
            gv: R.Tensor((4,), {F32}) = R.nn.relu(e)
            R.output(gv)
        return gv
"""
    )
    mod = _fuse_ops(text)
    assert _groups(mod) == {}
    assert FuseOps()(mod) is mod


def test_kernels_without_pattern_are_opaque_and_opt_level_zero_fuses_nothing() -> None:
    legal = LegalizeOps()(tvmlite.parse(ADD_RELU))
    assert FuseOps()(legal) is legal
    annotated = AnnotateTIROpPattern()(legal)
    assert FuseOps(fuse_opt_level=0)(annotated) is annotated


def test_fuse_tir_structure() -> None:
    mod = _fuse_all(MATMUL_ADD_RELU)
    assert not any(
        isinstance(f, relax.Function) and f.attr("Primitive") for f in mod.functions.values()
    )
    assert _main_calls(mod) == ["fused_matmul_add_relu"]
    fused = mod["fused_matmul_add_relu"]
    assert isinstance(fused, tir.PrimFunc)
    assert fused.attr("op_names") == ("relax.matmul", "relax.add", "relax.nn.relu")
    assert fused.attr("op_pattern") == 4
    root = fused.body.block
    assert [b.name for b in root.alloc_buffers] == ["matmul_intermediate", "T_add_intermediate"]
    assert len(fused.params) == 4  # x, w, b and the output: intermediates are not params
    assert set(mod.functions) == {"fused_matmul_add_relu", "main"}
    assert tvmlite.structural_equal(tvmlite.parse(mod.script()), mod)


def _run_kernel(mod: IRModule, name: str, *arrays: np.ndarray) -> None:
    compile_prim_funcs({name: mod[name]})[name](*arrays)


def test_fuse_tir_numerics_matmul_add_relu() -> None:
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((4, 8), (8, 6), (6,)))
    out = np.zeros((4, 6), "float32")
    _run_kernel(_fuse_all(MATMUL_ADD_RELU), "fused_matmul_add_relu", x, w, b, out)
    np.testing.assert_allclose(out, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)


def test_fuse_tir_numerics_diamond_and_tuple() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8)).astype("float32")
    out = np.zeros((4, 8), "float32")
    _run_kernel(_fuse_all(DIAMOND), "fused_tir_exp_relu_multiply_add", x, out)
    e = np.exp(x)
    np.testing.assert_allclose(out, np.maximum(e, 0) + e * e, rtol=1e-5)
    x = rng.standard_normal((4, 6)).astype("float32")
    out = np.zeros((4, 3), "float32")
    _run_kernel(_fuse_all(SPLIT_TUPLE), "fused_split_add", x, out)
    np.testing.assert_allclose(out, x[:, :3] + x[:, 3:], rtol=1e-6)


def test_fuse_tir_symbolic_shapes() -> None:
    text = (
        HEADER
        + f"""@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 8), {F32}), w: R.Tensor((8, 4), {F32})) -> R.Tensor(("n", 4), {F32}):
        n = T.int64()
        with R.dataflow():
            a: R.Tensor((n, 4), {F32}) = R.matmul(x, w)
            gv: R.Tensor((n, 4), {F32}) = R.nn.relu(a)
            R.output(gv)
        return gv
"""
    )
    mod = _fuse_all(text)
    assert _main_calls(mod) == ["fused_matmul_relu"]
    rng = np.random.default_rng(2)
    x, w = (
        rng.standard_normal((5, 8)).astype("float32"),
        rng.standard_normal((8, 4)).astype("float32"),
    )
    out = np.zeros((5, 4), "float32")
    _run_kernel(mod, "fused_matmul_relu", x, w, out)
    np.testing.assert_allclose(out, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)


def test_dce_removes_unused_pure_bindings_and_private_functions() -> None:
    text = (
        HEADER
        + f"""@I.ir_module
class Module:
    @R.function(private=True)
    def unused(x: R.Tensor((4,), {F32})) -> R.Tensor((4,), {F32}):
        return x

    @R.function(pure=False)
    def main(x: R.Tensor((4,), {F32})) -> R.Tensor((4,), {F32}):
        a: R.Tensor((4,), {F32}) = R.call_packed("test.f", x, sinfo_args=(R.Tensor((4,), {F32}),))
        b: R.Tensor((4,), {F32}) = R.add(x, x)
        with R.dataflow():
            c: R.Tensor((4,), {F32}) = R.exp(x)
            d: R.Tensor((4,), {F32}) = R.exp(c)
            R.output(c)
        return c
"""
    )
    mod = tvmlite.parse(text)
    out = DeadCodeElimination()(mod)
    verify(out)
    assert set(out.functions) == {"main"}
    kept = [b.var.name for block in out["main"].body.blocks for b in block.bindings]
    assert kept == ["a", "c"]
    assert DeadCodeElimination()(out) is out


def test_dce_keeps_a_binding_whose_tir_var_is_read() -> None:
    # `y` and `z` are read only as TIR vars by `w`'s arithmetic; `unused` defines a
    # TIR var nobody reads and `e` only names `n`, which the parameter defines.
    text = (
        HEADER
        + f"""# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(n: T.int64, k: T.int64, x: R.Tensor(("n",), {F32})) -> T.int64:
        y: T.int64 = n + 1
        z: T.int64 = n * k
        unused: T.int64 = k - 1
        e: R.Tensor((n,), {F32}) = R.exp(x)
        w: T.int64 = y + z // 2
        return w
"""
    )
    out = DeadCodeElimination()(tvmlite.parse(text))
    verify(out)
    kept = [b.var.name for block in out["main"].body.blocks for b in block.bindings]
    assert kept == ["y", "z", "w"]
    main = tvmlite.build(out, pipeline="minimal", cache=False)["main"]
    assert int(main(5, 3, np.zeros(5, "float32"))) == 13


def test_dce_keeps_everything_without_a_public_function() -> None:
    mod = _fuse_ops(ADD_RELU)
    private = IRModule({k: v for k, v in mod.functions.items() if k != "main"})
    assert set(DeadCodeElimination()(private).functions) == set(private.functions)
    assert set(DeadCodeElimination(entry_functions=("fused_add_relu",))(private).functions) == {
        "fused_add_relu",
        "add",
        "relu",
    }


MASKED_SELECT = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), dtype="float32"), m: R.Tensor((3, 4), dtype="bool")) -> R.Tensor(dtype="float32", ndim=1):
        u0 = T.int64()
        with R.dataflow():
            lv: R.Tensor((12,), dtype="float32") = R.reshape(x, R.shape([12]))
            lv1: R.Tensor((12,), dtype="bool") = R.reshape(m, R.shape([12]))
            lv2: R.Tensor(dtype="int64", ndim=2) = R.nonzero(lv1)
            lv3: R.Tensor((1, u0), dtype="int64") = R.match_cast(lv2, R.Tensor((1, u0), dtype="int64"))
            lv4: R.Tensor((u0,), dtype="int64") = R.squeeze(lv3, axis=[0])
            gv: R.Tensor((u0,), dtype="float32") = R.take(lv, lv4, axis=0, mode="fast")
            R.output(gv)
        return gv
"""


def test_groups_follow_the_bindings_of_the_sizes_they_read() -> None:
    """R.nonzero legalizes to a count, its size bound by match_cast, then the
    kernel whose output has that size: fusing the reshape of `x` with the take
    after it must not move the kernel above the count (its `out_sinfo` reads the
    size, a TIR var no Relax var carries)."""
    mod = tvmlite.parse(MASKED_SELECT)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype("float32")
    m = x > 0
    for pipeline in ("minimal", "default", None):
        ex = tvmlite.build(mod, pipeline=pipeline, cache=False)
        np.testing.assert_array_equal(ex["main"](x, m), x[m])
