"""Packed functions callable from compiled code: `tvmlite.register_func`.

    @tvmlite.register_func("my.add_one")
    def add_one(x):                 # NumPy arrays in (prim values as 0-d arrays)
        return x + 1                # an array, a tuple of them, or None

A registered function is called through the C signature every compiled entry
has (docs/abi.md), so a native function pointer registers the same way as a
Python callable. A Python callable gets a ctypes trampoline that turns its
arguments into NumPy views, its results into owned blocks, and any exception
into an error message and status: an exception must never cross the C frames.
The registry is the process's name table, as TVM's is. Packed functions
tvmlite itself provides (`tvmlite.blas.*`, which `-libs=blas` builds call; the value builtins
of TVM's VM, `vm.builtin.reshape`, `copy`, `to_device`) are
registered on their first lookup, so a library that calls them loads with no
extra step.
"""

from __future__ import annotations

import ctypes
import importlib
from _ctypes import CFuncPtr
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError
from tvmlite.runtime import dlpack

STATUS_PACKED = 4
PACKED_SIGNATURE = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.c_int32,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_int64,
)


@dataclass(frozen=True)
class PackedFunc:
    """A registered function: `address` is what compiled code calls; `keep` holds
    the ctypes trampoline (or the native function object) alive."""

    name: str
    address: int
    func: Any
    keep: Any


_REGISTRY: dict[str, PackedFunc] = {}
# Name prefixes of the packed functions tvmlite provides, and the module whose
# `provide(name)` registers one (compiling it: the compiler is imported then only).
_PROVIDERS = {
    "tvmlite.blas.": "tvmlite.lowering.blas.gemm",
    "vm.builtin.": "tvmlite.runtime.vm_builtins",
}


def register_func(
    name: str, f: Callable[..., Any] | int | None = None, override: bool = False
) -> Any:
    """Register `f` under `name` (as a decorator when `f` is omitted). `f` is a
    Python callable, a ctypes function with the packed signature, or an address."""
    if not isinstance(name, str) or not name:
        raise TVMLiteError("register_func needs a non-empty function name")

    def register(func: Any) -> Any:
        if name in _REGISTRY and not override:
            raise TVMLiteError(f"packed function '{name}' is already registered (override=True)")
        _REGISTRY[name] = make_packed(name, func)
        return func

    return register if f is None else register(f)


def get_global_func(name: str, allow_missing: bool = False) -> PackedFunc | None:
    """The packed function registered as `name` (one tvmlite provides is
    registered now); None or an error when there is none."""
    found = _REGISTRY.get(name)
    if found is None:
        found = _provided(name)
    if found is None and not allow_missing:
        raise TVMLiteError(f"no packed function named '{name}' is registered")
    return found


def _provided(name: str) -> PackedFunc | None:
    for prefix, module in _PROVIDERS.items():
        if name.startswith(prefix):
            importlib.import_module(module).provide(name)
            return _REGISTRY.get(name)
    return None


def remove_global_func(name: str) -> None:
    _REGISTRY.pop(name, None)


def list_global_func_names() -> list[str]:
    return sorted(_REGISTRY)


def make_packed(name: str, func: Any) -> PackedFunc:
    """`func` (a Python callable, a ctypes function with the packed signature, or
    an address) as the packed function `name`, registered nowhere."""
    if isinstance(func, int):
        return PackedFunc(name, func, func, None)
    if isinstance(func, CFuncPtr):  # a native function: call it directly
        return PackedFunc(name, ctypes.cast(func, ctypes.c_void_p).value or 0, func, func)
    if not callable(func):
        raise TVMLiteError(f"packed function '{name}' must be callable, got {type(func).__name__}")
    trampoline = PACKED_SIGNATURE(_Trampoline(name, func))
    address = ctypes.cast(trampoline, ctypes.c_void_p).value or 0
    return PackedFunc(name, address, func, trampoline)


class _Trampoline:
    """The C-callable side of a Python packed function."""

    def __init__(self, name: str, func: Callable[..., Any]) -> None:
        self.name = name
        self.func = func

    def __call__(
        self, args: Any, num_args: int, outs: Any, num_outs: int, err: int, err_len: int
    ) -> int:
        made: list[int] = []
        try:
            arrays = [dlpack.view_tensor(args[k]) for k in range(num_args)]
            result = self.func(*arrays)
            if num_outs == 0:
                return 0
            flat = _flatten(result)
            if len(flat) != num_outs:
                raise TVMLiteError(f"returned {len(flat)} values, the call expects {num_outs}")
            for k, value in enumerate(flat):
                made.append(dlpack.new_managed(np.asarray(value)))
                outs[k] = made[-1]
            return 0
        except BaseException as exc:  # noqa: BLE001 - nothing may unwind through C
            for block in made:
                dlpack.release_managed(block)
            message = f"packed function '{self.name}' raised {type(exc).__name__}: {exc}"
            _write_error(err, err_len, message)
            return STATUS_PACKED


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, tuple | list):
        out: list[Any] = []
        for v in value:
            out.extend(_flatten(v))
        return out
    if value is None:
        return []
    return [value]


def _write_error(err: int, err_len: int, message: str) -> None:
    if not err or err_len <= 0:
        return
    data = message.encode(errors="replace")[: err_len - 1] + b"\0"
    ctypes.memmove(err, data, len(data))
