"""`script()`, `show()`, `str()` and `repr()` for the objects users hold: modules
and functions. The printing itself lives in `tvmlite.printer`.

`str()` is the script (as TVM's); `repr()` is one line naming the functions and
parameters, so a list of modules, a debugger or an assertion message stays
readable (a module's dataclass fields run to kilobytes). Notebooks and IPython
show the script through `_repr_html_` and `_repr_pretty_`.
"""

from __future__ import annotations

from typing import Any

MAX_LISTED = 8  # functions a module's repr names before "..."


class Printable:
    __slots__ = ()

    def script(self, dialect: str | None = None, **options: Any) -> str:
        """Canonical text; `dialect` is "classic" or "tvm-0.27" (default: as parsed);
        `options` are TVM's printer options (`indent_spaces=2`, ...)."""
        from tvmlite.printer import script  # the printer imports the IR: import late

        return script(self, dialect=dialect, **options)

    def save(self, path: Any, dialect: str | None = None) -> None:
        """Write the script to `path` and its constants, if any, to the constants
        file beside it (`m.tvms` -> `m.constants.npz`); `tvmlite.parse_file(path)`
        reads the pair back."""
        from tvmlite.printer import save

        save(self, path, dialect)

    def show(self, style: Any = None, black_format: bool | None = None, **options: Any) -> None:
        """Print highlighted (ANSI in a terminal, HTML in Jupyter, plain when piped)."""
        from tvmlite.printer import show

        show(self, style, black_format, **options)

    def _repr_html_(self) -> str:
        """What a notebook cell shows: the text highlighted with inline styles."""
        from tvmlite.printer.highlight import default_style, html_text

        return html_text(self.script(), default_style(html=True))

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's plain-text repr: the script, not the dataclass fields."""
        printer.text(self.script())

    def __str__(self) -> str:
        return self.script()

    def __repr__(self) -> str:
        functions = getattr(self, "functions", None)
        if functions is None:  # a function: its kind, symbol and parameters
            symbol = self.attr("global_symbol")  # type: ignore[attr-defined]
            params = ", ".join(p.name for p in self.params)  # type: ignore[attr-defined]
            kind = "tir.PrimFunc" if hasattr(self, "buffer_map") else "relax.Function"
            return f"<{kind} {symbol or ''}({params})>".replace(" (", "(")
        listed = [f"{name} ({_kind(f)})" for name, f in list(functions.items())[:MAX_LISTED]]
        if len(functions) > MAX_LISTED:
            listed.append(f"... {len(functions)} functions")
        return f"<IRModule: {', '.join(listed) or 'empty'}>"


def _kind(func: Any) -> str:
    return type(func).__module__.rsplit(".", 1)[-1] + "." + type(func).__name__
