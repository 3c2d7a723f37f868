"""`script()`, `show()` and `str()` for the objects users hold: modules and
functions. The printing itself lives in `tvmlite.printer`."""

from __future__ import annotations

from typing import Any


class Printable:
    __slots__ = ()

    def script(self, dialect: str | None = None, **options: Any) -> str:
        """Canonical text; `dialect` is "classic" or "tvm-0.27" (default: as parsed)."""
        from tvmlite.printer import script  # the printer imports the IR: import late

        return script(self, dialect=dialect, **options)

    def show(self, style: Any = None, **options: Any) -> None:
        """Print highlighted (ANSI in a terminal, HTML in Jupyter, plain when piped)."""
        from tvmlite.printer import show

        show(self, style, **options)

    def _repr_html_(self) -> str:
        """What a notebook cell shows: the text highlighted with inline styles."""
        from tvmlite.printer.highlight import html_text

        return html_text(self.script(), "light")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's plain-text repr: the script, not the dataclass fields."""
        printer.text(self.script())

    def __str__(self) -> str:
        return self.script()
