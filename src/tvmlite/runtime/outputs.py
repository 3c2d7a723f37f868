"""Results in another array library: `ex.with_output("torch")` is `ex` with every
callable's results handed over as torch tensors (zero-copy, sharing memory), so
torch code calls compiled functions with torch tensors in and gets torch tensors
out. Inputs need no switch: any DLPack producer is accepted as it is.

The converted module holds the original, so machine code stays mapped while a
converted callable exists. Prim values (Python numbers) and shapes (tuples of
ints) are returned as they are; tuples of results are converted item by item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError

OUTPUTS = ("numpy", "torch")


def converter(kind: str) -> Callable[[np.ndarray], Any]:
    """How an output array becomes one of library `kind`."""
    if kind == "numpy":
        return _same
    if kind == "torch":
        try:
            import torch  # noqa: PLC0415 - optional: only this switch needs it
        except ImportError:
            raise TVMLiteError("with_output('torch') needs PyTorch installed") from None
        return torch.from_numpy  # zero-copy like from_dlpack, at half its cost a call
    raise TVMLiteError(f"with_output: kind must be one of {', '.join(OUTPUTS)}, got {kind!r}")


def _same(array: np.ndarray) -> np.ndarray:
    return array


class ConvertedFunction:
    """A compiled function whose array results are converted."""

    def __init__(self, function: Any, convert: Callable[[np.ndarray], Any]) -> None:
        self.function = function
        self.convert = convert

    def __call__(self, *args: Any) -> Any:
        return _converted(self.function(*args), self.convert)

    def __repr__(self) -> str:
        return f"<{self.function!r} -> {self.convert.__module__.split('.')[0]}>"


def _converted(result: Any, convert: Callable[[np.ndarray], Any]) -> Any:
    if isinstance(result, np.ndarray):
        return convert(result)
    if isinstance(result, tuple):
        return tuple(_converted(item, convert) for item in result)
    return result


class ConvertedModule:
    """`module[name]` with its results converted; the rest is the module's."""

    def __init__(self, module: Any, kind: str) -> None:
        self.module = module
        self.kind = kind
        self._convert = converter(kind)

    def __getitem__(self, name: str) -> ConvertedFunction:
        return ConvertedFunction(self.module[name], self._convert)

    @property
    def functions(self) -> list[str]:
        return self.module.functions

    def __contains__(self, name: str) -> bool:
        return name in self.module

    def __iter__(self) -> Iterator[str]:
        return iter(self.module)

    def __repr__(self) -> str:
        return f"<{self.module!r} with {self.kind} outputs>"
