"""Results in another array library: `ex.with_output("torch")` is `ex` with every
callable's results handed over as torch tensors (zero-copy, sharing memory), so
torch code calls compiled functions with torch tensors in and gets torch tensors
out. Inputs need no switch: any DLPack producer is accepted as it is.

A graph function's native wrapper converts the results itself (it calls the
converter on each array it makes: no Python frame in between); the Python path
converts what it returns. Prim values (Python numbers) and shapes (tuples of
ints) are returned as they are; tuples of results are converted item by item.
Prim functions return nothing, so they are the module's own. The converted
module holds the original, so machine code stays mapped while a converted
callable exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError

OUTPUTS = ("numpy", "torch")
Convert = Callable[[np.ndarray], Any]


def converter(kind: str) -> Convert | None:
    """How an output array becomes one of library `kind` (None: it stays one)."""
    if kind == "numpy":
        return None
    if kind == "torch":
        try:
            import torch  # noqa: PLC0415 - optional: only this switch needs it
        except ImportError:
            raise TVMLiteError("with_output('torch') needs PyTorch installed") from None
        # Zero-copy, the tensor keeping the array (and so its block) alive; the
        # cheapest of torch's ways per call: from_dlpack, or the C exchange API's
        # import of our block, cost about twice as much.
        return torch.from_numpy
    raise TVMLiteError(f"with_output: kind must be one of {', '.join(OUTPUTS)}, got {kind!r}")


def kind_of(convert: Convert) -> str:
    """The library a converter makes results of (for reprs)."""
    return (getattr(convert, "__module__", None) or "?").split(".")[0]


def converted(result: Any, convert: Convert) -> Any:
    """`result` with every array in it converted."""
    if isinstance(result, np.ndarray):
        return convert(result)
    if isinstance(result, tuple):
        return tuple(converted(item, convert) for item in result)
    return result


class ConvertedModule:
    """`module[name]` with its results converted; the rest is the module's."""

    def __init__(self, module: Any, kind: str) -> None:
        self.module = module
        self.kind = kind
        self._convert = converter(kind)
        self._made: dict[str, Any] = {}  # each function's converting twin, made once

    def __getitem__(self, name: str) -> Any:
        function = self.module[name]  # checks the name
        if self._convert is None or not hasattr(function, "with_output"):
            return function
        found = self._made.get(name)
        if found is None:
            found = self._made.setdefault(name, function.with_output(self._convert))
        return found

    @property
    def functions(self) -> list[str]:
        return self.module.functions

    def __contains__(self, name: str) -> bool:
        return name in self.module

    def __iter__(self) -> Iterator[str]:
        return iter(self.module)

    def __repr__(self) -> str:
        return f"<{self.module!r} with {self.kind} outputs>"
