"""Testing helpers for users of tvmlite: hypothesis strategies that build
well-formed IR (`tvmlite.testing.strategies`). Needs `hypothesis` installed
(the `test` extra); nothing else in tvmlite imports this package."""

from tvmlite.testing.options import ALL_CONSTRUCTS, Options

__all__ = ["ALL_CONSTRUCTS", "Options"]
