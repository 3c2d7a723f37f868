"""Checking a prim function's arguments before the kernel touches memory.

Every check happens in Python before the call: argument count, being a tensor
(a NumPy array or a DLPack producer, imported as one, as graph functions do),
dtype, ndim, alignment, writability of outputs, shape (with symbolic dims solved
from their first occurrence and checked everywhere else), strides (C-contiguous
unless the buffer declares strides) and, for `noalias` kernels, that no written
buffer overlaps another argument. A wrong argument raises `TVMLiteError` naming
the parameter, never a crash and never silent garbage.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.runtime import dlpack
from tvmlite.runtime.abi import KernelSignature, Param, buffer_vars
from tvmlite.runtime.scalars import scalar_value

_CTYPES = {
    "bool": ctypes.c_uint8,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float16": ctypes.c_float,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
}
_INT_OPS: dict[str, Callable[[int, int], int]] = {
    "add": int.__add__,
    "sub": int.__sub__,
    "mul": int.__mul__,
    "floordiv": int.__floordiv__,
    "floormod": int.__mod__,
    "min": min,
    "max": max,
}


def ctypes_signature(sig: KernelSignature) -> list[Any]:
    types: list[Any] = []
    for p in sig.params:
        types.append(ctypes.c_void_p if p.is_pointer else _CTYPES[p.var.dtype])
    types.extend(ctypes.c_int64 for _ in sig.sym_vars)
    if sig.reports:
        types.extend([ctypes.c_char_p, ctypes.c_int64])  # the message buffer and its size
    return types


def evaluate(e: tir.PrimExpr, env: dict[tir.Var, int]) -> int | None:
    """Value of an integer shape expression, or None when it is not computable
    from `env` (such a dim is then left to the kernel)."""
    if isinstance(e, tir.IntImm):
        return e.value
    if isinstance(e, tir.Var):
        return env.get(e)
    if isinstance(e, tir.Cast):
        return evaluate(e.value, env)
    if isinstance(e, tir.BinaryOp) and e.kind in _INT_OPS:
        a, b = evaluate(e.a, env), evaluate(e.b, env)
        if a is None or b is None or (b == 0 and e.kind in ("floordiv", "floormod")):
            return None
        return _INT_OPS[e.kind](a, b)
    return None


def _show(e: tir.PrimExpr, env: dict[tir.Var, int]) -> str:
    value = evaluate(e, env)
    return str(value) if value is not None else "?"


def _numpy_dtype(dtype: str) -> np.dtype | None:
    """NumPy's dtype for a buffer's; None for those it lacks (`float32x4`)."""
    try:
        return np.dtype(dtype) if dt.lanes(dtype) == 1 else None
    except TypeError:
        return None


class ArgumentBinder:
    """Turns Python arguments into the kernel's C arguments, or raises."""

    def __init__(self, sig: KernelSignature) -> None:
        self.sig = sig
        self.name = sig.name
        self.buffers = [(i, p) for i, p in enumerate(sig.params) if p.buffer is not None]
        self.static = {i: _static_shape(p.buffer) for i, p in self.buffers if p.buffer}
        # By position: params may share a name in the IR. (`sig.written` can go by
        # name because the signature gives params distinct names: `B`, `B_1`.)
        self.dtypes = {i: _numpy_dtype(p.buffer.dtype) for i, p in self.buffers if p.buffer}
        self.written = {i for i, p in self.buffers if p.name in sig.written}
        # Buffers that declare vars (shape, strides, offset) to solve on each call.
        self.symbolic = [(i, p) for i, p in self.buffers if p.buffer and buffer_vars(p.buffer)]

    def error(self, param: Param, message: str) -> TVMLiteError:
        return TVMLiteError(f"{self.name}: parameter '{param.name}': {message}")

    def bind(self, args: Sequence[Any]) -> list[Any]:
        params = self.sig.params
        if len(args) != len(params):
            names = ", ".join(p.name for p in params)
            raise TVMLiteError(
                f"{self.name}() takes {len(params)} arguments ({names}), got {len(args)}"
            )
        env: dict[tir.Var, int] = {}
        origin: dict[tir.Var, str] = {}
        values: list[Any] = []
        args = list(args)
        for i, (p, arg) in enumerate(zip(params, args, strict=True)):
            if p.is_pointer:
                args[i] = arg = dlpack.as_array(arg, f"{self.name}: parameter '{p.name}'")
                self._check_array(i, p, arg)
                values.append(arg.ctypes.data)
            else:
                value = self._scalar(p, arg)
                values.append(value)
                if dt.is_integer_like(p.var.dtype):
                    env[p.var] = int(value)
                    origin[p.var] = f"parameter '{p.name}'"
        for i, p in self.symbolic:
            self._solve(p, args[i], env, origin)
        for i, p in self.buffers:
            self._check_shape(i, p, args[i], env, origin)
        if self.sig.noalias and self.written:
            self._check_overlap(args)
        for var in self.sig.sym_vars:
            values.append(env.get(var, 0))
        return values

    # ------------------------------------------------------------ pieces

    def _check_array(self, i: int, p: Param, arg: np.ndarray) -> None:
        b = p.buffer
        if b is None:
            return
        want = self.dtypes[i]
        if want is None:
            raise self.error(p, f"no NumPy array has dtype {b.dtype}, so it cannot be passed")
        if arg.dtype != want:
            raise self.error(p, f"expected dtype {b.dtype}, got {arg.dtype}")
        if arg.ndim != len(b.shape):
            raise self.error(p, f"expected {len(b.shape)} dimensions, got {arg.ndim}")
        if not arg.flags.aligned:
            raise self.error(p, "the array is not aligned to its element size")
        if i in self.written and not arg.flags.writeable:
            raise self.error(p, "the array is read-only, but the function writes it")

    def _scalar(self, p: Param, arg: Any) -> int | float:
        try:
            return scalar_value(arg, p.var.dtype)
        except ValueError as err:
            raise self.error(p, str(err)) from None

    def _solve(
        self, p: Param, arr: np.ndarray, env: dict[tir.Var, int], origin: dict[tir.Var, str]
    ) -> None:
        """Bind the vars that appear bare in this buffer's shape, strides and offset."""
        b = p.buffer
        assert b is not None
        where = f"parameter '{p.name}'"
        for dim, size in zip(b.shape, arr.shape, strict=True):
            if isinstance(dim, tir.Var) and dim not in env:
                env[dim], origin[dim] = size, where
        for stride, step in zip(b.strides, arr.strides, strict=False):
            if isinstance(stride, tir.Var) and stride not in env:
                if step % arr.itemsize:
                    raise self.error(p, "strides are not a multiple of the element size")
                env[stride], origin[stride] = step // arr.itemsize, where
        if isinstance(b.elem_offset, tir.Var) and b.elem_offset not in env:
            env[b.elem_offset], origin[b.elem_offset] = 0, where

    def _check_shape(
        self,
        i: int,
        p: Param,
        arr: np.ndarray,
        env: dict[tir.Var, int],
        origin: dict[tir.Var, str],
    ) -> None:
        b = p.buffer
        assert b is not None
        static = self.static.get(i)
        if static is not None:
            if arr.shape != static:
                raise self.error(p, f"expected shape {static}, got {arr.shape}")
        else:
            for dim, size in zip(b.shape, arr.shape, strict=True):
                if evaluate(dim, env) not in (size, None):
                    raise self.error(p, self._shape_message(b, arr, env, origin))
        if b.strides:
            for k, (stride, step) in enumerate(zip(b.strides, arr.strides, strict=True)):
                want = evaluate(stride, env)
                if arr.shape[k] > 1 and want is not None and want * arr.itemsize != step:
                    got = tuple(s // arr.itemsize for s in arr.strides)
                    raise self.error(p, f"expected strides {self._strides(b, env)}, got {got}")
        elif not arr.flags.c_contiguous:
            raise self.error(p, "expected a C-contiguous array (numpy.ascontiguousarray makes one)")
        if b.elem_offset is not None and evaluate(b.elem_offset, env) not in (0, None):
            raise self.error(p, "the buffer declares a nonzero element offset")

    def _shape_message(
        self, b: tir.Buffer, arr: np.ndarray, env: dict[tir.Var, int], origin: dict[tir.Var, str]
    ) -> str:
        want = (
            "("
            + ", ".join(_show(d, env) for d in b.shape)
            + ("," if len(b.shape) == 1 else "")
            + ")"
        )
        notes = [
            f"{d.name} = {env[d]} from {origin[d]}"
            for d in b.shape
            if isinstance(d, tir.Var) and d in env
        ]
        note = f" ({'; '.join(notes)})" if notes else ""
        return f"expected shape {want}, got {arr.shape}{note}"

    def _strides(self, b: tir.Buffer, env: dict[tir.Var, int]) -> str:
        return "(" + ", ".join(_show(s, env) for s in b.strides) + ")"

    def _check_overlap(self, args: Sequence[Any]) -> None:
        for i, p in self.buffers:
            if i not in self.written:
                continue
            for j, q in self.buffers:
                if i != j and np.may_share_memory(args[i], args[j]):
                    raise self.error(
                        p, f"the array overlaps parameter '{q.name}'; outputs must not alias"
                    )


def _static_shape(b: tir.Buffer | None) -> tuple[int, ...] | None:
    if b is None or not all(isinstance(d, tir.IntImm) for d in b.shape):
        return None
    return tuple(d.value for d in b.shape)  # type: ignore[union-attr]
