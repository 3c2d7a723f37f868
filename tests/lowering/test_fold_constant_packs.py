"""FoldConstantPacks: the column panels the default schedule copies a weight
into are made once, at build time, when the weight is a constant (a bound
parameter); the kernel takes the packed array instead. Checked for structure
(the copy gone from the kernel, the original kept for a call whose weight is
not constant) and against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from relax_text import float32_main

import tvmlite
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.walk import walk
from tvmlite.lowering.schedule_rules.packing import PREPROC
from tvmlite.transform import BindParams, PassContext

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"


def module(params: dict[str, tuple[int, ...]], body: str) -> IRModule:
    return tvmlite.parse(float32_main(params, body, HEADER))


def scheduled(mod: IRModule, **disabled: bool) -> IRModule:
    off = ["LowerTIR", *(name for name, yes in disabled.items() if yes)]
    with PassContext(disabled_pass=off):
        return tvmlite.lower(mod)


def copies(mod: IRModule) -> dict[str, int]:
    """Per kernel, how many weight copies (blocks marked for layout rewriting) it runs."""
    return {
        name: sum(
            1
            for node in walk(func.body)
            if isinstance(node, tir.Block) and dict(node.annotations).get(PREPROC) is True
        )
        for name, func in mod.functions.items()
        if isinstance(func, tir.PrimFunc)
    }


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


# nn.Linear as torch.export gives it: the weight (out, in) read transposed.
LINEAR = "wt = R.permute_dims(w, axes=[1, 0])\ngv = R.matmul(x, wt)"


@pytest.mark.parametrize("columns", [96, 100])  # whole panels, and padded ones
def test_a_bound_weight_is_packed_at_build_time(columns: int) -> None:
    mod = module({"x": (64, 48), "w": (columns, 48)}, LINEAR)
    w = rand(columns, 48, seed=1)
    before = copies(scheduled(mod))
    assert sum(before.values()) == 1  # the schedule packs w, on every call
    bound = BindParams("main", {"w": w})(mod)
    after = copies(scheduled(bound))
    assert sum(after.values()) == 0
    assert any(name.endswith("_prepacked") for name in after)
    x = rand(64, 48)
    got = tvmlite.build(bound, cache=False)["main"](x)
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-5, atol=1e-5)
    same = tvmlite.build(mod, params={"w": w}, cache=False)["main"](x)
    np.testing.assert_array_equal(same, got)


def test_a_weight_given_at_call_time_keeps_its_copy() -> None:
    mod = module({"x": (64, 48), "w": (96, 48)}, LINEAR)
    assert sum(copies(scheduled(mod)).values()) == 1
    assert (
        scheduled(mod).functions.keys() == scheduled(mod, FoldConstantPacks=True).functions.keys()
    )


def test_one_kernel_called_with_a_constant_and_with_an_input() -> None:
    """The constant call gets the kernel without the copy, the other keeps it."""
    body = (
        "wt = R.permute_dims(w, axes=[1, 0])\nvt = R.permute_dims(v, axes=[1, 0])\n"
        "a = R.matmul(x, wt)\nb = R.matmul(x, vt)\ngv = R.add(a, b)"
    )
    mod = module({"x": (64, 48), "w": (96, 48), "v": (96, 48)}, body)
    w, v, x = rand(96, 48, seed=1), rand(96, 48, seed=2), rand(64, 48)
    bound = BindParams("main", {"w": w})(mod)
    found = copies(scheduled(bound, FuseOps=True))
    assert sum(found.values()) == 1
    assert any(name.endswith("_prepacked") for name in found)
    got = tvmlite.build(bound, cache=False)["main"](x, v)
    np.testing.assert_allclose(got, x @ w.T + x @ v.T, rtol=1e-5, atol=1e-5)


def test_a_convolution_weight_is_packed_at_build_time() -> None:
    mod = module(
        {"x": (1, 16, 14, 14), "w": (32, 16, 3, 3)}, "gv = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])"
    )
    w, x = rand(32, 16, 3, 3, seed=1), rand(1, 16, 14, 14)
    bound = BindParams("main", {"w": w})(mod)
    assert sum(copies(scheduled(mod)).values()) == 1
    assert sum(copies(scheduled(bound)).values()) == 0
    got = tvmlite.build(bound, cache=False)["main"](x)
    want = tvmlite.build(mod, cache=False)["main"](x, w)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
