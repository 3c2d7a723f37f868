"""TVMScript text for modules and functions, byte for byte as TVM prints it, in
either dialect ("classic" or "tvm-0.27").

    script(mod)                      # in the dialect the module was parsed from
    script(func, dialect="classic")  # a lone PrimFunc or Relax function
    show(mod)                        # highlighted: ANSI in a terminal, HTML in Jupyter
    format_text(text)                # `tvms fmt`: canonical text, every comment kept
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl.module import CLASSIC, TVM027, IRModule
from tvmlite.dsl.relax import Function as RelaxFunction
from tvmlite.dsl.tir import PrimFunc
from tvmlite.printer.context import check_dialect
from tvmlite.printer.format import format_text
from tvmlite.printer.module import print_function, print_module

__all__ = ["format_text", "script", "show"]


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


def show(
    obj: Any,
    style: str | type | None = None,
    *,
    dialect: str | None = None,
    show_meta: bool = False,
    line_numbers: bool = False,
    color: str = "auto",
    file: TextIO | None = None,
    **options: Any,
) -> None:
    """Print `script(obj)` highlighted: HTML in Jupyter, ANSI colour on a terminal
    (24-bit when COLORTERM says so), plain text when piped, with NO_COLOR set, or
    with `color="never"`. Stripping the colour gives back `script()` exactly.

    `style` is "light", "dark", "ansi" or any Pygments style (name or class);
    the default is "light" in notebooks and "ansi" (the terminal's palette) in
    terminals. `file` defaults to sys.stdout; a notebook renders HTML only when
    no `file` is given."""
    if color not in ("auto", "always", "never"):
        raise TVMLiteError(f"color must be 'auto', 'always' or 'never', not {color!r}")
    text = script(obj, dialect=dialect, show_meta=show_meta, **options)
    from tvmlite.printer import highlight  # pygments formatters only when showing

    if style is not None:
        highlight.resolve_style(style)  # a bad style is an error even when plain
    if file is None and color != "never" and "ipykernel" in sys.modules:
        if _display_html(highlight.html_text(text, style or "light", line_numbers)):
            return
    stream = sys.stdout if file is None else file
    plain = color == "never" or (
        color == "auto" and (not _is_terminal(stream) or "NO_COLOR" in os.environ)
    )
    if plain:
        stream.write(highlight.number_lines(text) if line_numbers else text)
        return
    coloured = highlight.ansi_text(
        text, style or "ansi", truecolor=highlight.wants_truecolor(os.environ)
    )
    stream.write(highlight.number_lines(coloured, dim=True) if line_numbers else coloured)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _display_html(html: str) -> bool:
    """Render in the running notebook; False when IPython is not importable."""
    try:
        from IPython.display import HTML, display
    except ImportError:
        return False
    display(HTML(html))
    return True


def _function_dialect(func: PrimFunc | RelaxFunction) -> str:
    # NB: no `tir`/`relax` names in this package namespace: the submodules
    # printer/tir.py and printer/relax.py take them.
    if isinstance(func, PrimFunc) and (
        func.s_tir or any(key.startswith("tirx.") for key, _ in func.attrs)
    ):
        return TVM027
    return CLASSIC
