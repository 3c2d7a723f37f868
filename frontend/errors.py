"""Errors of the importer: a program it cannot translate, and the list of the ATen
operators it does not convert, each with where the user's model called it."""

from __future__ import annotations

from tvmlite.diagnostics import TVMLiteError


class FrontendError(TVMLiteError):
    """A program the importer cannot translate."""


class UnsupportedOperatorsError(FrontendError):
    """Every ATen operator of a program that has no converter, at once. `operators`
    maps each name to the places (the user's source line) it was called from."""

    def __init__(self, operators: dict[str, list[str]]) -> None:
        self.operators = operators
        lines = [
            f"the program uses {len(operators)} operator"
            f"{'s' if len(operators) != 1 else ''} the importer does not convert:"
        ]
        for name, places in operators.items():
            lines.append(f"  aten.{name}" if "." in name else f"  {name}")
            for place in places:
                lines.extend("      " + line for line in place.splitlines())
        super().__init__("\n".join(lines))
