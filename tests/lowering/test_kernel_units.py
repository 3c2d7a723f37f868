"""Kernels compiled alone (`codegen/kernel_unit.py`), once per distinct kernel,
stored in and loaded from the compile cache, and in parallel worker processes
(`codegen/kernel_build.py`): a rebuild after an edit of one function compiles
that one kernel, and the library is the same bytes whatever the worker count."""

from __future__ import annotations

import numpy as np
import pytest
from relax_text import unary_chain

import tvmlite
from tvmlite.lowering.codegen import kernel_build
from tvmlite.lowering.codegen.kernel_unit import compile_kernel
from tvmlite.lowering.tir.pipeline import LowerTIR
from tvmlite.transform import PassContext

OPS = ("exp", "tanh", "sigmoid", "sqrt", "abs", "negative", "floor", "ceil", "sin", "cos")


def _expected(ops: tuple[str, ...], x: np.ndarray, scale: float = 2.0) -> np.ndarray:
    funcs = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "abs": np.abs}
    for op in ops:
        x = funcs[op](x) if op in funcs else getattr(np, op)(x)
    return x * np.float32(scale)


X = np.linspace(0.1, 0.9, 16, dtype="float32")


def test_a_prim_function_compiles_alone_to_an_object():
    mod = tvmlite.parse(
        """
@T.prim_func
def add_one(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    for i in range(8):
        b[i] = a[i] + T.float32(1)
"""
    )
    lowered = LowerTIR()(tvmlite.IRModule({"add_one": mod}))["add_one"]
    unit = compile_kernel(lowered, "add_one")
    assert unit.obj[:4] == b"\x7fELF" and unit.symbol == "tvmlite_add_one"
    assert "define hidden" in unit.optimized and not unit.can_fail


def test_identical_kernels_compile_once():
    """Two structurally equal prim functions of different names: one unit, both callable."""
    text = """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def twice(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            b[i] = a[i] * T.float32(2)

    @T.prim_func(private=True)
    def doubled(p: T.Buffer((4,), "float32"), q: T.Buffer((4,), "float32")):
        for j in range(4):
            q[j] = p[j] * T.float32(2)

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        y = R.call_tir(cls.twice, (x,), out_sinfo=R.Tensor((4,), "float32"))
        z = R.call_tir(cls.doubled, (y,), out_sinfo=R.Tensor((4,), "float32"))
        return z
"""
    ex = tvmlite.build(tvmlite.parse(text), cache=False)
    assert ex.kernel_counts == {"units": 1, "cached": 0, "compiled": 1}
    np.testing.assert_array_equal(ex["main"](np.arange(4, dtype="float32")), [0, 4, 8, 12])


def test_a_rebuild_after_editing_one_function_compiles_only_that_kernel(cache_dir):
    ops = OPS[:4]
    first = tvmlite.build(tvmlite.parse(unary_chain(ops)), pipeline="minimal")
    assert first.kernel_counts == {"units": 5, "cached": 0, "compiled": 5}
    np.testing.assert_allclose(first["main"](X), _expected(ops, X), rtol=1e-5)
    edited = tvmlite.build(tvmlite.parse(unary_chain(ops, scale="3.0")), pipeline="minimal")
    assert edited.kernel_counts == {"units": 5, "cached": 4, "compiled": 1}
    np.testing.assert_allclose(edited["main"](X), _expected(ops, X, 3.0), rtol=1e-5)
    # The kernels of the cached units are the ones linked: exported, the library agrees.
    path = cache_dir.parent / "edited.so"
    edited.export_library(path)
    loaded = tvmlite.load_module(path)
    np.testing.assert_allclose(loaded["main"](X), _expected(ops, X, 3.0), rtol=1e-5)


def test_a_kernel_entry_that_does_not_verify_is_compiled_again(cache_dir):
    ops = OPS[:2]
    tvmlite.build(tvmlite.parse(unary_chain(ops)), pipeline="minimal")
    for obj in cache_dir.glob("*.o"):
        obj.write_bytes(obj.read_bytes()[:-8] + b"planted!")
    again = tvmlite.build(tvmlite.parse(unary_chain(ops, scale="5.0")), pipeline="minimal")
    assert again.kernel_counts["cached"] == 0
    np.testing.assert_allclose(again["main"](X), _expected(ops, X, 5.0), rtol=1e-5)


def test_the_library_is_the_same_bytes_whatever_the_worker_count(tmp_path):
    """Enough kernels to compile in workers; the library of 1 and of 2 workers agree."""
    assert len(OPS) + 1 >= kernel_build.MIN_PARALLEL
    libraries = []
    for workers in (1, 2):
        with PassContext(config={kernel_build.WORKERS_KEY: workers}):
            ex = tvmlite.build(tvmlite.parse(unary_chain(OPS)), pipeline="minimal", cache=False)
        np.testing.assert_allclose(ex["main"](X), _expected(OPS, X), rtol=1e-5)
        path = tmp_path / f"w{workers}.so"
        ex.export_library(path, prefix="chain_")
        libraries.append(path.read_bytes())
    assert any(w.alive for w in kernel_build._pool.workers)  # the second build used one
    assert libraries[0] == libraries[1]


def test_worker_settings_are_checked(monkeypatch):
    with (
        PassContext(config={kernel_build.WORKERS_KEY: 0}),
        pytest.raises(tvmlite.TVMLiteError, match="tvmlite.build_workers' must be at least 1"),
    ):
        kernel_build.configured_workers()
    monkeypatch.setenv(kernel_build.WORKERS_ENV, "many")
    with pytest.raises(tvmlite.TVMLiteError, match=r"\$TVMLITE_BUILD_WORKERS must be a whole"):
        kernel_build.configured_workers()
    monkeypatch.setenv(kernel_build.WORKERS_ENV, "3")
    assert kernel_build.configured_workers() == 3
