"""State shared by the printers while one module (or lone function) is printed.

TVM decides the header comments, the module-level `TypeVar` lines and the
metadata footer from what the function printers actually used, so the function
printers record that here and the module printer reads it at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax
from tvmlite.dsl.module import CLASSIC, DIALECTS, TVM027
from tvmlite.printer.names import NameTable
from tvmlite.printer.options import PrintOptions

if TYPE_CHECKING:
    from tvmlite.printer.tir import TIRPrinter

INDENT = "    "

# Metadata table keys of a non-scalar Relax constant, per dialect.
CONSTANT_KEY = {CLASSIC: "relax.expr.Constant", TVM027: "ir.GenericConst"}


@dataclass(frozen=True)
class Printed:
    """A printed module or function: its text, and the constants its
    `metadata["<table_key>"][i]` references name, in index order."""

    text: str
    table_key: str
    constants: tuple[relax.Constant, ...]


def check_dialect(dialect: str) -> str:
    if dialect not in DIALECTS:
        allowed = ", ".join(repr(d) for d in DIALECTS)
        raise TVMLiteError(f"unknown dialect {dialect!r}: expected one of {allowed}")
    return dialect


@dataclass
class PrintContext:
    """`module_functions` holds the global names of the enclosing module (None for
    a lone function: callees then print as bare names, as TVM does)."""

    dialect: str
    names: NameTable
    tir: TIRPrinter
    module_functions: frozenset[str] | None = None
    uses_tir: bool = False
    uses_ir: bool = False  # a lone function's `I.StringType()` needs the `I` import
    # 0.27's module-level symbolic vars: each function's new ones, sorted by name,
    # after those of the functions printed before it (TVM's order)
    typevars: dict[str, None] = field(default_factory=dict)
    function_typevars: set[str] = field(default_factory=set)
    constants: list[relax.Constant] = field(default_factory=list)
    constant_index: dict[int, int] = field(default_factory=dict)  # id -> metadata index
    options: PrintOptions = field(default_factory=PrintOptions)

    @property
    def module_name(self) -> str:
        return self.options.name or "Module"

    @property
    def classic(self) -> bool:
        return self.dialect == CLASSIC

    @property
    def constant_key(self) -> str:
        return CONSTANT_KEY[self.dialect]

    def metadata_ref(self, const: relax.Constant) -> str:
        """`metadata["<key>"][i]`, numbered as TVM's AddMetadata numbers: one entry
        per constant object, in the order they are printed (two constants of equal
        values are two entries)."""
        index = self.constant_index.setdefault(id(const), len(self.constants))
        if index == len(self.constants):
            self.constants.append(const)  # (also keeps the id unique while printing)
        return f'metadata["{self.constant_key}"][{index}]'

    def header(self, uses_ir: bool, uses_relax: bool) -> list[str]:
        """Header comments for the namespaces used, in TVM's order, then a blank line."""
        lines = []
        if self.typevars and not self.classic:
            lines.append("# from typing import TypeVar")
        if uses_ir or self.uses_ir:
            lines.append("# from tvm.script import ir as I")
        if self.uses_tir:
            if self.classic:
                lines.append("# from tvm.script import tir as T")
            else:
                lines.append("# from tvm.script import tirx as T")
                lines.append("# from tvm.tirx.layout import Axis")
        if uses_relax:
            lines.append("# from tvm.script import relax as R")
        lines.append("")
        return lines

    def end_function(self) -> None:
        """The symbolic vars the function just printed declared, in TVM's order."""
        for name in sorted(self.function_typevars - self.typevars.keys()):
            self.typevars[name] = None
        self.function_typevars.clear()

    def typevar_lines(self) -> list[str]:
        """0.27 declares symbolic variables once per module."""
        if self.classic:
            return []
        return [f'{name} = TypeVar("{name}")' for name in self.typevars]
