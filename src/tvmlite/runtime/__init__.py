"""Running compiled code: the Executable of a build, prim-function kernels on
NumPy arrays, DLPack interop and the packed-function registry.

The compiled-code parts load llvmlite, so they are imported on first use:
`import tvmlite` (parse, print) stays light.
"""

from typing import Any

from tvmlite.runtime.registry import get_global_func, register_func

_LAZY = {
    "Executable": "tvmlite.runtime.executable",
    "GraphFunction": "tvmlite.runtime.graph_call",
    "Library": "tvmlite.runtime.loader",
    "PrimFuncKernel": "tvmlite.runtime.kernels",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tvmlite.runtime' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [*_LAZY, "get_global_func", "register_func"]
