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

    def show(self, **options: Any) -> None:
        """Print highlighted (ANSI in a terminal, plain when piped)."""
        from tvmlite.printer import show

        show(self, **options)

    def __str__(self) -> str:
        return self.script()
