"""Executables the garbage collector tears down, run in a fresh process by
test_teardown.py (with an allocator that overwrites what it frees).

`python teardown_probe.py ROUNDS` builds, each round, a small module (a native
wrapper per function), a large one (one wrapper for all, records in capsules)
and a view converting its results, calls each through its native wrapper, drops
them and collects: a callable and its wrapper's builtin are one reference
cycle, freed by the collector only. Prints "ok" when every result was right.
"""

from __future__ import annotations

import gc
import sys

import numpy as np

import tvmlite
from tvmlite.lowering.codegen.llvm_host_module import SMALL_MODULE

SMALL = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        y = R.add(x, x)
        return y
"""


def large() -> str:
    """More graph functions than a module has wrappers of their own for."""
    functions = [
        f"""
    @R.function
    def f{k}(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        y = R.add(x, R.const({k}.0, "float32"))
        return y
"""
        for k in range(SMALL_MODULE + 1)
    ]
    return "@I.ir_module\nclass Module:" + "".join(functions)


def main() -> None:
    x = np.arange(8, dtype="float32")
    for _ in range(int(sys.argv[1])):
        small = tvmlite.build(tvmlite.parse(SMALL), cache=False)
        np.testing.assert_array_equal(small["main"](x), 2 * x)
        np.testing.assert_array_equal(small.with_output("numpy")["main"](x), 2 * x)
        big = tvmlite.build(tvmlite.parse(large()), cache=False)
        np.testing.assert_array_equal(big[f"f{SMALL_MODULE}"](x), x + SMALL_MODULE)
        del small, big
        gc.collect()
    print("ok")


if __name__ == "__main__":
    main()
