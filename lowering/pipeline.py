"""Named compilation pipelines: what `build(mod, pipeline="name")` runs before
code generation.

A pipeline is a function returning a fresh pass (a `Sequential`), looked up by
name, so a target or a user can add one without touching `build`. For now
"minimal" and "default" both only legalize; scheduling and fusion join
"default" as they land.
"""

from __future__ import annotations

from collections.abc import Callable

from tvmlite.diagnostics import TVMLiteError
from tvmlite.lowering.transform import Pass, Sequential

PipelineFn = Callable[[], Pass]


def legalize_pass() -> Pass:
    """LegalizeOps, imported here only: the one place build depends on it."""
    from tvmlite.lowering.passes import LegalizeOps

    return LegalizeOps()


def minimal() -> Pass:
    return Sequential([legalize_pass()], name="minimal")


def default() -> Pass:
    return Sequential([legalize_pass()], name="default")


PIPELINES: dict[str, PipelineFn] = {"minimal": minimal, "default": default}


def register_pipeline(name: str, make: PipelineFn, override: bool = False) -> None:
    """Make `build(mod, pipeline=name)` run `make()`."""
    if name in PIPELINES and not override:
        raise TVMLiteError(f"pipeline '{name}' already exists (override=True replaces it)")
    PIPELINES[name] = make


def get_pipeline(name: str) -> Pass:
    make = PIPELINES.get(name)
    if make is None:
        known = ", ".join(sorted(PIPELINES))
        raise TVMLiteError(f"unknown pipeline '{name}' (known: {known})")
    return make()
