"""`tvms build` and `tvms show --after`: compile a `.tvms` file and write what
the user asked for (a shared library, an object, LLVM IR, assembly, the
module `tvmlite.lower` returns, or its lowered prim functions).

Every failure the user can fix raises `TVMLiteError`; the CLI turns it into a
message on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tvmlite.cli_progress import progress
from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.parse.module import parse

_BY_SUFFIX = {".so": "so", ".o": "obj", ".ll": "ll", ".s": "asm", ".tvms": "relax"}
LEGALIZE_KEY = "relax.transform.apply_legalize_ops"
CHECKED_KEY = "tir.instrument_bound_checkers"
PROFILE_KEY = "tvmlite.profile"


def read_module(args: argparse.Namespace) -> IRModule:
    """Parse the file argument (`-` is standard input) into an IRModule, with its
    constants (--constants, or the file beside it)."""
    from tvmlite.cli import constants_for, read_text
    from tvmlite.lowering.build import as_module

    text, name = read_text(args.file)
    return as_module(parse(text, filename=name, constants=constants_for(args, args.file)))


def check_module(mod: Any, args: argparse.Namespace) -> None:
    """`tvms check --target` of one parsed module (parsing ran TVM's well-formedness
    check): every step of `build` for the target up to the LLVM IR (what is left is
    LLVM's optimization and machine code), so what passes builds."""
    from tvmlite.lowering.build import as_module, lower
    from tvmlite.lowering.codegen.generate import generate_llvm
    from tvmlite.lowering.codegen.target import machine_options

    target = target_of(args)
    with pass_context(args, sys.stderr):
        lowered = lower(as_module(mod), target, args.pipeline)
    with machine_options(target.machine_options()):
        generate_llvm(lowered)


def target_of(args: argparse.Namespace) -> Any:
    from tvmlite.lowering.target import Target

    options: dict[str, Any] = {}
    if getattr(args, "opt", None) is not None:
        options["opt_level"] = args.opt
    return Target(args.target, **options)


@contextlib.contextmanager
def pass_context(args: argparse.Namespace, dump: Any) -> Iterator[Any]:
    """The PassContext of the flags: legalization, checks, timing, printing.
    With --time-passes, the timings print on stderr when the block ends, after
    the time since the process started (the interpreter and imports) and
    before the total, so the lines account for the whole command."""
    from tvmlite.lowering.transform import PassContext, PassTimingInstrument, PrintAfterAll

    instruments: list[Any] = []
    timing = PassTimingInstrument() if getattr(args, "time_passes", False) else None
    if timing is not None:
        instruments.append(timing)
        started = _seconds_since_start()
        if started is not None:
            timing.add("start-up (interpreter, imports)", started)
    if getattr(args, "print_after_all", False):
        instruments.append(PrintAfterAll(dump))
    config: dict[str, Any] = {LEGALIZE_KEY: False} if getattr(args, "no_legalize", False) else {}
    if getattr(args, "checked", False):
        config[CHECKED_KEY] = True
    if getattr(args, "profiled", False):
        config[PROFILE_KEY] = True
    with PassContext(config=config, instruments=instruments) as ctx:
        yield ctx
    if timing is not None:
        print(timing.render(), file=sys.stderr)
        total = _seconds_since_start()
        if total is not None:
            print(f"total (since the process started): {total * 1000:.3f} ms", file=sys.stderr)


def _seconds_since_start() -> float | None:
    """Wall time since this process started, from the kernel's record of it
    (Linux), or None where that is not available."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22, starttime, counted after the command name
        return time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def lower_module(args: argparse.Namespace, mod: IRModule) -> IRModule:
    from tvmlite.lowering.build import lower
    from tvmlite.lowering.passes.bind_params import BindParams

    if args.params is not None:
        mod = BindParams("main", args.params)(mod)
    return lower(mod, target_of(args), args.pipeline)


def build_command(args: argparse.Namespace) -> int:
    from tvmlite.lowering.transform import stage

    emit = _what_to_emit(args)
    if args.prefix is not None and emit != "so":
        raise TVMLiteError(f"--prefix names the symbols of a library, not of --emit {emit}")
    to_stdout = args.output == "-"
    dump = sys.stderr if to_stdout else sys.stdout
    with pass_context(args, dump), progress(f"building {args.file}"):
        with stage("parse"):
            mod = read_module(args)
        result = _emit(args, mod, emit)
        with stage("write"):
            if isinstance(result, str):
                if to_stdout:
                    sys.stdout.write(result)
                else:
                    _write(Path(args.output), result.encode())
            elif isinstance(result, bytes):
                _write(Path(args.output), result)
    return 0


def _what_to_emit(args: argparse.Namespace) -> str:
    """--emit, else what OUT's suffix says; an unknown suffix is refused rather
    than guessed (a library named out.xyz, with out.h beside it, surprises)."""
    if args.output == "-":
        if args.emit in ("so", "obj"):
            raise TVMLiteError(f"--emit {args.emit} writes a binary file: give -o a path")
        if args.emit is None:
            raise TVMLiteError("-o - needs --emit ll, asm, relax or tir")
        return args.emit
    if args.emit is not None:
        return args.emit
    suffix = Path(args.output).suffix
    if suffix not in _BY_SUFFIX:
        known = ", ".join(_BY_SUFFIX)
        raise TVMLiteError(
            f"{args.output}: cannot tell what to write from the suffix {suffix or '(none)'!r} "
            f"(known: {known}): use one of them or pass --emit"
        )
    return _BY_SUFFIX[suffix]


def _emit(args: argparse.Namespace, mod: IRModule, emit: str) -> str | bytes | None:
    import tvmlite

    if emit == "relax":
        return lower_module(args, mod).script()
    if emit == "tir":
        return prim_functions(lower_module(args, mod)).script()
    cache = not args.no_cache and not (args.time_passes or args.print_after_all)
    ex = tvmlite.build(
        mod, target=target_of(args), pipeline=args.pipeline, cache=cache, params=args.params
    )
    if emit == "so":
        ex.export_library(args.output, prefix=args.prefix)
        return None
    if emit == "ll":
        return ex.llvm_ir()
    if emit == "asm":
        return ex.assembly()
    from tvmlite.lowering.codegen.link import link_object
    from tvmlite.lowering.codegen.objects import emit_object

    machine = target_of(args).machine_options()
    code = emit_object(ex.llvm_ir(), machine)
    constants = ex.image.constant_arrays
    if not constants:
        return code
    link_object(code, constants, Path(args.output), machine)  # the weights' bytes go in too
    return None


def prim_functions(mod: IRModule) -> IRModule:
    """The prim functions of a lowered module: what LLVM compiles."""
    from tvmlite.dsl import tir

    return IRModule({k: f for k, f in mod.functions.items() if isinstance(f, tir.PrimFunc)})


def _write(path: Path, data: bytes) -> None:
    from tvmlite.runtime.export import write_atomic

    try:
        write_atomic(path, data)
    except OSError as err:
        raise TVMLiteError(f"{path}: cannot write: {err.strerror or err}") from None


def show_after(args: argparse.Namespace, mod: IRModule) -> IRModule:
    """The module right after the first run of the pass named `args.after`."""
    from tvmlite.lowering.transform import PassContext, PassInstrument

    class _Capture(PassInstrument):
        def __init__(self) -> None:
            self.seen: list[str] = []
            self.found: IRModule | None = None

        def run_after_pass(self, m: IRModule, info: Any) -> None:
            self.seen.append(info.name)
            if self.found is None and info.name == args.after:
                self.found = m

    capture = _Capture()
    with PassContext(instruments=[capture]):
        lower_module(args, mod)
    if capture.found is None:
        ran = ", ".join(dict.fromkeys(capture.seen)) or "none"
        raise TVMLiteError(f"pass '{args.after}' did not run (passes that ran: {ran})")
    return capture.found
