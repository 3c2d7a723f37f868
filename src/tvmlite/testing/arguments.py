"""Random arguments for a prim function drawn by `prim_funcs(runnable=True)`, to
run a compiled kernel and the reference interpreter on the same values.

Each buffer gets a flat base array and is passed as a view of it with the
buffer's shape and strides, so strided buffers (which the strategies draw) get
exactly the layout their declaration asks for, and a comparison of the bases
covers the gaps between elements too. Each scalar gets a value of its dtype.
Values are mostly small, so that arithmetic stays in range, with some edge cases
(integer extremes, `inf`, `nan`, `-0.0`).
"""

from __future__ import annotations

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.testing import reference_ops

Layout = tuple[tuple[int, ...], tuple[int, ...]]  # shape, strides in elements


def random_values(dtype: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """`n` values of `dtype`: mostly small, about 15 % edge cases."""
    if dtype == "bool":
        return rng.random(n) < 0.5
    edge = rng.random(n) < 0.15
    if dt.is_float(dtype):
        values = rng.standard_normal(n) * rng.choice([1.0, 8.0, 300.0], n)
        specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -2.5]
        values[edge] = rng.choice(specials, int(edge.sum()))
        return values.astype(dtype)
    low, high = reference_ops.int_range(dtype)
    edges = [low, high, 0, 1]
    small = rng.integers(-9, 10, n)
    items = [
        edges[int(rng.integers(0, 4))] if e else min(max(int(x), low), high)
        for x, e in zip(small, edge, strict=True)
    ]
    return np.array(items, dtype=dtype)


class RandomArguments:
    """The random arguments of one function; `fresh()` copies them."""

    def __init__(self, func: tir.PrimFunc, rng: np.random.Generator) -> None:
        buffers = dict(func.buffer_map)
        self.layouts: list[Layout | None] = []
        self.bases: list[np.ndarray | None] = []
        self.scalars: list[object] = []
        for param in func.params:
            buffer = buffers.get(param)
            if buffer is None:
                self.layouts.append(None)
                self.bases.append(None)
                self.scalars.append(random_values(param.dtype, rng, 1)[0].item())
                continue
            shape = tuple(_static(d, buffer.name) for d in buffer.shape)
            strides = tuple(_static(s, buffer.name) for s in buffer.strides)
            strides = strides or reference_ops.row_major(shape)
            size = 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
            self.layouts.append((shape, strides))
            self.bases.append(random_values(buffer.dtype, rng, max(size, 0)))
            self.scalars.append(None)

    def fresh(self) -> tuple[list[np.ndarray | None], list[object]]:
        """New copies of the values: each parameter's whole memory (None for a
        scalar), and the arguments to call with (views of that memory, scalars)."""
        bases = [None if b is None else b.copy() for b in self.bases]
        args: list[object] = []
        for base, layout, scalar in zip(bases, self.layouts, self.scalars, strict=True):
            if base is None or layout is None:
                args.append(scalar)
                continue
            shape, strides = layout
            byte_strides = tuple(s * base.itemsize for s in strides)
            args.append(np.lib.stride_tricks.as_strided(base, shape, byte_strides))
        return bases, args


def random_arguments(func: tir.PrimFunc, seed: int = 0) -> RandomArguments:
    """Random arguments of `func` (static shapes, as runnable programs have),
    reproducible from `seed`."""
    if not isinstance(func, tir.PrimFunc):
        raise TVMLiteError(f"random_arguments: func must be a PrimFunc, not {type(func).__name__}")
    return RandomArguments(func, np.random.default_rng(seed))


def _static(e: tir.PrimExpr, buffer: str) -> int:
    if not isinstance(e, tir.IntImm):
        raise TVMLiteError(
            f"random_arguments: buffer '{buffer}' has a symbolic shape or stride; "
            "draw programs with runnable=True (static shapes)"
        )
    return e.value
