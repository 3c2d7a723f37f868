"""Testing helpers for users of tvmlite: hypothesis strategies that build
well-formed IR (`tvmlite.testing.strategies`; needs `hypothesis`, the `test`
extra), random arguments to run what they draw (`random_arguments`) and a
reference interpreter (`tvmlite.testing.reference`). Nothing else in tvmlite
imports this package."""

from tvmlite.testing.arguments import random_arguments
from tvmlite.testing.options import ALL_CONSTRUCTS, Options

__all__ = ["ALL_CONSTRUCTS", "Options", "random_arguments"]
