"""The machine code is generated for: LLVM initialisation, the target machines
of the process, the libraries JIT code may call into, and the O3 pipeline.

A `MachineOptions` is what a target asks of the machine (triple, CPU, features,
level; None: the host's). Code for the host's triple (any CPU of its
architecture) is JIT-compiled and run here; code for another triple
(`-mtriple=aarch64-linux-gnu`) is cross-compiled: objects, assembly and shared
libraries, never run here (`jit.py` refuses it, naming the triple).

All of it is created on first use (`once`: also when threads first need it
together) and lives as long as the process: target machines are expensive
(tens of ms) and stateless once made, and the libraries (libm for math,
libgcc_s for half-precision conversion helpers on CPUs without native ones)
must stay loaded while any compiled kernel may run.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes.util
import functools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

import llvmlite.binding as llvm

from tvmlite.lowering.codegen.kernel_worker import run_pipeline
from tvmlite.lowering.codegen.llvm_diagnostics import quiet_missed_vectorization

SPEED_LEVEL = 3
P = ParamSpec("P")
R = TypeVar("R")


def once(fn: Callable[P, R]) -> Callable[P, R]:
    """`functools.cache` that also runs `fn` at most once per arguments when
    threads call it together (the first caller computes, the others wait).
    For what a process must make exactly once: a copy made by a thread that
    lost the race and then dropped could free code or state still in use."""
    cached = functools.cache(fn)
    lock = threading.RLock()  # re-entrant: a once-function may call another

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with lock:
            return cached(*args, **kwargs)

    return call


# The architectures tvmlite generates code for (Linux, ELF): its thread pool's
# system calls and its object writer know them (llvm_thread_pool.py, elf_object.py).
ARCHITECTURES = ("x86_64", "aarch64")


@dataclass(frozen=True)
class MachineOptions:
    """What a `Target` asks of the machine: CPU name, feature string ("+avx2,-fma"),
    optimization level and target triple; None means the host's (or the default
    level)."""

    cpu: str | None = None
    features: str | None = None
    opt_level: int | None = None
    triple: str | None = None


HOST = MachineOptions()
# The machine code is generated for; `tvmlite.build` sets it from its target.
_CURRENT: contextvars.ContextVar[MachineOptions] = contextvars.ContextVar(
    "tvmlite_machine", default=HOST
)


@contextlib.contextmanager
def machine_options(options: MachineOptions) -> Iterator[MachineOptions]:
    """Compile for `options` inside the block (a ContextVar: threads see their own)."""
    token = _CURRENT.set(options)
    try:
        yield options
    finally:
        _CURRENT.reset(token)


def current_options() -> MachineOptions:
    return _CURRENT.get()


@once
def _initialised() -> bool:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    # Every architecture LLVM was built with, for cross-compilation (-mtriple).
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    for name in ("m", "c", "gcc_s"):
        path = ctypes.util.find_library(name)
        if path is not None:
            llvm.load_library_permanently(path)
    return True


def resolves(symbol: str) -> bool:
    """Whether JIT code can call C function `symbol`: the process or a library
    loaded permanently defines it."""
    _initialised()
    return llvm.address_of_symbol(symbol) is not None


def host_target_machine(options: MachineOptions | None = None) -> llvm.TargetMachine:
    """The target machine for `options` (default: the current ones), used to
    optimize and to emit objects; one per distinct options in the process."""
    return _shared_machine(current_options() if options is None else options)


@once
def _shared_machine(options: MachineOptions) -> llvm.TargetMachine:
    """Host CPU name and features unless `options` say otherwise, O3,
    position-independent code (objects may end up in a shared library)."""
    cpu, features = checked_machine(options)
    target = llvm.Target.from_triple(triple_of(options))
    return target.create_target_machine(
        cpu=cpu,
        features=features,
        opt=_speed(options),
        reloc="pic",
        codemodel="jitdefault",
    )


@once
def glue_target_machine(options: MachineOptions) -> llvm.TargetMachine:
    """A machine as `host_target_machine(options)` is, but for code generation
    without optimization (fast instruction selection and register allocation):
    for glue, thousands of functions of one call each, an object for the JIT
    only (`jit.py`), which reaches what it names by absolute address (it is
    never part of a shared library). Only emits objects, so one is shared."""
    cpu, features = checked_machine(options)
    target = llvm.Target.from_triple(triple_of(options))
    return target.create_target_machine(
        cpu=cpu, features=features, opt=0, reloc="static", codemodel="large"
    )


def checked_machine(options: MachineOptions) -> tuple[str, str]:
    """The CPU name and feature string a target machine for `options` is made
    with: the host's unless `options` say otherwise. Checked first (once per
    options), since LLVM aborts the process on some bad values (machine_check.py)."""
    from tvmlite.lowering.codegen.machine_check import check_machine

    _initialised()
    triple = triple_of(options)
    if options.cpu is None and runs_here(options):
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
        if options.features:
            features = f"{features},{options.features}" if features else options.features
    else:  # another architecture's default CPU is LLVM's "generic" (aarch64: with NEON)
        cpu, features = options.cpu or "generic", options.features or ""
    flags = tuple(options.features.split(",")) if options.features else ()
    check_machine(options.cpu, flags, (cpu, features), None if runs_here(options) else triple)
    return cpu, features


def _speed(options: MachineOptions) -> int:
    return SPEED_LEVEL if options.opt_level is None else options.opt_level


def host_triple() -> str:
    _initialised()
    return llvm.get_process_triple()


def triple_of(options: MachineOptions) -> str:
    """The target triple code for `options` is generated for."""
    return options.triple or host_triple()


def arch_of(options: MachineOptions) -> str:
    """The architecture of `options`' triple (`x86_64`, `aarch64`)."""
    return llvm.get_triple_parts(triple_of(options)).Arch


