"""Compiling a kernel unit's LLVM IR to an object: what every process that
compiles units runs, the build's own and its workers (`kernel_build.py`).

A worker is this file run by path (`python .../kernel_worker.py`), so that it
imports llvmlite and nothing of tvmlite: a worker starts in a fraction of a
second. It reads requests (a unit's IR text and the resolved machine: triple,
data layout, CPU, features, optimization level) from its input and writes
each unit's object and optimized IR to its output, until its input ends; a
unit that fails to compile is answered with None, and the build compiles it
again in its own process, where the error is raised as it would be without
workers. Requests and replies are pickles of plain values, length-prefixed.

The build's process calls `compile_text` with the same values: whoever
compiles a unit, its object is the same bytes. `run_pipeline` is the one
optimization pipeline of tvmlite (`target.optimize` runs it on host code).
"""

from __future__ import annotations

import functools
import pickle
import sys
from typing import Any, BinaryIO

import llvmlite.binding as llvm

Machine = tuple[str, str, str, str, int]  # triple, data layout, CPU, features, level


def run_pipeline(module: llvm.ModuleRef, tm: llvm.TargetMachine, speed: int) -> None:
    """The new pass manager's pipeline at `speed` (O3: 3), tuned for `tm`."""
    options = llvm.create_pipeline_tuning_options(speed_level=speed)
    options.loop_vectorization = True
    options.slp_vectorization = True
    # Automatic unrolling fully unrolls every small constant-trip loop and triples
    # compile time; `T.unroll` loops carry a pragma the unroller still honours.
    options.loop_unrolling = False
    builder = llvm.create_pass_builder(tm, options)
    manager = builder.getModulePassManager()
    try:
        manager.run(module, builder)
    finally:
        _free_pass_manager(manager)


def _free_pass_manager(manager: llvm.ModulePassManager) -> None:
    """Free the pipeline's passes now. llvmlite's ModulePassManager inherits
    ObjectRef's no-op `_dispose` ahead of NewPassManager's real one (its bases are
    in that order), so garbage collection never frees it: ~30 KB lost per build."""
    from llvmlite.binding import ffi
    from llvmlite.binding.newpassmanagers import NewPassManager

    if type(manager)._dispose is ffi.ObjectRef._dispose:
        NewPassManager._dispose(manager)
        manager.detach()
    else:
        manager.close()


@functools.cache
def unit_machine(triple: str, cpu: str, features: str, speed: int) -> llvm.TargetMachine:
    """The target machine of units for `triple`: position-independent code of the
    small code model, what shared libraries are made of. Their calls to the C
    library and the support helpers go through the PLT (the JIT linker makes a
    stub and a GOT entry for each, next to the unit: `jit.py`) and their own
    data is PC-relative. Only emits objects, so one per machine is shared."""
    llvm.initialize_all_targets()  # the host's and any other triple's (cross builds)
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(
        cpu=cpu, features=features, opt=speed, reloc="pic", codemodel="small"
    )


def compile_text(text: str, machine: Machine) -> tuple[bytes, str]:
    """The object and the optimized IR of a unit's module text. Its kernel is
    hidden: a library exports entries only."""
    triple, layout, cpu, features, speed = machine
    tm = unit_machine(triple, cpu, features, speed)
    llvm.initialize_native_asmparser()
    module = llvm.parse_assembly(text)
    module.triple, module.data_layout = triple, layout
    module.verify()
    for fn in module.functions:
        if not fn.is_declaration and fn.linkage == llvm.Linkage.external:
            fn.visibility = "hidden"
    run_pipeline(module, tm, speed)
    return tm.emit_object(module), str(module)


def send(stream: BinaryIO, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "little") + data)
    stream.flush()


def receive(stream: BinaryIO) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other end closed its output")
    size = int.from_bytes(head, "little")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other end closed its output")
    return pickle.loads(data)


def serve() -> None:
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies goes to the build
    while True:
        try:
            text, machine = receive(source)
        except EOFError:
            return
        try:
            reply = compile_text(text, machine)
        except Exception:  # noqa: BLE001 - the build compiles it again and says why
            reply = None
        send(sink, reply)


if __name__ == "__main__":
    serve()
