"""A reduction over an empty range still writes its init value (R.sum over an
axis of extent 0 is zeros, as TVM gives): LowerBlocks runs the init before the
reduction loops instead of on their first iteration, which never comes."""

from __future__ import annotations

import numpy as np
import pytest

import tvmlite
from tvmlite.dsl import tir
from tvmlite.lowering.build import compile_prim_funcs
from tvmlite.transform import LegalizeOps, LowerTIR

LOWEST = np.finfo("float32").min


def legalized(op: str, shape: str) -> tuple[str, tir.PrimFunc]:
    src = f"""from tvm.script import relax as R

@R.function
def main(x: R.Tensor({shape}, dtype="float32")) -> R.Tensor(dtype="float32", ndim=1):
    gv = R.{op}(x, axis=[1])
    return gv
"""
    mod = LegalizeOps()(tvmlite.IRModule({"main": tvmlite.parse(src)}))
    ((name, func),) = [(n, f) for n, f in mod.functions.items() if isinstance(f, tir.PrimFunc)]
    return name, func


@pytest.mark.parametrize(
    ("op", "want"), [("sum", 0.0), ("prod", 1.0), ("max", LOWEST), ("min", -LOWEST)]
)
def test_reduction_over_empty_axis_writes_init(op: str, want: float) -> None:
    name, func = legalized(op, "(3, 0)")
    ex = compile_prim_funcs({name: func})
    out = np.full(3, 7.0, "float32")  # what an uninitialised output might hold
    ex[name](np.zeros((3, 0), "float32"), out)
    np.testing.assert_array_equal(out, np.full(3, want, "float32"))


def test_symbolic_extent_zero_at_run_time() -> None:
    name, func = legalized("sum", '("n", "m")')
    ex = compile_prim_funcs({name: func})
    for m in (0, 4):
        x = np.arange(3 * m, dtype="float32").reshape(3, m)
        out = np.full(3, 7.0, "float32")
        ex[name](x, out)
        np.testing.assert_array_equal(out, x.sum(axis=1))


def test_init_runs_once_before_the_reduction_loops() -> None:
    name, func = legalized("sum", "(3, 5)")
    lowered = LowerTIR()(tvmlite.IRModule({name: func}))[name].script()
    assert "if " not in lowered  # no first-iteration test left inside the loop
    ex = compile_prim_funcs({name: func})
    x = np.arange(15, dtype="float32").reshape(3, 5)
    out = np.full(3, 7.0, "float32")
    ex[name](x, out)
    np.testing.assert_array_equal(out, x.sum(axis=1))


def test_relax_build_of_empty_sum_is_zeros() -> None:
    src = """from tvm.script import relax as R

@R.function
def main(x: R.Tensor((4, 0), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    gv = R.sum(x, axis=[1])
    return gv
"""
    for pipeline in ("minimal", "default"):
        ex = tvmlite.build(tvmlite.parse(src), pipeline=pipeline, cache=False)
        for _ in range(2):
            np.testing.assert_array_equal(ex["main"](np.zeros((4, 0), "float32")), np.zeros(4))


def test_passes_take_modules_not_functions() -> None:
    src = """from tvm.script import relax as R

@R.function
def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    return x
"""
    with pytest.raises(tvmlite.TVMLiteError, match="LegalizeOps takes an IRModule, got Function"):
        LegalizeOps()(tvmlite.parse(src))


def test_range_varying_with_an_outer_loop_runs_no_init_when_empty() -> None:
    # the reduction's range is [0, i): TVM runs the init on its first iteration, so
    # row 0 (an empty range) keeps what the output held
    src = """# from tvm.script import tirx as T

@T.prim_func(s_tir=True)
def main(x: T.Buffer((4, 4), "float32"), out: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.sblock("row"):
            v_i = T.axis.spatial(4, i)
            T.reads(x[v_i, 0:v_i])
            T.writes(out[v_i])
            for k in range(v_i):
                with T.sblock("sum"):
                    v_r = T.axis.spatial(4, v_i)
                    v_k = T.axis.reduce(v_i, k)
                    T.reads(x[v_r, v_k])
                    T.writes(out[v_r])
                    with T.init():
                        out[v_r] = T.float32(0.0)
                    out[v_r] = out[v_r] + x[v_r, v_k]
"""
    func = tvmlite.parse(src)
    ex = compile_prim_funcs({"main": func})
    x = np.arange(16, dtype="float32").reshape(4, 4)
    out = np.full(4, 7.0, "float32")
    ex["main"](x, out)
    want = [7.0] + [x[i, :i].sum() for i in range(1, 4)]
    np.testing.assert_array_equal(out, np.array(want, "float32"))
