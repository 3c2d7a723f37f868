"""Numerics of the legalized sort, argsort, topk, median, cumsum and cumprod kernels
against NumPy references computed here: stable orders (ties keep their input order
in both directions, as TVM's std::stable_sort builtins), NaN last ascending, and
scans accumulating in the output dtype."""

from __future__ import annotations

import numpy as np
import pytest
from test_legalize_families import module, run, t

import tvmlite
from tvmlite.dsl import relax, tir
from tvmlite.lowering.legalize import op_info
from tvmlite.transform import LegalizeOps

RNG = np.random.default_rng(5)


def data(shape: tuple[int, ...], dtype: str, ties: bool = True) -> np.ndarray:
    """Random values; with `ties`, drawn from few distinct values so lines repeat."""
    if ties:
        return RNG.integers(-3, 4, shape).astype(dtype)
    return RNG.permutation(int(np.prod(shape))).reshape(shape).astype(dtype) - 5


def stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Positions in stable order. Descending keeps equal keys in input order: a
    stable sort of negated dense ranks (np.unique ranks NaN highest, so NaN first)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")

    def line_order(line: np.ndarray) -> np.ndarray:
        _, rank = np.unique(line, return_inverse=True)
        return np.argsort(-rank.reshape(-1), kind="stable")

    return np.apply_along_axis(line_order, axis, x)


