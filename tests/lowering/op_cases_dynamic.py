"""Numerics cases: operators whose output size depends on the data (nonzero,
dynamic_strided_slice, unique)."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_cases_common import Case, Inputs, Ref, case

G = Inputs(8)


def _nonzero(v: np.ndarray) -> np.ndarray:
    """TVM's `relax.run.nonzero`: NumPy's, a 0-d input read as one element."""
    return np.stack(np.atleast_1d(v).nonzero()).astype("int64")


def _nonzero_cases() -> list[Case]:
    sparse = G.ints(-2, 3, 3, 4, 5).astype("float32") * (G.ints(0, 3, 3, 4, 5) == 0)
    return [
        case("nonzero-float32-3d", "R.nonzero(x)", sparse, _nonzero),
        case("nonzero-int32-1d", "R.nonzero(x)", G.ints(-1, 2, 9), _nonzero),
        case("nonzero-bool-2d", "R.nonzero(x)", G.bools(4, 3), _nonzero),
        case("nonzero-uint8-4d", "R.nonzero(x)", G.ints(0, 2, 2, 1, 3, 2, dtype="uint8"), _nonzero),
        case("nonzero-float64-neg-zero", "R.nonzero(x)", np.array([-0.0, 0.5, 0.0]), _nonzero),
        case("nonzero-nan-is-nonzero", "R.nonzero(x)", np.array([0, np.nan], "float32"), _nonzero),
        case("nonzero-all-zero", "R.nonzero(x)", np.zeros((2, 3), "float32"), _nonzero),
        case("nonzero-all-nonzero", "R.nonzero(x)", np.ones((2, 2), "int64"), _nonzero),
        case("nonzero-empty", "R.nonzero(x)", np.zeros((0, 3), "float32"), _nonzero),
        case("nonzero-0d-zero", "R.nonzero(x)", np.array(0, "int32"), _nonzero),
        case("nonzero-0d-one", "R.nonzero(x)", np.array(7, "int32"), _nonzero),
    ]


def _slice(x: np.ndarray, b: np.ndarray, e: np.ndarray, s: np.ndarray) -> np.ndarray:
    """NumPy's basic slicing, which TVM's canonicalization reproduces."""
    return x[tuple(slice(*bes) for bes in zip(b.tolist(), e.tolist(), s.tolist(), strict=True))]


def _bounds(*rows: list[int]) -> tuple[np.ndarray, ...]:
    return tuple(np.array(r, "int64") for r in rows)


def _dynamic_slice_cases() -> list[Case]:
    call = "R.dynamic_strided_slice(x, y, z, w)"
    x = G.normal(8, 9)
    cube = G.ints(-50, 50, 4, 5, 6)
    table = [
        ("forward", x, _bounds([1, 2], [7, 8], [2, 3])),
        ("backward", x, _bounds([-1, 8], [-9, -100], [-2, -3])),
        ("clamped", x, _bounds([-100, 3], [100, 200], [3, 1])),
        ("whole", x, _bounds([0, 0], [8, 9], [1, 1])),
        ("empty-begin-past-end", x, _bounds([5, 0], [2, 9], [1, 1])),
        ("empty-out-of-range", x, _bounds([100, 0], [200, 9], [1, 1])),
        ("3d", cube, _bounds([0, -1, 1], [4, -6, 6], [3, -1, 2])),
        ("1d", np.arange(10, dtype="float64"), _bounds([7], [1], [-2])),
        ("empty-input", np.zeros((0, 3), "float32"), _bounds([0, 1], [5, 3], [1, 1])),
    ]
    return [
        case(f"dynamic-strided-slice-{name}", call, (data, *bounds), _slice)
        for name, data, bounds in table
    ]


def _unique(sorted_: bool, flags: tuple[bool, bool, bool], axis: int | None) -> Ref:
    """TVM's `relax.run.unique`: NumPy's, its runs renumbered by first appearance
    unless `sorted_`; the inverse is 1-d, as TVM's struct info declares it."""

    def ref(x: np.ndarray) -> Any:
        values, index, inverse, counts = np.unique(
            x, return_index=True, return_inverse=True, return_counts=True, axis=axis
        )
        inverse = inverse.reshape(-1)
        if not sorted_:
            appearance = np.argsort(index, kind="stable")
            renumber = np.empty_like(appearance)
            renumber[appearance] = np.arange(len(appearance))
            values = np.take(values, appearance, axis=axis or 0)
            index, counts, inverse = index[appearance], counts[appearance], renumber[inverse]
        extra = [
            a.astype("int64") for a, f in zip((index, inverse, counts), flags, strict=True) if f
        ]
        return (values, *extra) if extra else values

    return ref


def _unique_case(
    name: str, x: np.ndarray, sorted_: bool = True, flags: str = "", axis: int | None = None
) -> Case:
    """`flags` holds i, v, c for return_index, return_inverse, return_counts."""
    wanted = tuple(f in flags for f in "ivc")
    args = [f"sorted={sorted_}"] + [
        f"{n}=True"
        for n, w in zip(("return_index", "return_inverse", "return_counts"), wanted, strict=True)
        if w
    ]
    if axis is not None:
        args.append(f"axis={axis}")
    return case(
        f"unique-{name}", f"R.unique(x, {', '.join(args)})", x, _unique(sorted_, wanted, axis)
    )


def _unique_cases() -> list[Case]:
    ints = G.ints(-3, 4, 17)
    special = np.array([2.0, np.nan, -0.0, 1.5, 0.0, np.nan, 2.0, -1.0], "float32")
    rows = G.ints(0, 2, 9, 3)
    cols = G.ints(0, 3, 2, 11).astype("float32")
    nan_rows = np.array([[np.nan, 1.0], [0.0, 2.0], [np.nan, 1.0], [0.0, 2.0]])
    return [
        _unique_case("int32-sorted", ints),
        _unique_case("int32-sorted-all", ints, flags="ivc"),
        _unique_case("int32-unsorted-all", ints, sorted_=False, flags="ivc"),
        _unique_case("int32-unsorted-values", ints, sorted_=False),
        _unique_case("float32-nan-and-signed-zero", special, flags="ivc"),
        _unique_case("float32-nan-unsorted", special, sorted_=False, flags="ivc"),
        _unique_case("2d-flattened-index", G.ints(0, 5, 4, 6, dtype="int64"), flags="i"),
        _unique_case("rows-axis0", rows, flags="ivc", axis=0),
        _unique_case("rows-axis0-unsorted", rows, sorted_=False, flags="ivc", axis=0),
        _unique_case("columns-axis1-unsorted", cols, sorted_=False, flags="vc", axis=1),
        _unique_case("3d-axis-last", G.ints(0, 2, 2, 2, 7, dtype="int8"), flags="ic", axis=-1),
        _unique_case("rows-with-nan-differ", nan_rows, flags="ivc", axis=0),
        _unique_case("bool", G.bools(10), flags="ic"),
        _unique_case("all-equal", np.zeros((3, 4), "float32"), flags="ivc"),
        _unique_case(
            "all-distinct", np.arange(6, 0, -1, dtype="int64"), sorted_=False, flags="ivc"
        ),
        _unique_case("empty", np.zeros((0,), "float32"), flags="ivc"),
        _unique_case("empty-rows", np.zeros((0, 3), "int32"), flags="ivc", axis=0),
        _unique_case("empty-slices", np.zeros((3, 0), "int32"), flags="ivc", axis=0),
        _unique_case("0d", np.array(4.5, "float32"), flags="ivc"),
    ]


CASES: list[Case] = _nonzero_cases() + _dynamic_slice_cases() + _unique_cases()
