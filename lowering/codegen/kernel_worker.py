"""A worker process of parallel builds (`kernel_build.py`): reads requests, a
kernel module's IR text and the machine options, from its input, and writes
each unit's object and optimized IR to its output, until its input ends. A
unit that fails to compile is answered with None: the build compiles it again
in its own process, where the error is raised as it would be without workers.
"""

from __future__ import annotations

import sys

from tvmlite.lowering.codegen.kernel_build import receive, send
from tvmlite.lowering.codegen.kernel_unit import compile_ir


def serve() -> None:
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies goes to the build
    while True:
        try:
            text, machine = receive(source)
        except EOFError:
            return
        try:
            reply = compile_ir(text, machine)
        except Exception:  # noqa: BLE001 - the build compiles it again and says why
            reply = None
        send(sink, reply)


if __name__ == "__main__":
    serve()
