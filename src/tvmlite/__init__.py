"""tvmlite: a pure-Python, TVMScript-compatible compiler toolkit.

mod = tvmlite.parse(text)          # IRModule (or a lone function)
print(mod.script())                # canonical text, in the dialect it came in
tvmlite.structural_equal(a, b)     # equal up to renaming of bound variables
ex = tvmlite.build(mod)            # native code; ex["main"](*arrays)
"""

from typing import Any

from tvmlite.diagnostics import ParseError, TVMLiteError, VerifyError
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.parser import parse, parse_file
from tvmlite.dsl.structural import structural_equal, structural_hash
from tvmlite.runtime.registry import get_global_func, register_func

__version__ = "0.1.0"


def build(mod: Any, target: Any = "llvm", pipeline: Any = None) -> Any:
    """Compile an IRModule (or a lone function) to an `Executable` for the host CPU.
    LegalizeOps runs first unless `PassContext(config={"relax.transform.
    apply_legalize_ops": False})`; `pipeline` is a pass, a list of them or a name."""
    from tvmlite.lowering.build import build as _build

    return _build(mod, target=target, pipeline=pipeline)


def __getattr__(name: str) -> Any:
    # Imported on first use: it loads llvmlite, which parsing and printing never need.
    if name == "Executable":
        from tvmlite.runtime.executable import Executable

        return Executable
    raise AttributeError(f"module 'tvmlite' has no attribute {name!r}")


__all__ = [
    "Executable",
    "IRModule",
    "ParseError",
    "TVMLiteError",
    "VerifyError",
    "build",
    "get_global_func",
    "parse",
    "parse_file",
    "register_func",
    "structural_equal",
    "structural_hash",
]
