"""The case type of the operator numerics table (test_op_numerics.py) and the
helpers the case modules share: module text, seeded inputs, references."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import tvmlite
from tvmlite.dsl import relax
from tvmlite.dsl.module import IRModule

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
NAMES = ("x", "y", "z", "w", "u", "v")

Ref = Callable[..., Any]


@dataclass(frozen=True)
class Case:
    """One operator call: `expr` over the parameters x, y, z, ... bound to
    `inputs`, checked against `ref(*inputs)`; `tol` overrides the float tolerance.
    `rename` builds the call under another operator name (one TVMScript cannot
    spell because its parser expands it, like `R.nn.relu6`)."""

    id: str
    expr: str
    inputs: tuple[np.ndarray, ...]
    ref: Ref
    tol: float | None = None
    rename: str | None = None

    def text(self) -> str:
        params = ", ".join(
            f'{n}: R.Tensor({tuple(a.shape)}, dtype="{a.dtype}")'
            for n, a in zip(NAMES, self.inputs, strict=False)
        )
        return (
            HEADER
            + "@I.ir_module\nclass Module:\n    @R.function\n"
            + f"    def main({params}):\n"
            + "        with R.dataflow():\n"
            + f"            gv = {self.expr}\n"
            + "            R.output(gv)\n"
            + "        return gv\n"
        )

    def module(self) -> IRModule:
        mod = tvmlite.parse(self.text())
        if self.rename is None:
            return mod
        main = mod.functions["main"]
        block, *blocks = main.body.blocks
        first, *rest = block.bindings
        call = dataclasses.replace(first.value, op=relax.Op(self.rename))
        block = dataclasses.replace(block, bindings=(dataclasses.replace(first, value=call), *rest))
        body = dataclasses.replace(main.body, blocks=(block, *blocks))
        return mod.with_functions({**mod.functions, "main": dataclasses.replace(main, body=body)})


def case(
    id: str, expr: str, inputs: Any, ref: Ref, tol: float | None = None, rename: str | None = None
) -> Case:
    """A Case; `inputs` is one array or a sequence of them."""
    if isinstance(inputs, np.ndarray):
        inputs = (inputs,)
    return Case(id, expr, tuple(inputs), ref, tol, rename)


class Inputs:
    """Deterministic small inputs (one generator per case module)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def uniform(self, *shape: int, lo: float = -2.0, hi: float = 2.0, dtype: str = "float32"):
        return self.rng.uniform(lo, hi, shape).astype(dtype)

    def normal(self, *shape: int, dtype: str = "float32") -> np.ndarray:
        return self.rng.standard_normal(shape).astype(dtype)

    def ints(self, lo: int, hi: int, *shape: int, dtype: str = "int32") -> np.ndarray:
        """Integers in [lo, hi)."""
        return self.rng.integers(lo, hi, shape).astype(dtype)

    def nonzero_ints(self, lo: int, hi: int, *shape: int, dtype: str = "int32") -> np.ndarray:
        a = self.ints(lo, hi, *shape, dtype=dtype)
        return np.where(a == 0, 1, a).astype(dtype)

    def bools(self, *shape: int) -> np.ndarray:
        return self.rng.integers(0, 2, shape).astype(bool)

    def perm_rows(self, n: int, k: int, cols: int) -> np.ndarray:
        """(k, cols) int64 indices into an axis of n, distinct within each column."""
        return np.stack([self.rng.permutation(n)[:k] for _ in range(cols)], 1).astype("int64")


def f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def like(fn: Callable[..., Any]) -> Ref:
    """A reference computing `fn` in float64 and returning the first input's dtype."""

    def ref(*xs: np.ndarray) -> np.ndarray:
        return np.asarray(fn(*(f64(x) for x in xs))).astype(xs[0].dtype)

    return ref


def as_(dtype: str, fn: Callable[..., Any]) -> Ref:
    """A reference computing `fn` on the inputs as given, cast to `dtype`."""

    def ref(*xs: np.ndarray) -> np.ndarray:
        return np.asarray(fn(*xs)).astype(dtype)

    return ref


erf = np.vectorize(math.erf, otypes=[np.float64])
