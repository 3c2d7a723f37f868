"""Python values passed where compiled code takes a scalar or a shape.

One rule for prim-function parameters (`args.py`) and graph-function `R.Prim` /
`R.Shape` parameters (`graph_call.py`): a value must be a number of the right
kind that the dtype holds; anything else is a `ValueError` whose text the caller
prefixes with the function and parameter (never an OverflowError from ctypes
or NumPy, never a silently truncated 4.5).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from tvmlite.dsl import dtype as dt


def scalar_value(arg: Any, dtype: str) -> int | float:
    """`arg` (a Python or NumPy number, or a 0-d array) as a value of scalar `dtype`."""
    if isinstance(arg, np.ndarray) and arg.ndim == 0 or isinstance(arg, np.generic):
        arg = arg.item()
    if dt.is_float(dtype):
        if isinstance(arg, int | float) and not isinstance(arg, bool):
            try:
                return float(arg)
            except OverflowError:  # an int beyond float64; float32 infinity is NumPy's
                raise ValueError(f"value {_short(arg)} does not fit in {dtype}") from None
    elif isinstance(arg, int):  # bool included
        low, high = dt.int_range(dtype) or (0, 0)
        if not low <= arg <= high:
            raise ValueError(f"value {_short(arg)} does not fit in {dtype}")
        return int(arg)
    raise ValueError(f"expected a {dtype} scalar, got {describe(arg)}")


def shape_values(arg: Any) -> list[int]:
    """A shape (tuple, list or 1-d array of integers) as its int64 values."""
    if not isinstance(arg, tuple | list | np.ndarray) or getattr(arg, "ndim", 1) != 1:
        raise ValueError(f"expected a shape (a tuple of ints), got {describe(arg)}")
    low, high = dt.int_range("int64") or (0, 0)
    values = []
    for k, v in enumerate(arg):
        try:
            value = operator.index(v)
        except TypeError:
            raise ValueError(f"value {v!r} at index {k} is not an integer") from None
        if not low <= value <= high:
            raise ValueError(f"value {_short(value)} at index {k} does not fit in int64")
        values.append(value)
    return values


def describe(arg: Any) -> str:
    if isinstance(arg, np.ndarray):
        return f"an array of shape {arg.shape} and dtype {arg.dtype}"
    return type(arg).__name__


def _short(value: int) -> str:
    """An integer for a message: 10**400 is not worth 401 digits."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:12]}...({len(text)} digits)"
