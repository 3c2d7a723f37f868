"""IRModule: named functions (prim, graph, extern) plus module attributes,
global infos and the metadata table of constants that have no text form.

A module is immutable: its tables are read-only mappings, and a pass makes a
new module with `with_functions` (same attributes, new functions) or `replace`
(any field), so a module a caller still holds never changes under it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tvmlite.diagnostics import Span
from tvmlite.dsl import relax, tir
from tvmlite.dsl.comments import Comments
from tvmlite.dsl.printable import Printable

Function = tir.PrimFunc | relax.Function | relax.ExternFunc

CLASSIC, TVM027 = "classic", "tvm-0.27"
DIALECTS = (CLASSIC, TVM027)

_TABLES = ("functions", "attrs", "global_infos", "metadata")


@dataclass(frozen=True, eq=False, repr=False)  # Printable's one-line repr
class IRModule(Printable):
    """`functions` maps a function's global name to it, in definition order.
    `dialect` is the spelling the text came in (None when built in code: prints
    classic). The tables are copied into read-only mappings on construction."""

    functions: Mapping[str, Function] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)
    global_infos: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, list[Any]] = field(default_factory=dict)
    dialect: str | None = None
    span: Span | None = field(default=None, repr=False)
    # the comments of the text it was parsed from (dsl/comments.py); never compared
    comments: Comments | None = field(default=None, repr=False, compare=False)
    # Code the kernel compilers of other target kinds made for packed calls of the
    # module (symbol -> callable, ctypes function or address: lowering/target.py's
    # TIRToRuntime), bound into what is built from it: TVM's `external_mods`.
    # Compiled code has no text: never printed, never compared.
    external_code: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in (*_TABLES, "external_code"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def __getitem__(self, name: str) -> Function:
        return self.functions[name]

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def replace(self, **changes: Any) -> IRModule:
        """A copy with the given fields replaced (`functions=`, `attrs=`, `dialect=`...)."""
        return dataclasses.replace(self, **changes)

    def with_functions(self, functions: Mapping[str, Function]) -> IRModule:
        """This module with `functions` instead of its own; itself when every
        function is the one it already has (so "nothing changed" stays `is`)."""
        same = list(functions) == list(self.functions) and all(
            functions[name] is func for name, func in self.functions.items()
        )
        return self if same else self.replace(functions=functions)


@dataclass(frozen=True, slots=True)
class RawCall:
    """A call inside `I.module_global_infos` data (`I.vdevice(...)`,
    `R.device_mesh(...)`), kept as written."""

    func: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
