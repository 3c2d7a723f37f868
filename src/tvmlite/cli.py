"""The `tvms` command: check, format, show, build and run `.tvms` files, import
PyTorch programs, and manage the compile cache (docs/cli.md; build, run and import
live in cli_build.py, cli_run.py and cli_import.py, the argument parser in
cli_args.py).

Exit codes: 0 success, 1 diagnostics or user error, 2 usage, 3 internal error
(the traceback only with `--traceback`), 130 interrupted (Ctrl-C). Results go to
stdout, diagnostics to stderr, in one format: `file:line:col: error: ...` for
errors in a file's text, `tvms: error: ...` for everything else; `-` reads
standard input.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import os
import stat
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn

from tvmlite.cli_args import USAGE, UsageError, parser
from tvmlite.diagnostics import ParseError, TVMLiteError
from tvmlite.dsl.metadata import sidecar_path
from tvmlite.dsl.parse.module import parse
from tvmlite.printer import format_text, show

OK, USER_ERROR, INTERNAL, INTERRUPTED = 0, 1, 3, 130
SUFFIX = ".tvms"


def report(err: TVMLiteError) -> None:
    """One diagnostic on stderr: located errors carry their own `error:`."""
    print(err if isinstance(err, ParseError) else f"tvms: error: {err}", file=sys.stderr)


def read_text(path: str) -> tuple[str, str]:
    """(text, display name) of a file argument; `-` is standard input."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(path).read_text(encoding="utf-8"), path
    except UnicodeDecodeError as err:
        raise TVMLiteError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise TVMLiteError(f"{path}: {err.strerror or err}") from None


def constants_for(args: argparse.Namespace, path: str) -> str | None:
    """The constants file of a file argument: --constants, else the one beside
    it (`NAME.constants.npz` for `NAME.tvms`), if there is one."""
    given = getattr(args, "constants", None)
    if given is not None or path == "-":
        return given
    beside = sidecar_path(path)
    return str(beside) if beside.is_file() else None


def source_files(paths: Sequence[str]) -> Iterator[str]:
    """The file arguments with each directory replaced by the `*.tvms` files
    under it (sorted; hidden directories skipped)."""
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        found = sorted(
            str(p)
            for p in Path(path).rglob(f"*{SUFFIX}")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
        )
        if not found:
            print(f"tvms: warning: {path}: no {SUFFIX} files", file=sys.stderr)
        yield from found


def _check(args: argparse.Namespace) -> int:
    from tvmlite.cli_build import check_module

    failed = passed = 0
    for path in source_files(args.files):
        try:
            text, name = read_text(path)
            mod = parse(text, filename=name, constants=constants_for(args, path))
            if args.target is not None:
                check_module(mod, args)
            passed += 1
        except TVMLiteError as err:
            report(err)
            failed += 1
    files = passed + failed
    noun = "file" if files == 1 else "files"
    if failed:
        print(f"{failed} of {files} {noun} failed")
    elif args.target is None:  # say what was not checked
        print(
            f"{files} {noun} well-formed; not lowered for a target (--target llvm also "
            "checks what tvms build accepts: buffer bounds, legalization, the schedule)"
        )
    else:
        print(f"{files} {noun} well-formed and lowered for {args.target}: they build")
    return USER_ERROR if failed else OK


def _fmt(args: argparse.Namespace) -> int:
    status = OK
    for path in source_files(args.files):
        try:
            text, name = read_text(path)
            constants = constants_for(args, path)
            out = format_text(text, filename=name, dialect=args.dialect, constants=constants)
        except TVMLiteError as err:
            report(err)
            status = USER_ERROR
            continue
        if args.check or args.diff:
            if out != text:
                status = USER_ERROR
                if args.diff:
                    sys.stdout.writelines(unified_diff(text, out, name))
                else:
                    print(f"{name}: would reformat", file=sys.stderr)
        elif path == "-" or args.stdout:
            sys.stdout.write(out)
        elif out != text:
            try:
                write_in_place(path, out)
            except OSError as err:
                report(TVMLiteError(f"{path}: cannot write: {err.strerror or err}"))
                status = USER_ERROR
    return status


