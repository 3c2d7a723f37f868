"""The systems tvmlite runs on, checked before anything else is imported.

tvmlite is Linux-only by construction: compiled code runs its parallel loops on
a thread pool that waits on futexes, the runtime resolves C library symbols in
the process itself (`ctypes.CDLL(None)`), and libraries are linked as ELF shared
objects by the system C compiler. Elsewhere, `import tvmlite` fails here, with
one message, instead of deep inside an import.
"""

from __future__ import annotations

import sys

SUPPORTED = "Linux (x86-64 or AArch64, with a C compiler for exported libraries)"


def check_platform(platform: str = sys.platform) -> None:
    if not platform.startswith("linux"):
        raise ImportError(
            f"tvmlite runs on {SUPPORTED}; this system is {platform!r}: its compiled code "
            "uses Linux futexes and ELF shared libraries"
        )


check_platform()
