"""A build whose JIT memory lands scattered over the address space, run in a
fresh process by test_jit_placement.py (it leaves the address space riddled).

`python scattered_probe.py` builds a warm-up module (the support library and
everything made once per process), then leaves HOLES free pages, GAP apart, as
the highest free pages of the address space (PROT_NONE reservations, which use
no memory, fill the rest), builds PROBE and calls it. A fresh engine's small
blocks land in those holes, one per mapping, further apart than a 32-bit
PC-relative offset reaches. Prints "right" when the results are, "unsupported"
when the system cannot place mappings at chosen addresses.
"""

from __future__ import annotations

import ctypes
import mmap

import numpy as np

import tvmlite

HOLES = 16
GAP = 3 << 30
PAGE = mmap.PAGESIZE
PROT_NONE, MAP_NORESERVE, MAP_FIXED_NOREPLACE = 0, 0x4000, 0x100000  # Linux
FLAGS = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE
PROBE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1000,), "float32")) -> R.Tensor((1000,), "float32"):
        a = R.exp(x)
        b = R.tanh(a)
        c = R.multiply(b, R.const(1.5, "float32"))
        d = R.sigmoid(c)
        return d
"""

_libc = ctypes.CDLL(None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = [
    ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long
]  # fmt: skip


class Unsupported(Exception):
    pass


def reserve(size: int, at: int | None = None) -> int:
    """`size` bytes of address space, inaccessible (at `at` exactly, if given)."""
    addr = _mmap(at, size, PROT_NONE, FLAGS | (MAP_FIXED_NOREPLACE if at else 0), -1, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value or (at is not None and addr != at):
        raise Unsupported(f"mmap at {at}: {addr}")
    return addr


def frontier() -> int:
    """Fill the free pages above the point below which fresh mappings go down
    one after another (holes there would take small mappings first); the lowest."""
    lowest, run = reserve(PAGE), 0
    while run < 256:
        addr = reserve(PAGE)
        run = run + 1 if addr == lowest - PAGE else 0
        lowest = addr
    return lowest


def scatter() -> None:
    at = frontier()
    for _ in range(HOLES):
        at = reserve(GAP, at - PAGE - GAP)  # the page above it stays free


def expected(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(np.tanh(np.exp(x)) * np.float32(1.5))))


def main() -> None:
    x = np.linspace(-2, 2, 1000, dtype="float32")
    warm = tvmlite.build(tvmlite.parse(PROBE), pipeline="minimal", cache=False)
    np.testing.assert_allclose(warm["main"](x), expected(x), rtol=1e-5)
    try:
        scatter()
    except Unsupported:
        print("unsupported")
        return
    ex = tvmlite.build(tvmlite.parse(PROBE), pipeline="minimal", cache=False)
    print("right" if np.allclose(ex["main"](x), expected(x), rtol=1e-5) else "wrong")


if __name__ == "__main__":
    main()