def unified_diff(old: str, new: str, name: str) -> Iterator[str]:
    """A unified diff from `old` to `new` that `patch` and `git apply` take: paths
    `a/NAME` and `b/NAME`, and a last line without a newline marked as diff marks it."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    )
    for line in lines:
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def write_in_place(path: str, text: str) -> None:
    """Replace the file `path` (the file a symlink names, the link stays) with `text`,
    atomically and with its permission bits: an interrupted `fmt` leaves the old text
    or the new one, never a truncated file. A file the user may not write is refused,
    although its folder would let a rename replace it."""
    from tvmlite.runtime.export import write_atomic

    target = Path(os.path.realpath(path))
    if not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied")
    write_atomic(target, text, mode=stat.S_IMODE(target.stat().st_mode))


def _show(args: argparse.Namespace) -> int:
    text, name = read_text(args.file)
    # What TVM prints with its check off shows too; --after lowers, which checks it all.
    mod = parse(
        text,
        filename=name,
        constants=constants_for(args, args.file),
        check_well_formed=args.after is not None,
    )
    if args.after:
        from tvmlite.cli_build import show_after
        from tvmlite.lowering.build import as_module

        mod = show_after(args, as_module(mod))
    show(
        mod,
        dialect=args.dialect,
        color=args.color,
        width=args.width or None,
        print_line_numbers=args.line_numbers,
    )
    return OK


def _build(args: argparse.Namespace) -> int:
    from tvmlite.cli_build import build_command

    return build_command(args)


def _run(args: argparse.Namespace) -> int:
    from tvmlite.cli_run import run_command

    return run_command(args)


def _import(args: argparse.Namespace) -> int:
    from tvmlite.cli_import import import_command

    return import_command(args)


def _cache(args: argparse.Namespace) -> int:
    from tvmlite.lowering.cache.size import SIZE_ENV, cache_info, clear_cache, format_size

    info = clear_cache() if args.action == "clear" else cache_info()
    if info.path is None:
        print("cache: off (TVMLITE_NO_CACHE is set)")
        return OK
    if args.action == "clear":
        removed = (
            f"{info.entries} entries, {info.kernels} kernels and {info.functions} lowered functions"
        )
        print(f"removed {removed} ({format_size(info.size)}) from {info.path}")
        return OK
    print(f"cache: {info.path}")
    if info.refusal is not None:
        print(f"not used: {info.refusal}")
    print(
        f"entries: {info.entries} ({format_size(info.size)}), kernels: {info.kernels}, "
        f"lowered functions: {info.functions}"
    )
    print(f"size cap: {format_size(info.cap)} (${SIZE_ENV})")
    return OK


COMMANDS = {
    "check": _check,
    "fmt": _fmt,
    "show": _show,
    "build": _build,
    "run": _run,
    "import": _import,
    "cache": _cache,
}


def run() -> NoReturn:
    """The `tvms` program: `main`, then exit without tearing the interpreter down
    (as mypy does). Freeing every module, IR object and LLVM object one at a
    time took 0.1-0.2 s after a build, for memory the system takes back at once;
    tvms registers nothing that must run at exit, and its output is flushed
    here first."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that left, a closed stream
            pass
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # the shell's convention: 128 + SIGINT
        print(file=sys.stderr)
        return INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    top, commands = parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # as ruff and git: the help, and a usage exit code for scripts
        top.print_help(sys.stderr)
        return USAGE
    try:
        args, extra = top.parse_known_args(argv)
        if extra:  # reported by the sub-command, with its own usage line
            commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exit_:
        return USAGE if exit_.code else OK
    try:
        return COMMANDS[args.command](args)
    except TVMLiteError as err:
        report(err)
        return USER_ERROR
    except UsageError as err:
        print(f"tvms {args.command}: error: {err}", file=sys.stderr)
        return USAGE
    except BrokenPipeError:  # `tvms run ... | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return OK
    except Exception:  # noqa: BLE001 - the one place internal errors become exit code 3
        if args.traceback:
            traceback.print_exc()
        else:
            print("tvms: error: internal error (run with --traceback for details)", file=sys.stderr)
        return INTERNAL
