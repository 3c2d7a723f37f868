"""tvmlite: a pure-Python, TVMScript-compatible compiler toolkit.

mod = tvmlite.parse(text)          # IRModule (or a lone function)
print(mod.script())                # canonical text, in the dialect it came in
tvmlite.structural_equal(a, b)     # equal up to renaming of bound variables
tvmlite.assert_structural_equal(a, b)  # else an AssertionError: first difference, both sides
low = tvmlite.lower(mod)           # the module codegen consumes (lowered TIR)
ex = tvmlite.build(mod)            # native code; ex["main"](*arrays)
ex.export_library("m.so")          # C ABI + m.h; tvmlite.load_module("m.so")
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from tvmlite import platform_check  # noqa: F401 - first: refuses an unsupported system
from tvmlite.diagnostics import ParseError, TVMLiteError, VerifyError, did_you_mean
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.parse.module import parse, parse_file
from tvmlite.dsl.structural import assert_structural_equal, structural_equal, structural_hash
from tvmlite.runtime.registry import get_global_func, register_func

if TYPE_CHECKING:  # imported on first use at run time (`__getattr__`)
    from tvmlite import lowering as lowering
    from tvmlite import testing as testing
    from tvmlite import tir as tir
    from tvmlite import transform as transform
    from tvmlite.dsl import relax
    from tvmlite.dsl import tir as tir_ir
    from tvmlite.lowering.target import Target
    from tvmlite.runtime.executable import Executable
    from tvmlite.runtime.loader import Library

__version__ = "0.1.0"


def build(
    mod: IRModule | tir_ir.PrimFunc | relax.Function,
    target: str | Target = "llvm",
    pipeline: Any = None,
    cache: bool = True,
    checked: bool = False,
    params: Any = None,
    **tvm_pipelines: Any,
) -> Executable:
    """Compile an IRModule (or a lone function) to an `Executable` for `target`
    ("llvm", "llvm -mcpu=... -libs=blas" or a `Target`; for another machine,
    "llvm -mtriple=aarch64-linux-gnu", a `CrossExecutable` to export, not run
    here: docs/host-code.md). `pipeline` is a name
    ("fast", the default: the fastest correct build, fusion included; "minimal":
    only LegalizeOps; "default": TVM's fusion), a pass or a list of them;
    LegalizeOps also runs on what is left unless `PassContext(config={
    "relax.transform.apply_legalize_ops": False})`. Builds are cached on
    disk (docs/cli.md); `cache=False` or TVMLITE_NO_CACHE=1 skips the cache.
    `checked=True` (TVM's `PassContext(config={"tir.instrument_bound_checkers":
    True})`) checks every buffer access: out of bounds raises TVMLiteError.
    TVM's keywords `relax_pipeline=` (TVM's names: "default" only legalizes, "zero"
    fuses, None runs no pipeline) and `tir_pipeline=` work as in TVM
    (docs/extending.md, "Porting from TVM"). `params` binds weights to "main"
    (`transform.BindParams`): a mapping from parameter name to array, or the
    path of an `.npz` file of them; the entry then takes the other parameters
    (docs/constants.md)."""
    from tvmlite.lowering.build import build as _build

    executable: Executable = _build(
        mod, target, pipeline, cache, checked, params=params, **tvm_pipelines
    )
    return executable


def lower(
    mod: IRModule | tir_ir.PrimFunc | relax.Function,
    target: str | Target = "llvm",
    pipeline: Any = None,
    **tvm_pipelines: Any,
) -> IRModule:
    """Every step `build` runs before code generation, as passes under the current
    `PassContext`: the target's hooks, the pipeline, legalization and TIR
    lowering. Returns the module codegen consumes: graph functions and lowered
    prim functions (no blocks, flat buffers); `build(lower(mod))` builds the
    same code as `build(mod)`."""
    from tvmlite.lowering.build import lower as _lower

    return _lower(mod, target, pipeline, **tvm_pipelines)


def load_module(path: str | os.PathLike[str]) -> Library:
    """Load a shared library written by `Executable.export_library` (same calling
    interface as `build()`'s result; packed functions are bound now, by name)."""
    from tvmlite.runtime.loader import load_module as _load

    return _load(path)


# Subpackages reachable as attributes (`tvmlite.transform.PassContext`) without
# an import statement, imported on first use: the compiler loads llvmlite and the
# strategies load hypothesis, which parsing and printing never need.
_SUBMODULES = ("lowering", "testing", "tir", "transform")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"tvmlite.{name}")
    if name == "Executable":
        from tvmlite.runtime.executable import Executable

        return Executable
    if name == "Target":
        from tvmlite.lowering.target import Target

        return Target
    hint = did_you_mean(name, __dir__(), quote=True)
    raise AttributeError(f"module 'tvmlite' has no attribute {name!r}{hint}")


def __dir__() -> list[str]:  # tab completion sees the lazy names too
    return sorted({*globals(), *_SUBMODULES, "Executable", "Target"})


__all__ = [
    "Executable",
    "IRModule",
    "ParseError",
    "TVMLiteError",
    "Target",
    "VerifyError",
    "assert_structural_equal",
    "build",
    "get_global_func",
    "load_module",
    "lower",
    "parse",
    "parse_file",
    "register_func",
    "structural_equal",
    "structural_hash",
    "tir",
]
