"""IRModule: named functions (prim, graph, extern) plus module attributes,
global infos and the metadata table of constants that have no text form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tvmlite.diagnostics import Span
from tvmlite.dsl import relax, tir
from tvmlite.dsl.comments import Comments
from tvmlite.dsl.printable import Printable

Function = tir.PrimFunc | relax.Function | relax.ExternFunc

CLASSIC, TVM027 = "classic", "tvm-0.27"
DIALECTS = (CLASSIC, TVM027)


@dataclass(eq=False, repr=False)  # Printable's one-line repr
class IRModule(Printable):
    """`functions` maps a function's global name to it, in definition order.
    `dialect` is the spelling the text came in (None when built in code: prints
    classic)."""

    functions: dict[str, Function] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)
    global_infos: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, list[Any]] = field(default_factory=dict)
    dialect: str | None = None
    span: Span | None = field(default=None, repr=False)
    # the comments of the text it was parsed from (dsl/comments.py); never compared
    comments: Comments | None = field(default=None, repr=False, compare=False)

    def __getitem__(self, name: str) -> Function:
        return self.functions[name]

    def __contains__(self, name: str) -> bool:
        return name in self.functions


@dataclass(frozen=True, slots=True)
class RawCall:
    """A call inside `I.module_global_infos` data (`I.vdevice(...)`), kept as written."""

    func: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
