"""Running compiled code: the protocol every compiled module follows (`module.py`:
the Executable of a build, a loaded library), the native ABI and manifest it
reads, prim-function kernels on NumPy arrays, DLPack interop and the
packed-function registry.

The runtime sits below the compiler: it never imports `tvmlite.lowering` or
llvmlite, so loading and calling a built library needs neither. Its parts are
imported on first use: `import tvmlite` (parse, print) stays light.
"""

from typing import Any

from tvmlite.runtime.registry import get_global_func, register_func

_LAZY = {
    "CompiledModule": "tvmlite.runtime.module",
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
