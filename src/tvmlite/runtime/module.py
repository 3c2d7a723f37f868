"""The one protocol of compiled code: what `build()` returns (`Executable`, code
the JIT loaded) and what `load_module()` returns (`Library`, a shared library
the dynamic linker loaded) are both a `CompiledModule` over a `CodeImage`.

    m["main"](x, w)          # a graph function: arrays in, arrays/tuples out
    m["add"](a, b, out)      # a public prim function: destination-passing
    m.functions              # public names; m.export_library("m.so")
    m.with_output("torch")["main"](tx, tw)   # DLPack producers in, torch tensors out

The image says where its symbols are and what can be done with its code; the
module reads everything else from the manifest the code carries (docs/abi.md):
it binds the packed-function table, fills the table of CPython/NumPy addresses
the fast-call wrappers read, and makes one callable per function. Every
callable holds its module and the module holds its image, so machine code stays
mapped while anything can still run it.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from tvmlite.diagnostics import TVMLiteError, did_you_mean
from tvmlite.runtime import fastcall, profiling, registry
from tvmlite.runtime.abi import (
    PACKED_TABLE,
    PREFIX,
    PYTHON_API,
    KernelSignature,
    kernel_symbol,
    with_prefix,
)
from tvmlite.runtime.c_header import render_header
from tvmlite.runtime.export import (
    check_header_is_ours,
    check_prefix,
    guard_of,
    header_path,
    library_prefix,
    write_atomic,
)
from tvmlite.runtime.graph_call import GraphFunction
from tvmlite.runtime.kernels import PrimFuncKernel
from tvmlite.runtime.manifest import prefixed, signature_from_info, written_from_info
from tvmlite.runtime.outputs import ConvertedModule


class CodeImage(Protocol):
    """Loaded machine code: the JIT's (lowering/codegen/jit.py) or a shared
    library's (loader.py)."""

    def address(self, symbol: str) -> int:
        """Where `symbol` is; an error when the code does not define it."""
        ...

    def llvm_ir(self) -> str:
        """The optimized LLVM IR the code was made from."""
        ...

    def assembly(self) -> str: ...

    @property
    def fixed_prefix(self) -> str | None:
        """The prefix of symbols this code is bound to (a library kept only as a
        file), or None when it can be linked with any prefix."""
        ...

    @property
    def constant_arrays(self) -> tuple[Any, ...]:
        """What the code's constants read, in the manifest's order."""
        ...

    def write_library(
        self, path: Path, manifest: dict[str, Any], prefix: str, keep_apart: Sequence[bool] = ()
    ) -> None:
        """Write the code as a self-contained shared library (no header) with
        `manifest` whose exported symbols start with `prefix`; the bytes of the
        constants `keep_apart` marks are left out, to be bound when it is loaded
        (the compile cache's libraries)."""
        ...


