"""The table of ATen operators the importer converts, by the name TVM's translator
keys them with (`OpOverload.__name__`: `"relu.default"`, `"add.Tensor"`; Python
operators on symbolic sizes as `"add"`, `"getitem"`).

A converter takes the import state and the graph node and returns what the node
computes. The theme modules of `tvmlite.frontend.aten` fill the table when imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import fx

    from tvmlite.frontend.context import Converting

Converter = Callable[["Converting", "fx.Node"], Any]

CONVERTERS: dict[str, Converter] = {}


def converts(*names: str) -> Callable[[Converter], Converter]:
    """Decorator registering a converter for each of `names`."""

    def wrap(fn: Converter) -> Converter:
        for name in names:
            if name in CONVERTERS:
                raise ValueError(f"two converters for {name}")
            CONVERTERS[name] = fn
        return fn

    return wrap


def register(name: str, fn: Converter) -> None:
    """Register a converter object made by a factory (one per operator variant)."""
    converts(name)(fn)