def test_reference_descending_order_is_stable() -> None:
    x = np.array([1.0, 3.0, 1.0, np.nan, 3.0, 2.0], "float32")
    np.testing.assert_array_equal(stable_order(x, 0, True), [3, 1, 4, 5, 0, 2])
    np.testing.assert_array_equal(stable_order(x, 0, False), [0, 2, 5, 1, 4, 3])


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize(("shape", "axis"), [((3, 9), -1), ((6, 4), 0), ((2, 5, 3), 1), ((17,), 0)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort(dtype: str, shape: tuple, axis: int, descending: bool) -> None:
    x = data(shape, dtype)
    want = stable_order(x, axis, descending)
    got = run(
        module(f"x: {t(shape, dtype)}", f"R.sort(x, axis={axis}, descending={descending})"), x
    )
    np.testing.assert_array_equal(got, np.take_along_axis(x, want, axis))
    call = f'R.argsort(x, axis={axis}, descending={descending}, dtype="int64")'
    got = run(module(f"x: {t(shape, dtype)}", call), x)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_orders_nan_like_numpy(descending: bool) -> None:
    x = data((4, 7), "float32")
    x[0, 2] = x[0, 5] = x[2, 0] = x[3, 6] = np.nan
    x[1, :] = np.nan
    want = stable_order(x, 1, descending)
    src = module(f"x: {t(x.shape)}", f"R.argsort(x, axis=1, descending={descending})")
    np.testing.assert_array_equal(run(src, x), want)
    got = run(module(f"x: {t(x.shape)}", f"R.sort(x, descending={descending})"), x)
    np.testing.assert_array_equal(got, np.take_along_axis(x, want, 1))
    if not descending:
        np.testing.assert_array_equal(got, np.sort(x, axis=1))


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize(("shape", "axis", "k"), [((3, 10), -1, 4), ((7, 3), 0, 2), ((5,), 0, 0)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype: str, shape: tuple, axis: int, k: int, largest: bool) -> None:
    x = data(shape, dtype)
    kk = k if k >= 1 else shape[axis]
    order = np.take(stable_order(x, axis, largest), np.arange(kk), axis)
    attrs = f'k={k}, axis={axis}, largest={largest}, dtype="int64"'
    values, indices = run(module(f"x: {t(shape, dtype)}", f"R.topk(x, {attrs})"), x)
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, axis))


@pytest.mark.parametrize("ret_type", ["values", "indices"])
def test_topk_single_result(ret_type: str) -> None:
    x = data((4, 6), "float32", ties=False)
    order = np.argsort(-x, axis=1, kind="stable")[:, :3]
    want = np.take_along_axis(x, order, 1) if ret_type == "values" else order.astype("int32")
    got = run(module(f"x: {t(x.shape)}", f'R.topk(x, k=3, ret_type="{ret_type}")'), x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("axis", "keepdims"), [(1, False), (0, True), (None, False)])
def test_median_lower_middle(axis: int | None, keepdims: bool) -> None:
    x = data((4, 6), "float32")
    axes = "None" if axis is None else f"[{axis}]"
    got = run(module(f"x: {t(x.shape)}", f"R.median(x, axis={axes}, keepdims={keepdims})"), x)
    if axis is None:
        np.testing.assert_array_equal(got, np.sort(x, axis=None)[(x.size - 1) // 2])
        return
    values, indices = got
    order = np.argsort(x, axis=axis, kind="stable")
    mid = np.take(order, [(x.shape[axis] - 1) // 2], axis)
    want = np.take_along_axis(x, mid, axis)
    if not keepdims:
        mid, want = mid.squeeze(axis), want.squeeze(axis)
    np.testing.assert_array_equal(indices, mid)
    np.testing.assert_array_equal(values, want)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan(op: str, dtype: str, axis: int | None, exclusive: bool) -> None:
    x = data((3, 4, 5), dtype) if op == "cumsum" else RNG.integers(1, 3, (3, 4, 5)).astype(dtype)
    if dtype == "float32":
        x = x + RNG.uniform(0, 0.5, x.shape).astype(dtype)
    call = f"R.{op}(x, axis={axis}, exclusive={exclusive})"
    got = run(module(f"x: {t(x.shape, dtype)}", call), x)
    ref = getattr(np, op)(x, axis=axis, dtype=dtype)
    if exclusive:
        flat = axis is None
        ax = 0 if flat else axis
        base = x.reshape(-1) if flat else x
        identity = np.full_like(np.take(base, [0], ax), 0 if op == "cumsum" else 1)
        ref = np.concatenate([identity, np.delete(ref, -1, ax)], ax)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, ref, rtol=1e-5)


@pytest.mark.parametrize(
    ("shape", "axis", "exclusive"),
    [(("n",), 0, False), ((2, "n"), 1, False), (("n", 3), 1, True), (("n", 3), None, False)],
)
def test_scan_over_symbolic_shapes(shape: tuple, axis: int | None, exclusive: bool) -> None:
    """Position ids (`cumsum` over a symbolic sequence) and scans of symbolic
    tensors along either axis, at several sizes of `n`."""
    dims = ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in shape)
    src = module(
        f'x: R.Tensor(({dims},), dtype="int64")',
        f'R.cumsum(x, axis={axis}, dtype="int64", exclusive={exclusive})',
    )
    ex = tvmlite.build(tvmlite.parse(src))
    for n in (1, 2, 17):
        x = RNG.integers(0, 9, [n if d == "n" else d for d in shape]).astype("int64")
        ref = np.cumsum(x, axis=axis)
        if exclusive:
            ref = ref - x
        np.testing.assert_array_equal(ex["main"](x), ref)


def test_scan_output_dtype() -> None:
    x = RNG.integers(0, 100, (4, 6)).astype("int32")
    got = run(module(f"x: {t(x.shape, 'int32')}", 'R.cumsum(x, axis=1, dtype="float64")'), x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.cumsum(x, axis=1, dtype="float64"))
    x = RNG.uniform(0.5, 1.5, (3, 5)).astype("float32")
    got = run(module(f"x: {t(x.shape)}", 'R.cumprod(x, axis=0, dtype="float64")'), x)
    np.testing.assert_allclose(got, np.cumprod(x.astype("float64"), axis=0))


def test_kernels_carry_op_info_and_round_trip() -> None:
    src = module(f"x: {t((3, 8))}", "R.topk(x, k=2)")
    mod = LegalizeOps()(tvmlite.parse(src))
    (func,) = [f for f in mod.functions.values() if isinstance(f, tir.PrimFunc)]
    info = op_info(func)
    assert info is not None and info["name"] == "relax.topk" and info["attrs"]["k"] == 2
    assert tvmlite.structural_equal(tvmlite.parse(mod.script()), mod)


def test_topk_of_k_from_a_symbolic_axis_is_left_alone() -> None:
    """Whether k fits the axis is known only at run time: no kernel is made."""
    src = module('x: R.Tensor((4, "n"), dtype="float32")', "R.topk(x, k=2)")
    mod = LegalizeOps()(tvmlite.parse(src))
    assert not any(isinstance(f, tir.PrimFunc) for f in mod.functions.values())
    main = mod.functions["main"]
    assert isinstance(main, relax.Function)
    assert mod.script() == tvmlite.parse(src).script()


SYMBOLIC_SORTS = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), "float32")):
        with R.dataflow():
            a = R.sort(x, axis=1)
            b = R.argsort(x, axis=0, descending=True)
            c = R.topk(x, k=0, axis=1, ret_type="indices")
            d = R.median(x, axis=[1])
            R.output(a, b, c, d)
        return (a, b, c, d)
"""


@pytest.mark.parametrize(("n", "m"), [(1, 1), (3, 5), (7, 2), (4, 33)])
def test_sorts_over_symbolic_shapes(n: int, m: int) -> None:
    """Lines and scratch sized at run time: sort, argsort, the whole-axis topk
    and the median of symbolic tensors."""
    x = data((n, m), "float32", ties=False)
    a, b, c, d = tvmlite.build(tvmlite.parse(SYMBOLIC_SORTS))["main"](x)
    np.testing.assert_array_equal(a, np.sort(x, 1))
    np.testing.assert_array_equal(b, stable_order(x, 0, True))
    np.testing.assert_array_equal(c, stable_order(x, 1, True))
    np.testing.assert_array_equal(d[0], np.sort(x, 1)[:, (m - 1) // 2])
