"""LLVM's missed-vectorization diagnostics, kept off the user's terminal.

`T.vectorized` reaches LLVM as `llvm.loop.vectorize.enable` metadata, a forced
hint: when the loop vectorizer cannot honour it (a libm call, a branch in the
body, a trip count too short), LLVM prints a remark and a warning ("loop not
vectorized: ...") straight to file descriptor 2, where Python cannot catch
them. TVM does not warn there, and DefaultCPUSchedule vectorizes most kernels,
so those lines would fill the terminal on every build. While LLVM optimizes,
fd 2 goes to a temporary file; what LLVM wrote is copied back, except those
diagnostics. The lock keeps two compiling threads from swapping fd 2 under
each other.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_MISSED = ("loop not vectorized", "loop not interleaved")


@contextmanager
def quiet_missed_vectorization() -> Iterator[None]:
    with _LOCK, tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        try:
            saved = os.dup(2)
        except OSError:  # no stderr at all (a daemon): nothing to keep clean
            yield
            return
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines = sink.read().decode(errors="replace").splitlines(keepends=True)
            kept = "".join(line for line in lines if not any(m in line for m in _MISSED))
            if kept:
                os.write(2, kept.encode())
