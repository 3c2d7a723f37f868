"""TVMScript text for modules and functions, byte for byte as TVM prints it, in
either dialect ("classic" or "tvm-0.27").

    script(mod)                      # in the dialect the module was parsed from
    script(func, dialect="classic")  # a lone PrimFunc or Relax function
    show(mod)                        # highlighted when stdout is a terminal
"""

from __future__ import annotations

import os
import sys
from typing import Any

from tvmlite.dsl.module import CLASSIC, TVM027, IRModule
from tvmlite.dsl.relax import Function as RelaxFunction
from tvmlite.dsl.tir import PrimFunc
from tvmlite.printer.context import check_dialect
from tvmlite.printer.module import print_function, print_module

from tvmlite.diagnostics import TVMLiteError

__all__ = ["script", "show"]


def script(obj: Any, dialect: str | None = None, **options: Any) -> str:
    """Canonical text of `obj` (IRModule, tir.PrimFunc or relax.Function).

    `dialect` defaults to the module's own (`IRModule.dialect`), else classic; a lone
    function prints in 0.27 spelling when it can only be 0.27 (an `s_tir` PrimFunc or
    a `tirx.` attribute). `options` are accepted for TVM compatibility and ignored."""
    del options  # TVM's printer options (show_meta, ...) have no effect yet
    if isinstance(obj, IRModule):
        return print_module(obj, check_dialect(dialect or obj.dialect or CLASSIC))
    if isinstance(obj, (PrimFunc, RelaxFunction)):
        return print_function(obj, check_dialect(dialect or _function_dialect(obj)))
    raise TVMLiteError(f"cannot print a {type(obj).__name__}: expected an IRModule or function")


def show(obj: Any, color: str = "auto", **options: Any) -> None:
    """Print `script(obj)`, coloured by pygments' Python lexer when `color` is
    "always", or "auto" on a terminal without NO_COLOR set. The text is the same
    with and without colour."""
    text = script(obj, **options)
    if color not in ("auto", "always", "never"):
        raise TVMLiteError(f"color must be 'auto', 'always' or 'never', not {color!r}")
    plain = color == "never" or (
        color == "auto" and (not sys.stdout.isatty() or "NO_COLOR" in os.environ)
    )
    if plain:
        sys.stdout.write(text)
        return
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers.python import PythonLexer
    except ImportError:  # colour is optional
        sys.stdout.write(text)
        return
    sys.stdout.write(highlight(text, PythonLexer(), TerminalFormatter()))


def _function_dialect(func: PrimFunc | RelaxFunction) -> str:
    # NB: no `tir`/`relax` names in this package namespace: the submodules
    # printer/tir.py and printer/relax.py take them.
    if isinstance(func, PrimFunc) and (
        func.s_tir or any(key.startswith("tirx.") for key, _ in func.attrs)
    ):
        return TVM027
    return CLASSIC
