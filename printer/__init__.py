"""TVMScript text for modules and functions, byte for byte as TVM prints it, in
either dialect ("classic" or "tvm-0.27").

    script(mod)                      # in the dialect the module was parsed from
    script(func, dialect="classic")  # a lone PrimFunc or Relax function
    show(mod)                        # highlighted: ANSI in a terminal, HTML in Jupyter
    save(mod, "m.tvms")              # the text, and m.constants.npz when it has constants
    format_text(text)                # `tvms fmt`: canonical text, every comment kept
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl.module import CLASSIC, TVM027, IRModule
from tvmlite.dsl.relax import Function as RelaxFunction
from tvmlite.dsl.tir import PrimFunc
from tvmlite.printer.context import Printed, check_dialect
from tvmlite.printer.format import format_text
from tvmlite.printer.module import print_function, print_module
from tvmlite.printer.options import PrintOptions, print_options, reindent
from tvmlite.printer.wrap import wrap_signatures

__all__ = ["format_text", "save", "script", "show"]


def script(obj: Any, dialect: str | None = None, **options: Any) -> str:
    """Canonical text of `obj` (IRModule, tir.PrimFunc or relax.Function).

    `dialect` defaults to the module's own (`IRModule.dialect`), else classic; a lone
    function prints in the spelling of the text it was parsed from, else in 0.27 spelling
    when it can only be 0.27 (an `s_tir` PrimFunc or a `tirx.` attribute). `options` are
    TVM's printer options (printer/options.py): `name`, `indent_spaces`,
    `print_line_numbers`, `syntax_sugar`, `show_all_ty`;
    TVM's others only at their default; anything else is a TypeError."""
    return _script(obj, dialect, print_options("script", options))


def save(obj: Any, path: str | os.PathLike[str], dialect: str | None = None) -> None:
    """Write `script(obj)` to `path` and, when the text refers to constants, their
    values to the constants file beside it (`m.constants.npz` for `m.tvms`, keyed
    `ir.GenericConst/i` for `metadata["ir.GenericConst"][i]`), which
    `tvmlite.parse_file(path)` reads back: the pair parses to a structurally equal
    module with the same values. Both files are written atomically."""
    from tvmlite.dsl.metadata import save_table, sidecar_path
    from tvmlite.runtime.export import write_atomic

    printed = _printed(obj, dialect, print_options("save", {}))
    target = Path(path)
    if printed.constants:  # first: whoever reads the new text finds its values
        save_table(sidecar_path(target), printed.table_key, printed.constants)
    write_atomic(target, printed.text, mode=0o644)


def _script(obj: Any, dialect: str | None, options: PrintOptions) -> str:
    return _printed(obj, dialect, options).text


def _printed(obj: Any, dialect: str | None, options: PrintOptions) -> Printed:
    if isinstance(obj, IRModule):
        printed = print_module(obj, check_dialect(dialect or obj.dialect or CLASSIC), options)
    elif isinstance(obj, (PrimFunc, RelaxFunction)):
        printed = print_function(obj, check_dialect(dialect or _function_dialect(obj)), options)
    else:
        raise TVMLiteError(f"cannot print a {type(obj).__name__}: expected an IRModule or function")
    text = reindent(printed.text, options.indent_spaces)
    if options.print_line_numbers:
        from tvmlite.printer.highlight import number_lines

        text = number_lines(text)
    return replace(printed, text=text)


def show(
    obj: Any,
    style: str | type | None = None,
    black_format: bool | None = None,
    *,
    dialect: str | None = None,
    color: str = "auto",
    file: TextIO | None = None,
    width: int | None = None,
    **options: Any,
) -> None:
    """Print `script(obj)` highlighted: HTML in Jupyter, ANSI colour on a terminal
    (24-bit when COLORTERM says so), plain text when piped, with NO_COLOR set or
    TERM=dumb, or with `color="never"`; FORCE_COLOR or CLICOLOR_FORCE colour pipes
    too (highlight.wants_colour). Stripping the colour gives back `script()` exactly.

    `style` is "light", "dark", "ansi" or any Pygments style (name or class); the
    default is $TVMLITE_STYLE, else "light" in notebooks and "ansi" (the
    terminal's palette) in terminals. `black_format=True` reformats the text with
    the `black` package (not a dependency: an error when it is not installed).
    `options` are script()'s. `file` defaults to sys.stdout; a notebook renders
    HTML only when no `file` is given. `width=N` puts each parameter of a signature
    longer than N characters on a line of its own (printer/wrap.py); the text then
    differs from `script()` there, and still parses to the same module."""
    if color not in ("auto", "always", "never"):
        raise TVMLiteError(f"color must be 'auto', 'always' or 'never', not {color!r}")
    if black_format not in (None, True, False):
        raise TVMLiteError(f"black_format must be True or False, not {black_format!r}")
    config = print_options("show", options)
    numbered = config.print_line_numbers  # numbers go on after colour, dimmed
    if width is not None and (type(width) is not int or width < 1):
        raise TVMLiteError(f"width must be a positive int, not {width!r}")
    text = _script(obj, dialect, replace(config, print_line_numbers=False))
    if width is not None:
        text = wrap_signatures(text, width)
    if black_format:
        text = _black(text)
    from tvmlite.printer import highlight  # pygments formatters only when showing

    if style is not None:
        highlight.resolve_style(style)  # a bad style is an error even when plain
    if file is None and color != "never" and "ipykernel" in sys.modules:
        html = highlight.html_text(text, style or highlight.default_style(html=True), numbered)
        if _display_html(html):
            return
    stream = sys.stdout if file is None else file
    if not highlight.wants_colour(color, _is_terminal(stream), os.environ):
        stream.write(highlight.number_lines(text) if numbered else text)
        return
    coloured = highlight.ansi_text(
        text,
        style or highlight.default_style(html=False),
        truecolor=highlight.wants_truecolor(os.environ),
    )
    stream.write(highlight.number_lines(coloured, dim=True) if numbered else coloured)


def _black(text: str) -> str:
    try:
        import black
    except ImportError:
        raise TVMLiteError(
            "black_format=True needs the 'black' package (pip install black)"
        ) from None
    return black.format_str(text, mode=black.Mode())


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
    if func.dialect is not None:
        return func.dialect
    if isinstance(func, PrimFunc) and (
        func.s_tir or any(key.startswith("tirx.") for key, _ in func.attrs)
    ):
        return TVM027
    return CLASSIC
