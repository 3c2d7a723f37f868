"""Finding the OpenBLAS that NumPy already ships, and its gemm symbols.

NumPy 2 wheels carry an ILP64 OpenBLAS in `numpy.libs/` (Linux) or
`numpy/.libs/` (older layouts), with symbols such as `scipy_cblas_sgemm64_`;
other builds link a system BLAS, which `/proc/self/maps` then names once NumPy
is imported. Loading the very library NumPy uses means the same thread pool and
the same kernels, so "as fast as NumPy" is a fair goal. Nothing is found at
import: only when a build first offloads a matmul.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

from tvmlite.diagnostics import TVMLiteError

# cblas_?gemm under the names OpenBLAS builds give it, with the integer width
# (`blasint`) each name implies: the `64_` suffix marks ILP64.
SYMBOLS: dict[str, tuple[tuple[str, int], ...]] = {
    "float32": (("scipy_cblas_sgemm64_", 64), ("cblas_sgemm64_", 64), ("cblas_sgemm", 32)),
    "float64": (("scipy_cblas_dgemm64_", 64), ("cblas_dgemm64_", 64), ("cblas_dgemm", 32)),
}
PATTERNS = ("*openblas*.so*", "*openblas*.dylib", "*openblas*.dll", "libblas*.so*")


# OpenBLAS >= 0.3.27: the thread count of calls from the calling thread only.
THREADS_LOCAL = "openblas_set_num_threads_local"


@dataclass(frozen=True)
class Gemm:
    """One cblas gemm entry point: its address, the width of its integers, and the
    address of the library's `openblas_set_num_threads_local` (0 without it)."""

    library: str
    symbol: str
    address: int
    int_bits: int
    threads_local: int = 0


def candidate_libraries() -> list[Path]:
    """OpenBLAS files next to NumPy, then BLAS libraries the process has loaded."""
    import numpy

    root = Path(numpy.__file__).resolve().parent
    found: list[Path] = []
    for folder in (root.parent / "numpy.libs", root / ".libs", root.parent / "numpy" / ".libs"):
        if folder.is_dir():
            for pattern in PATTERNS:
                found.extend(sorted(folder.glob(pattern)))
    maps = Path("/proc/self/maps")
    if sys.platform.startswith("linux") and maps.exists():
        for line in maps.read_text().splitlines():
            path = line.split()[-1] if line.split() else ""
            if "blas" in Path(path).name.lower() and Path(path) not in found:
                found.append(Path(path))
    return found


@functools.cache
def find_gemm(dtype: str) -> Gemm:
    """The gemm of `dtype` ("float32" or "float64"); TVMLiteError when no library
    NumPy ships or loaded has it. Cached: libraries stay loaded for the process."""
    if dtype not in SYMBOLS:
        raise TVMLiteError(f"BLAS offload supports float32 and float64, not {dtype}")
    tried: list[str] = []
    for path in candidate_libraries():
        try:
            lib = ctypes.CDLL(str(path))
        except OSError:
            continue
        for symbol, bits in SYMBOLS[dtype]:
            if bits == 32 and "64" in path.name:
                continue  # an ILP64 build may export unsuffixed names with 64-bit ints
            func = getattr(lib, symbol, None)
            if func is not None:
                local = getattr(lib, THREADS_LOCAL, None)
                return Gemm(str(path), symbol, _address(func), bits, _address(local))
        tried.append(path.name)
    where = ", ".join(tried) or "no OpenBLAS library next to NumPy or loaded in the process"
    names = ", ".join(s for s, _ in SYMBOLS[dtype])
    raise TVMLiteError(f"BLAS offload needs one of {names}; searched: {where}")


def _address(func: object) -> int:
    return 0 if func is None else ctypes.cast(func, ctypes.c_void_p).value or 0


def blas_available(dtype: str = "float32") -> bool:
    try:
        find_gemm(dtype)
    except TVMLiteError:
        return False
    return True