class CompiledModule:
    """Compiled functions by name. `timings` holds milliseconds per stage of
    whatever made or loaded the module; a build that compiled says how many
    kernel units it had, loaded from the compile cache and compiled
    (`kernel_counts`), and how many prim functions it had, found lowered in the
    cache and lowered (`function_counts`, cached builds only)."""

    kernel_counts: dict[str, int] | None = None
    function_counts: dict[str, int] | None = None

    def __init__(
        self,
        image: CodeImage,
        manifest: dict[str, Any],
        kernels: Mapping[str, KernelSignature] | None = None,
        public_kernels: frozenset[str] = frozenset(),
        kernel_symbols: Mapping[str, str] | None = None,
        prefix: str = PREFIX,
        *,
        packed: Mapping[str, Any] | None = None,
    ) -> None:
        self.image = image
        # Packed functions of this module's own (code other target kinds compiled
        # for it), bound before the registry is asked.
        self._own_packed = {n: registry.make_packed(n, f) for n, f in (packed or {}).items()}
        self.manifest = manifest
        self.prefix = prefix  # of the symbols of the code (docs/abi.md)
        self.timings: dict[str, float] = {}
        # How to build this module again with profiling (`build` sets it), and that build.
        self.profiled_build: Callable[[], CompiledModule] | None = None
        self._profiled: CompiledModule | None = None
        self.packed_names: list[str] = manifest["packed"]
        self._installed: list[Any] = []  # packed trampolines the table points to
        self._table = None
        if self.packed_names:
            address = image.address(with_prefix(PACKED_TABLE, prefix))
            self._table = (ctypes.c_void_p * len(self.packed_names)).from_address(address)
        self._missing = set(self.packed_names)
        self.resolve_packed()
        functions = manifest["functions"]
        fast = any(fastcall.served(info) for info in functions.values())
        api_address = image.address(with_prefix(PYTHON_API, prefix)) if fast else 0
        fast = fast and fastcall.fill_api_table(api_address)
        self._python_api = api_address if fast else 0  # the wrappers' table, 0 when unused
        self._entries: dict[str, GraphFunction | PrimFuncKernel] = {}
        self._private: set[str] = set()
        for name, info in functions.items():
            params, ret = signature_from_info(info)
            wrapper, record = fastcall.addresses(image, info, prefix) if fast else (0, 0)
            address = image.address(info["symbol"])
            self._entries[name] = GraphFunction(
                self, name, params, ret, address, wrapper, record, written=written_from_info(info)
            )
            if not info.get("public", True):
                self._private.add(name)
        for name, sig in (kernels or {}).items():
            # Identical kernels share one unit: the symbol of the one compiled.
            symbol = (kernel_symbols or {}).get(name, kernel_symbol(name))
            self._entries[name] = PrimFuncKernel(self, sig, image.address(symbol))
            if name not in public_kernels:
                self._private.add(name)

    def serve_producer(self, args: tuple[Any, ...]) -> bool:
        """Let the wrappers read a producer type among `args` natively from now on
        (`fastcall.serve_producer`); True when one was newly set."""
        return bool(self._python_api) and fastcall.serve_producer(self._python_api, args)

    def _where(self) -> str:
        """How error messages name this module."""
        return "this module"

    # ------------------------------------------------------------ lookup

    @property
    def functions(self) -> list[str]:
        """Names of the public functions (all of them when none is public)."""
        public = [n for n in self._entries if n not in self._private]
        return public or list(self._entries)

    def __getitem__(self, name: str) -> GraphFunction | PrimFuncKernel:
        found = self._entries.get(name)
        if found is None or name not in self.functions:
            known = ", ".join(self.functions) or "none"
            reason = "is private" if found is not None else "does not exist"
            hint = did_you_mean(str(name), self.functions, quote=True) if found is None else ""
            raise TVMLiteError(
                f"function '{name}' {reason} in {self._where()}{hint} (public: {known})"
            )
        return found

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {', '.join(self.functions)}>"

    def with_output(self, kind: str) -> ConvertedModule:
        """This module with results returned as `kind` arrays: "numpy" (the
        default of every call) or "torch" (zero-copy: `torch.from_numpy`, which
        a graph function's native wrapper calls itself; `outputs.py`)."""
        return ConvertedModule(self, kind)

    # ------------------------------------------------------------ measuring

    def time_evaluator(
        self,
        func_name: str,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: float = 0,
        cooldown_interval_ms: float = 0,
        repeats_to_cooldown: int = 1,
    ) -> Callable[..., profiling.BenchmarkResult]:
        """A timer of function `func_name`, as TVM's `Module.time_evaluator`
        without its device: calling it with the function's arguments makes one
        untimed call, then `repeat` measurements of `number` calls each (more
        when a measurement is shorter than `min_repeat_ms`), and returns their
        `mean`, `median`, `min`, `max`, `std` and `results`, in seconds."""
        return profiling.time_evaluator(
            self[func_name],
            number,
            repeat,
            min_repeat_ms,
            cooldown_interval_ms,
            repeats_to_cooldown,
        )

    def profile(self, func_name: str, *args: Any, number: int = 1) -> profiling.ProfileReport:
        """Where `number` calls of `func_name` on `args` spend their time (after
        one untimed call): each kernel and packed function called (calls, total
        time, share) and the host's own work (argument checks, allocation, the
        call from Python). Runs in a profiled build of the same module (built
        once, on the first profile, through the compile cache): this module's
        code has no profiling in it."""
        return profiling.profile(self._profiled_module(), func_name, args, number)

    def _profiled_module(self) -> CompiledModule:
        if "profile" in self.manifest:
            return self
        if self._profiled is None:
            if self.profiled_build is None:
                raise TVMLiteError(
                    f"{self._where()} was compiled without profiling and tvmlite cannot "
                    "build it again: profile the module it came from (ex.profile, tvms run "
                    "FILE.tvms --profile), or export a profiled build (tvms build --profiled, "
                    "or a build under PassContext(config={'tvmlite.profile': True}))"
                )
            self._profiled = self.profiled_build()
        return self._profiled

    @property
    def total_ms(self) -> float:
        return sum(self.timings.values())

    # ------------------------------------------------------------ the code

    def llvm_ir(self) -> str:
        return self.image.llvm_ir()

    def assembly(self) -> str:
        return self.image.assembly()

    def export_library(self, path: str | os.PathLike, *, prefix: str | None = None) -> Path:
        """Write a self-contained shared library of the graph functions and its C
        header (`path` with suffix `.h`); see docs/abi.md. Returns the path. A
        header of that name that tvmlite did not write is never overwritten.

        Every symbol the library exports starts with `prefix` (by default the file
        name: `mlp_entry_main` in `mlp.so`), so several libraries link into one
        program. A library loaded from a file can only be copied, with its own."""
        out = Path(path)
        if out.suffix in ("", ".h"):
            raise TVMLiteError(f"{out}: give the library a suffix such as .so")
        fixed = self.image.fixed_prefix
        if prefix is None:
            prefix = fixed or library_prefix(out)
        check_prefix(prefix)
        if fixed is not None and prefix != fixed:
            raise TVMLiteError(
                f"export_library: prefix={prefix!r}: the symbols of {self._where()} "
                f"start with {fixed!r}, and a library loaded from a file cannot be relinked"
            )
        check_header_is_ours(header_path(out))
        manifest = prefixed(self.manifest, prefix)
        self.image.write_library(out, manifest, prefix)
        header = render_header(manifest, out.name, guard_of(out), prefix)
        write_atomic(header_path(out), header)
        return out

    # ------------------------------------------------------------ packed functions

    def resolve_packed(self) -> None:
        """Point the callback table at the module's own packed functions and the
        registered ones (registration may happen after the build: entries still
        missing are looked up on each call)."""
        if self._table is None:
            return
        for index, name in enumerate(self.packed_names):
            if name not in self._missing:
                continue
            found = self._own_packed.get(name) or registry.get_global_func(name, allow_missing=True)
            if found is not None:
                self._table[index] = found.address
                self._installed.append(found)
                self._missing.discard(name)

    @property
    def has_missing_packed(self) -> bool:
        return bool(self._missing)
