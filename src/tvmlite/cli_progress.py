"""A progress line for long builds: `tvms: building m.tvms (3.2 s)` on stderr,
redrawn in place, only when stderr is a terminal (not TERM=dumb) and only once
the build has taken PROGRESS_AFTER seconds; erased when it ends, so the
terminal shows what it would have shown without it. Pipes, files and CI logs
never see it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

PROGRESS_AFTER = 1.0  # seconds before the line appears
REDRAW_EVERY = 0.25


@contextmanager
def progress(what: str) -> Iterator[None]:
    """Show `tvms: <what> (elapsed)` while the block runs, if it is slow."""
    stream = sys.stderr
    try:
        terminal = stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        terminal = False
    if not terminal:
        yield
        return
    done = threading.Event()
    start = time.monotonic()
    drawn = threading.Event()

    def draw() -> None:
        if done.wait(PROGRESS_AFTER):
            return
        while not done.is_set():
            stream.write(f"\r\x1b[Ktvms: {what} ({time.monotonic() - start:.1f} s)")
            stream.flush()
            drawn.set()
            done.wait(REDRAW_EVERY)

    thread = threading.Thread(target=draw, name="tvms-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if drawn.is_set():
            stream.write("\r\x1b[K")
            stream.flush()
