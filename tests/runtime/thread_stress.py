"""One round of the thread stress test, run in a fresh process by
test_threads.py (and by hand: `python tests/runtime/thread_stress.py`).

Threads meet at a barrier before each phase so that they really start
together: they build several modules at once with an empty compile cache (all
compile and store, racing to create the cache's secret), build them again at
once (all load their cached library), then make the first call of every
function of every executable and library at once. Prints one line,
"ok <calls>", or exits non-zero (a crash is a signal).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import tvmlite
from tvmlite.lowering.codegen.llvm_host_module import SMALL_MODULE

THREADS = 8
CALLS = 20
# Two entries per module: first calls of different functions also meet.
SOURCE = """
@I.ir_module
class Module:
    @R.function
    def add{k}(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        z = R.add(x, y)
        return z

    @R.function
    def scale{k}(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        z = R.multiply(x, R.const({k}.0, "float32"))
        return z
"""
MODULES = 3
# And one module of more functions than a small module has: one shared fast-call
# wrapper serves them all (lowering/codegen/llvm_fastcall.py), its entries compiled
# apart (the glue); all its first calls meet too.
SCALE = """
    @R.function
    def scale{k}(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        z = R.multiply(x, R.const({k}.0, "float32"))
        return z
"""
LARGE = SMALL_MODULE + 2
LARGE_SOURCE = "@I.ir_module\nclass Module:" + "".join(
    SCALE.format(k=k) for k in range(1, LARGE + 1)
)


def run_together(work: list[Callable[[], None]], count: int) -> list[str]:
    """Run `work[i % len(work)]` on `count` threads released by one barrier;
    the errors they raised."""
    barrier = threading.Barrier(count)
    errors: list[str] = []

    def body(i: int) -> None:
        barrier.wait()
        try:
            work[i % len(work)]()
        except Exception as exc:  # noqa: BLE001 - reported by the parent
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def main() -> int:
    built: dict[tuple[str, int], Any] = {}

    def build(phase: str, k: int) -> Callable[[], None]:
        def go() -> None:
            text = SOURCE.format(k=k + 1) if k < MODULES else LARGE_SOURCE
            built[phase, k] = tvmlite.build(tvmlite.parse(text))

        return go

    with tempfile.TemporaryDirectory(prefix="tvmlite-stress-") as tmp:
        os.environ["TVMLITE_CACHE_DIR"] = str(Path(tmp) / "cache")
        os.environ.pop("TVMLITE_NO_CACHE", None)
        for phase in ("compile", "cached"):
            errors = run_together([build(phase, k) for k in range(MODULES + 1)], MODULES + 1)
            if errors:
                print(f"{phase} build:", errors[0])
                return 1
        if not all("cache" in built["cached", k].timings for k in range(MODULES + 1)):
            print("cached build: not loaded from the cache")
            return 1
        x = np.arange(4, dtype="float32")
        checks = []
        for (_, k), ex in built.items():
            if k == MODULES:
                checks += [(ex[f"scale{j}"], (x,), x * j) for j in range(1, LARGE + 1)]
                continue
            checks.append((ex[f"add{k + 1}"], (x, x), x + x))
            checks.append((ex[f"scale{k + 1}"], (x,), x * (k + 1)))

        def call(fn: Any, args: tuple, want: np.ndarray) -> Callable[[], None]:
            def go() -> None:
                for _ in range(CALLS):
                    got = fn(*args)
                    if not np.array_equal(got, want):
                        raise AssertionError(f"{fn.name}: {got} != {want}")

            return go

        count = max(THREADS, len(checks))
        errors = run_together([call(*c) for c in checks], count)
    if errors:
        print("call:", errors[0])
        return 1
    print("ok", count * CALLS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
