"""The `tvms` command: check, format, show, build and run `.tvms` files
(docs/cli.md; build and run live in cli_build.py and cli_run.py).

Exit codes: 0 success, 1 diagnostics or user error, 2 usage, 3 internal error
(the traceback only with `--traceback`). Results go to stdout, diagnostics to
stderr; `-` reads standard input.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tvmlite.cli_build import EMITS, add_build_options
from tvmlite.cli_run import add_run_arguments
from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl.module import DIALECTS
from tvmlite.dsl.parser import parse
from tvmlite.printer import format_text, show

OK, USER_ERROR, USAGE, INTERNAL = 0, 1, 2, 3


def read_text(path: str) -> tuple[str, str]:
    """(text, display name) of a file argument; `-` is standard input."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(path).read_text(encoding="utf-8"), path
    except (OSError, UnicodeDecodeError) as err:
        raise TVMLiteError(f"{path}: cannot read: {err}") from err


def _check(args: argparse.Namespace) -> int:
    status = OK
    for path in args.files:
        try:
            text, name = read_text(path)
            parse(text, filename=name)
        except TVMLiteError as err:
            print(err, file=sys.stderr)
            status = USER_ERROR
    return status


def _fmt(args: argparse.Namespace) -> int:
    status = OK
    for path in args.files:
        try:
            text, name = read_text(path)
            out = format_text(text, filename=name, dialect=args.dialect)
        except TVMLiteError as err:
            print(err, file=sys.stderr)
            status = USER_ERROR
            continue
        if args.check or args.diff:
            if out != text:
                status = USER_ERROR
                if args.diff:
                    sys.stdout.writelines(
                        difflib.unified_diff(
                            text.splitlines(keepends=True),
                            out.splitlines(keepends=True),
                            f"{name} (original)",
                            f"{name} (formatted)",
                        )
                    )
                else:
                    print(f"{name}: would reformat", file=sys.stderr)
        elif path == "-" or args.stdout:
            sys.stdout.write(out)
        elif out != text:
            Path(path).write_text(out, encoding="utf-8")
    return status


def _show(args: argparse.Namespace) -> int:
    try:
        text, name = read_text(args.file)
        mod = parse(text, filename=name)
        if args.after:
            from tvmlite.cli_build import show_after
            from tvmlite.lowering.build import as_module

            mod = show_after(args, as_module(mod))
        show(mod, dialect=args.dialect, color=args.color)
    except TVMLiteError as err:
        print(err, file=sys.stderr)
        return USER_ERROR
    return OK


def _guarded(command: Any) -> Any:
    """Run a build/run command: user errors are messages and exit code 1."""

    def run(args: argparse.Namespace) -> int:
        from tvmlite.cli_run import UsageError

        try:
            return command(args)
        except TVMLiteError as err:
            print(err, file=sys.stderr)
            return USER_ERROR
        except UsageError as err:
            print(f"tvms {args.command}: error: {err}", file=sys.stderr)
            return USAGE

    return run


def _build(args: argparse.Namespace) -> int:
    from tvmlite.cli_build import build_command

    return build_command(args)


def _run(args: argparse.Namespace) -> int:
    from tvmlite.cli_run import run_command

    return run_command(args)


def _parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="tvms", description="Check, format, show, build and run .tvms files."
    )
    top.add_argument("--traceback", action="store_true", help="show tracebacks of internal errors")
    sub = top.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="parse and verify files")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.set_defaults(run=_check)

    fmt = sub.add_parser("fmt", help="rewrite files in canonical form")
    fmt.add_argument("files", nargs="+", metavar="FILE")
    fmt.add_argument("--check", action="store_true", help="exit 1 if a file would change")
    fmt.add_argument("--diff", action="store_true", help="print a diff instead of rewriting")
    fmt.add_argument("--stdout", action="store_true", help="print instead of rewriting")
    fmt.add_argument("--dialect", choices=DIALECTS, help="spelling to print (default: as read)")
    fmt.set_defaults(run=_fmt)

    show_cmd = sub.add_parser("show", help="print a file highlighted")
    show_cmd.add_argument("file", metavar="FILE")
    show_cmd.add_argument("--dialect", choices=DIALECTS)
    show_cmd.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    show_cmd.add_argument("--after", metavar="PASS", help="show the module after this pass")
    add_build_options(show_cmd)
    show_cmd.set_defaults(run=_show)

    build = sub.add_parser("build", help="compile a file to a shared library (or IR, asm...)")
    build.add_argument("file", metavar="FILE")
    build.add_argument("-o", "--output", required=True, metavar="OUT", help="output (- stdout)")
    build.add_argument("--emit", choices=EMITS, help="what to write (default: from OUT's suffix)")
    build.add_argument("--time-passes", action="store_true", help="time every pass (stderr)")
    build.add_argument("--print-after-all", action="store_true", help="print IR after each pass")
    add_build_options(build)
    build.set_defaults(run=_guarded(_build))

    run = sub.add_parser("run", help="call a function of a file or a built library")
    add_run_arguments(run)
    add_build_options(run)
    run.set_defaults(run=_guarded(_run))
    return top


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return USAGE if exit_.code else OK
    try:
        return args.run(args)
    except KeyboardInterrupt:
        return USER_ERROR
    except BrokenPipeError:  # `tvms run ... | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return OK
    except Exception:  # noqa: BLE001 - the one place internal errors become exit code 3
        if args.traceback:
            traceback.print_exc()
        else:
            print("tvms: internal error (run with --traceback for details)", file=sys.stderr)
        return INTERNAL
