"""The value-level builtins of TVM's VM that Relax code calls by name
(`R.call_packed("vm.builtin.reshape", x, shape, ...)`, as TVM's lowered modules and
tests write them): registered on their first lookup, with TVM's meaning. The VM's
internals (shape heaps, closures, CUDA graphs, KV caches) are no builtin here: a
call of one stays an unregistered packed function, which the build names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tvmlite.runtime.registry import register_func


def _reshape(x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """A tensor of `x`'s elements in `shape` (TVM's is a view; the result is a copy
    here, which only a later in-place write could tell apart)."""
    return np.ascontiguousarray(x).reshape(tuple(int(d) for d in shape)).copy()


def _copy(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)


def _to_device(x: np.ndarray, device_type: Any, device_id: Any) -> np.ndarray:
    if int(device_type) != 1:  # DLPack's kDLCPU
        raise ValueError(f"vm.builtin.to_device: device type {int(device_type)} is not the CPU")
    return np.array(x, copy=True)


_BUILTINS: dict[str, Callable[..., Any]] = {
    "vm.builtin.reshape": _reshape,
    "vm.builtin.copy": _copy,
    "vm.builtin.to_device": _to_device,
}


def provide(name: str) -> None:
    """Register `name` if it is one of these builtins (the registry asks when a
    build or a library calls a `vm.builtin.*` function nobody registered)."""
    func = _BUILTINS.get(name)
    if func is not None:
        register_func(name, func)