def runs_here(options: MachineOptions) -> bool:
    """Whether code for `options` can run in this process: its triple names this
    host's architecture, operating system and object format (any CPU of it)."""
    if options.triple is None:
        return True
    mine, theirs = llvm.get_triple_parts(host_triple()), llvm.get_triple_parts(options.triple)
    return (mine.Arch, mine.OS, mine.ObjectFormat) == (theirs.Arch, theirs.OS, theirs.ObjectFormat)


def check_triple(triple: str) -> str:
    """`triple` when tvmlite can generate code for it, else a TVMLiteError saying why."""
    from tvmlite.diagnostics import TVMLiteError

    _initialised()
    if not isinstance(triple, str) or not triple or any(c.isspace() for c in triple):
        raise TVMLiteError(f"-mtriple: {triple!r} is not a target triple (e.g. aarch64-linux-gnu)")
    try:
        llvm.Target.from_triple(triple)
    except RuntimeError:
        raise TVMLiteError(
            f"-mtriple: LLVM has no target for {triple!r} (tvmlite generates code for "
            f"{', '.join(a + '-linux-gnu' for a in ARCHITECTURES)})"
        ) from None
    parts = llvm.get_triple_parts(triple)
    if parts.Arch not in ARCHITECTURES or parts.OS != "linux" or parts.ObjectFormat != "ELF":
        raise TVMLiteError(
            f"-mtriple: tvmlite cannot generate code for {triple!r} (architecture "
            f"{parts.Arch}, system {parts.OS or 'unknown'}): it generates Linux ELF code for "
            f"{', '.join(ARCHITECTURES)}"
        )
    return triple


def data_layout(options: MachineOptions = HOST) -> str:
    """The data layout of `options`' triple."""
    return _data_layout(triple_of(options))


@once
def _data_layout(triple: str) -> str:
    """Computed once per triple: each `target_data` access makes an LLVM object
    whose disposal is unsafe to repeat."""
    _initialised()
    machine = llvm.Target.from_triple(triple).create_target_machine(
        cpu="generic", features="", reloc="pic"
    )
    return str(machine.target_data)


def optimize(module: llvm.ModuleRef, machine: MachineOptions | None = None) -> None:
    """Run tvmlite's optimization pipeline (`kernel_worker.run_pipeline`; O3
    unless the options say otherwise) tuned for the machine of `machine`
    (default: the current options)."""
    machine = current_options() if machine is None else machine
    with quiet_missed_vectorization():
        run_pipeline(module, host_target_machine(machine), _speed(machine))


def resolved(machine: MachineOptions) -> tuple[str, str, str, str, int]:
    """What compiling a kernel unit for `machine` needs, as plain values (sent
    to worker processes): triple, data layout, CPU, features, level."""
    cpu, features = checked_machine(machine)
    return triple_of(machine), data_layout(machine), cpu, features, _speed(machine)


def parse_and_verify(text: str, machine: MachineOptions | None = None) -> llvm.ModuleRef:
    """An llvmlite.ir module's text as an LLVM module with the triple and data
    layout of `machine` (default: the current options)."""
    _initialised()
    machine = current_options() if machine is None else machine
    module = llvm.parse_assembly(text)
    module.triple = triple_of(machine)
    module.data_layout = data_layout(machine)
    module.verify()
    return module
