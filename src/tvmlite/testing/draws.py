"""Cheap draws: the strategies every generator step uses, built once.

Hypothesis validates a strategy object on its first draw; generators draw
hundreds of times per example, so building `st.integers(0, 3)` afresh each time
dominated the run time. The cache holds immutable strategy values only."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

Item = TypeVar("Item")
Draw = Callable[[st.SearchStrategy[Any]], Any]

BOOLS = st.booleans()


@functools.lru_cache(maxsize=256)
def ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


def pick(draw: Draw, items: Sequence[Item] | Any) -> Item:
    """One of `items` (which shrinks towards the first)."""
    seq = items if isinstance(items, Sequence) else list(items)
    return seq[draw(ints(0, len(seq) - 1))]
