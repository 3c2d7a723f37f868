"""Testing helpers for users of tvmlite: hypothesis strategies that build
well-formed IR (`tvmlite.testing.strategies`; needs `hypothesis`, the `test`
extra), random arguments to run what they draw (`random_arguments`) and a
reference interpreter (`tvmlite.testing.reference`). Nothing else in tvmlite
imports this package. `strategies` and `reference` are attributes without an
import statement of their own, loaded on first use (hypothesis only then)."""

import importlib
from typing import Any

from tvmlite.testing.arguments import random_arguments
from tvmlite.testing.options import ALL_CONSTRUCTS, Options

_SUBMODULES = ("reference", "strategies")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"tvmlite.testing.{name}")
    raise AttributeError(f"module 'tvmlite.testing' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})


__all__ = ["ALL_CONSTRUCTS", "Options", "random_arguments", "reference", "strategies"]
